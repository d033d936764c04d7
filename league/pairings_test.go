package league_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/pairing"
)

func pairingRound(n int, names ...string) pairing.Round {
	r := pairing.Round{Info: pairing.Info{Tournament: "League", Round: n}}
	for i := 0; i+1 < len(names); i += 2 {
		r.Games = append(r.Games, pairing.Game{Table: i/2 + 1, Black: pairing.Player{Name: names[i]}, White: pairing.Player{Name: names[i+1]}})
	}
	return r
}

// hubGame is the black player on key in the hub's bucket, "-" for none.
func hubGame(t *testing.T, kv jetstream.KeyValue, key string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, ok, err := pairing.ForPort(ctx, kv, key)
	switch {
	case err != nil:
		return "error: " + err.Error()
	case !ok:
		return "-"
	}
	return fmt.Sprintf("%d %s", c.Round, c.Black.Name)
}

// TestLeaguePairings: a club's own load (its bucket, as its daemon writes it)
// reaches the hub's LEAGUE_PAIRINGS over the club's link, through the hub's
// sourcing of its history and nothing else; the organiser's load at the hub, a
// tool's request, maps the tables of the hub's file to club.port and replaces
// it; a later club load wins its own port again; a club's value that is no
// game is junk, not shown.
func TestLeaguePairings(t *testing.T) {
	h := startHub(t, league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"})
	h.SetTables(map[int]string{1: "north.t1", 2: "south.t1"})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = h.RunBoards(ctx) })
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	startClub(t, h.LeafURL(), "south", "ts")
	bustest.Wait(t, "both links up", func() (bool, string) {
		l := h.Links()
		return l["north"] && l["south"], fmt.Sprintf("links %v", l)
	})
	js, _ := jetstream.New(h.Conn())
	var kv jetstream.KeyValue
	bustest.Wait(t, "the hub's bucket", func() (bool, string) {
		var err error
		kv, err = js.KeyValue(ctx, league.PairingsBucket)
		return err == nil, fmt.Sprint(err)
	})
	njs, _ := jetstream.New(north)
	nkv, err := njs.KeyValue(ctx, pairing.Bucket(bus.DefaultPrefix))
	if err != nil {
		t.Fatal(err)
	}

	// The club's own load.
	if _, err := pairing.Apply(ctx, nkv, pairingRound(1, "Ana", "Bo"), map[int]string{1: "t1"}, []string{"t1", "t2"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "north's own round at the hub", func() (bool, string) {
		a, b := hubGame(t, kv, "north.t1"), hubGame(t, kv, "north.t2")
		return a == "1 Ana" && b == "-", fmt.Sprintf("north.t1 %q, north.t2 %q", a, b)
	})

	// The organiser's load, as a tool of the hub asks it.
	tool, err := nats.Connect(h.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	rep, err := pairing.Request(ctx, tool, pairing.LoadSubject(pairing.HubPrefix),
		pairing.Load{File: "league.xml", Round: pairingRound(2, "Cy", "Di", "Ed", "Fa", "Gu", "Ho")}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ports[1] != "north.t1" || rep.Ports[2] != "south.t1" || len(rep.NoPort) != 1 || rep.NoPort[0] != 3 {
		t.Fatalf("report %+v", rep)
	}
	if a, b, c := hubGame(t, kv, "north.t1"), hubGame(t, kv, "south.t1"), hubGame(t, kv, "north.t2"); a != "2 Cy" || b != "2 Ed" || c != "-" {
		t.Fatalf("after the organiser's load: north.t1 %q, south.t1 %q, north.t2 %q", a, b, c)
	}

	// A club's later load wins its port.
	if _, err := pairing.Apply(ctx, nkv, pairingRound(3, "Io", "Ju"), map[int]string{1: "t1"}, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "north's later round at the hub", func() (bool, string) {
		a, b := hubGame(t, kv, "north.t1"), hubGame(t, kv, "south.t1")
		return a == "3 Io" && b == "2 Ed", fmt.Sprintf("north.t1 %q, south.t1 %q", a, b)
	})

	// A club's value that is no game.
	if _, err := nkv.Put(ctx, "t3", []byte(`{"round":1,"table":1,"black":{"name":"`+string(make([]byte, 300))+`"}}`)); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "north's bad pairing counted", func() (bool, string) {
		n := h.Junk()[league.JunkKey{Club: "north", Reason: "bad_pairing"}]
		return n == 1, fmt.Sprintf("junk %v", h.Junk())
	})
	if c := hubGame(t, kv, "north.t3"); c != "-" {
		t.Fatalf("north.t3 shows %q", c)
	}

	// A tool may not write the hub's bucket itself.
	tjs, _ := jetstream.New(tool)
	if _, err := tjs.Publish(ctx, "$KV."+league.PairingsBucket+".north.t1", []byte(`{}`)); err == nil {
		t.Fatal("a hub tool wrote LEAGUE_PAIRINGS")
	}
}
