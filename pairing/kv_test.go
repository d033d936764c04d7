package pairing_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/pairing"
)

func round(n int, tables ...int) pairing.Round {
	r := pairing.Round{Info: pairing.Info{Tournament: "T", Round: n}}
	for _, t := range tables {
		r.Games = append(r.Games, pairing.Game{Table: t,
			Black: pairing.Player{Name: fmt.Sprintf("b%d.%d", n, t)}, White: pairing.Player{Name: fmt.Sprintf("w%d.%d", n, t)}})
	}
	return r
}

// TestApplyReplacesRound: a round applied to a real bucket gives each mapped port
// its game, lists the table without a port, and a second round takes the first's
// games off the ports it does not pair; a follower sees each change.
func TestApplyReplacesRound(t *testing.T) {
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true})
	js, err := jetstream.New(b.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := pairing.Setup(ctx, js, "scoreboard", 1)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	ready := false
	fctx, fstop := context.WithCancel(ctx)
	defer fstop()
	go func() {
		_ = pairing.Follow(fctx, kv, func(c pairing.Change) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case c.Ready:
				ready = true
			case c.Current == nil:
				seen[c.Key] = "-"
			default:
				seen[c.Key] = c.Current.Black.Name
			}
		})
	}()
	tables := map[int]string{1: "t1", 2: "t2"}
	rep, err := pairing.Apply(ctx, kv, round(1, 1, 2, 3), tables, []string{"t1", "t2", "t9"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Ports) != 2 || len(rep.NoPort) != 1 || rep.NoPort[0] != 3 || len(rep.Cleared) != 1 || rep.Cleared[0] != "t9" {
		t.Fatalf("report %+v", rep)
	}
	if c, ok, err := pairing.ForPort(ctx, kv, "t2"); err != nil || !ok || c.White.Name != "w1.2" || c.Round != 1 {
		t.Fatalf("t2: %+v %v %v", c, ok, err)
	}
	if _, ok, err := pairing.ForPort(ctx, kv, "t9"); err != nil || ok {
		t.Fatalf("t9 has a game: %v %v", ok, err)
	}
	if _, err := pairing.Apply(ctx, kv, round(2, 2), tables, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := pairing.ForPort(ctx, kv, "t1"); ok {
		t.Fatal("t1 still shows round 1's game after round 2 paired it nothing")
	}
	bustest.Wait(t, "the follower sees round 2", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return ready && seen["t1"] == "-" && seen["t2"] == "b2.2" && seen["t9"] == "-", fmt.Sprintf("ready %v, seen %v", ready, seen)
	})
}
