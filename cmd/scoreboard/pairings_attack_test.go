package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/pairing"
)

// TestPairingsToolAttack: the organiser (its password, loopback) against a real
// daemon: every hostile request (not JSON, a control character in a name, a round
// too large, two games at a table, a bucket key of its own) gets its error and
// changes nothing; names in any script, markup included, are kept as text; the
// daemon goes on answering. A tool (no credentials) reads the pairings bucket, but
// may not write the bucket nor the history's pairing subjects itself (nor ask for
// a load: TestOrganiserToolCannotLoad).
func TestPairingsToolAttack(t *testing.T) {
	proctest.SkipShort(t, "a daemon process attacked by a tool")
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	pt := runPTY(t)
	state := t.TempDir()
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--state-dir", state, "--nats-listen", addr, "--http", "off",
		"--port", pt.Path, "--port-name", "t1", "--problem", "goscore", "--port-table", "7")
	run.WaitOutput("scoreboard running", 60*time.Second)
	nc, err := nats.Connect("nats://"+addr, asOrganiser(t, state))
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

// TestPairingsBucketRefused: a server where the pairings bucket cannot be made (a
// stream of its name in memory is there, which cannot be made a file one) runs the
// daemon with its history and its workers, without players, saying so once; a
// load gets no answer.
func TestPairingsBucketRefused(t *testing.T) {
	proctest.SkipShort(t, "a nats-server and a daemon process")
	ns := proctest.StartNATS(t, proctest.NATSOptions{JetStream: true})
	js := historyJetStream(t, ns.URL())
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "KV_" + pairing.Bucket("scoreboard"), Subjects: []string{"other.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", ns.URL(), "--http", "off")
	run.WaitOutput("scoreboard running", 60*time.Second)
	run.WaitOutput("pairings are OFF", 10*time.Second)
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	if code, out, errs := runLocked(t, string(in), "send", "--nats-url", ns.URL(), "--port-name", "ext", "goscore"); code != 0 || out != string(want) {
		t.Fatalf("send: exit %d, %q: %s", code, out, errs)
	}
	if _, err := js.Stream(t.Context(), "SCOREBOARD"); err != nil {
		t.Fatalf("the history without the pairings: %v", err)
	}
	// This server takes any credentials: the organiser's user and a password.
	if code, out := pairingsLoad(t, proctest.Scoreboard(t), "--nats-url", ns.URL(), "--nats-user", "organiser", "--nats-password", "any",
		"--timeout", "2s", "../../pairing/testdata/round.csv"); code == 0 ||
		!strings.Contains(out, "no daemon answers on scoreboard.pairings.load") {
		t.Fatalf("a load without the bucket: exit %d: %s", code, out)
	}
}
