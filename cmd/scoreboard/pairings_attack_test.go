package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/pairing"
)

// TestPairingsToolAttack: a tool (no credentials, loopback) against a real daemon
// reads the pairings bucket, and may ask its load endpoint, but may not write the
// bucket nor the history's pairing subjects itself; every hostile request (not
// JSON, a control character in a name, a round too large, two games at a table, a
// bucket key of its own) gets its error and changes nothing; names in any script,
// markup included, are kept as text; the daemon goes on answering.
func TestPairingsToolAttack(t *testing.T) {
	proctest.SkipShort(t, "a daemon process attacked by a tool")
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	pt := runPTY(t)
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--state-dir", t.TempDir(), "--nats-listen", addr, "--http", "off",
		"--port", pt.Path, "--port-name", "t1", "--problem", "goscore", "--port-table", "7")
	run.WaitOutput("scoreboard running", 60*time.Second)
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	subject := pairing.LoadSubject("scoreboard")
	ask := func(data []byte) pairing.Report {
		t.Helper()
		m, err := nc.RequestWithContext(ctx, subject, data)
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		var r pairing.Report
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatalf("%q: %v", m.Data, err)
		}
		return r
	}
	load := func(r pairing.Round) []byte {
		data, _ := json.Marshal(pairing.Load{File: "x", Round: r})
		return data
	}
	g := func(table int, black string) pairing.Game {
		return pairing.Game{Table: table, Black: pairing.Player{Name: black}, White: pairing.Player{Name: "w"}}
	}
	markup := `<script>alert(1)</script> عبد الله 王`
	if r := ask(load(pairing.Round{Info: pairing.Info{Round: 1}, Games: []pairing.Game{g(7, markup), g(8, "x")}})); r.Error != "" || r.Ports[7] != "t1" || len(r.NoPort) != 1 {
		t.Fatalf("a good load: %+v", r)
	}
	big := pairing.Round{Info: pairing.Info{Round: 2}}
	for i := range pairing.MaxGames + 1 {
		big.Games = append(big.Games, g(i+1, "b"))
	}
	for _, c := range []struct {
		what string
		data []byte
		want string
	}{
		{"not JSON", []byte("{\x00"), "no pairings load"},
		{"a control character", load(pairing.Round{Info: pairing.Info{Round: 2}, Games: []pairing.Game{g(7, "a\x1b[2J")}}), "control character"},
		{"two games at a table", load(pairing.Round{Info: pairing.Info{Round: 2}, Games: []pairing.Game{g(7, "a"), g(7, "b")}}), "table 7 has two games"},
		{"no games", load(pairing.Round{Info: pairing.Info{Round: 2}}), "round 2 has no games"},
		{"too many games", load(big), "over 5000"},
		{"a negative table", load(pairing.Round{Info: pairing.Info{Round: 2}, Games: []pairing.Game{g(-1, "a")}}), "table -1"},
	} {
		if r := ask(c.data); !strings.Contains(r.Error, c.want) {
			t.Errorf("%s: report %+v, want an error saying %q", c.what, r, c.want)
		}
	}
	js := historyJetStream(t, "nats://"+addr)
	kv, err := js.KeyValue(ctx, pairing.Bucket("scoreboard"))
	if err != nil {
		t.Fatalf("a tool's pairings bucket: %v", err)
	}
	c, ok, err := pairing.ForPort(ctx, kv, "t1")
	if err != nil || !ok || c.Round != 1 || c.Black.Name != markup {
		t.Fatalf("t1 after the attacks: %+v %v %v", c, ok, err)
	}
	for _, a := range []struct {
		what string
		do   func(context.Context) error
	}{
		{"put a key", func(ctx context.Context) error { _, err := kv.Put(ctx, "t1", []byte(`{"round":9}`)); return err }},
		{"delete a key", func(ctx context.Context) error { return kv.Delete(ctx, "t1") }},
		{"delete the bucket", func(ctx context.Context) error { return js.DeleteKeyValue(ctx, pairing.Bucket("scoreboard")) }},
		{"publish on the history's pairing subject", func(ctx context.Context) error {
			_, err := js.Publish(ctx, pairing.Subject("scoreboard", "t1"), []byte(`{"round":9}`))
			return err
		}},
	} {
		sctx, scancel := context.WithTimeout(ctx, time.Second)
		if err := a.do(sctx); err == nil {
			t.Errorf("a tool could %s", a.what)
		}
		scancel()
	}
	if c, ok, err := pairing.ForPort(ctx, kv, "t1"); err != nil || !ok || c.Round != 1 {
		t.Fatalf("t1 after the tool's writes: %+v %v %v", c, ok, err)
	}
}
