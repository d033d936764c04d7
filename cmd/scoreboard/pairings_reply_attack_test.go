package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/pairing"
)

// refusedLoads is the endpoint's sampled refusal line; in these tests there are
// fewer refusals than the sampler's burst, so each is a line.
const refusedLoads = "pairings load refused"

// streamLastSeq is stream's last sequence as client sees it: every write raises it.
func streamLastSeq(t *testing.T, nc *nats.Conn, stream string) uint64 {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	return s.CachedInfo().State.LastSeq
}

// jsAPI requests a JetStream API subject as client and fails the test on an API
// error: the routes below need the server's part done.
func jsAPI(t *testing.T, nc *nats.Conn, subject, body string) {
	t.Helper()
	m, err := nc.Request(subject, []byte(body), 30*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var r struct{ Error *struct{ Description string } }
	if json.Unmarshal(m.Data, &r) == nil && r.Error != nil {
		t.Fatalf("%s: %s", subject, r.Error.Description)
	}
}

// waitRefusedOrWritten waits until out shows n refused loads, or a write the
// attack must not make happened (then the assertions after it report it).
func waitRefusedOrWritten(t *testing.T, what string, out func() string, n int, written func() bool) {
	t.Helper()
	bustest.Wait(t, what, func() (bool, string) {
		got := strings.Count(out(), refusedLoads)
		return got >= n || written(), fmt.Sprintf("%d refused loads logged, want %d", got, n)
	})
	for _, l := range strings.Split(out(), "\n") {
		if strings.Contains(l, refusedLoads) {
			t.Log(l)
		}
	}
}

// jetStreamRoutes has JetStream deliver the last message of stream (filtered by
// filter) onto load, as a tool on nc may: a pull whose reply is load, and a push
// consumer delivering there (review F1).
func jetStreamRoutes(t *testing.T, nc *nats.Conn, stream, filter, load string) {
	t.Helper()
	cfg := func(name, deliver string) string {
		c := map[string]any{"name": name, "filter_subject": filter, "deliver_policy": "last", "ack_policy": "none",
			"inactive_threshold": int64(time.Minute)}
		if deliver != "" {
			c["deliver_subject"] = deliver
		}
		data, _ := json.Marshal(map[string]any{"stream_name": stream, "config": c})
		return string(data)
	}
	jsAPI(t, nc, "$JS.API.CONSUMER.CREATE."+stream+".evilpull."+filter, cfg("evilpull", ""))
	if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT."+stream+".evilpull", load, []byte(`{"batch":1}`)); err != nil {
		t.Fatal(err)
	}
	jsAPI(t, nc, "$JS.API.CONSUMER.CREATE."+stream+".evilpush."+filter, cfg("evilpush", load))
}

// TestPairingsLoadJetStreamAndReplyRoutes (review F1, F2 at a club): a real daemon's
// port reads a unit whose rows are a pairings load in JSON (anything a cable sends
// is kept in the history); a tool without credentials has JetStream deliver it onto
// the load subject, by a pull and by a push consumer; the organiser names the boards
// bucket, the repair and results subjects and the JetStream API as its load's reply.
// None of them writes the pairings or the boards, nor adds to the history; each is
// refused and logged; the organiser's load on an inbox is still answered.
func TestPairingsLoadJetStreamAndReplyRoutes(t *testing.T) {
	proctest.SkipShort(t, "a daemon process attacked through JetStream and reply subjects")
	d, pt := startOrganiserDaemon(t, "127.0.0.1", "worker-token-"+bus.NewOrigin())
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	load := pairing.LoadSubject(bus.DefaultPrefix)

	var unit strings.Builder
	unit.WriteString("\n{\n")
	for i := 1; i <= 13; i++ {
		fmt.Fprintf(&unit, "\"pad%d\":0,\n", i)
	}
	unit.WriteString("\"file\":\"from-the-port\",\n\"round\":{\"round\":4,\"tournament\":\"HACKED BY A TOOL\",\n" +
		"\"games\":[{\"table\":1,\"black\":{\"name\":\"Mallory\"},\n\"white\":{\"name\":\"Eve\"}}]}\n}\n")
	if _, err := pt.Master.Write([]byte(unit.String())); err != nil {
		t.Fatal(err)
	}
	tool, err := nats.Connect(d.url)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	js, _ := jetstream.New(tool)
	bustest.Wait(t, "the device's unit in the history", func() (bool, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, subj.Stream())
		if err != nil {
			return false, err.Error()
		}
		m, err := s.GetLastMsgForSubject(ctx, subj.Dump("goscore", "lobby"))
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(string(m.Data), "HACKED BY A TOOL"), string(m.Data)
	})

	pairings := "KV_" + subj.Pairings()
	boards := "KV_" + subj.Boards()
	before, boardsBefore := streamLastSeq(t, tool, pairings), streamLastSeq(t, tool, boards)
	historyBefore := streamLastSeq(t, tool, subj.Stream())
	written := func() bool {
		return streamLastSeq(t, tool, pairings) != before || streamLastSeq(t, tool, boards) != boardsBefore ||
			streamLastSeq(t, tool, subj.Stream()) != historyBefore
	}

	jetStreamRoutes(t, tool, subj.Stream(), subj.Dump("goscore", "lobby"), load)
	waitRefusedOrWritten(t, "the pull's delivery refused", d.run.Output, 1, written)
	// The daemon's guard deletes the push consumer, before or after JetStream
	// delivers: its delivery refused, or the guard's deletion, ends the wait.
	bustest.Wait(t, "the push consumer's delivery refused or the consumer deleted", func() (bool, string) {
		out := d.run.Output()
		n := strings.Count(out, refusedLoads)
		return n >= 2 || strings.Contains(out, "a tool's consumer deleted") || written(), fmt.Sprintf("%d refused loads logged", n)
	})
	if after := streamLastSeq(t, tool, pairings); after != before {
		e, _ := js.KeyValue(t.Context(), subj.Pairings())
		v, _ := e.Get(t.Context(), "lobby")
		got := ""
		if v != nil {
			got = string(v.Value())
		}
		t.Errorf("a tool had JetStream deliver the port's unit onto %s: the pairings bucket's revision went from %d to %d; lobby: %s", load, before, after, got)
	}

	org, err := nats.Connect(d.url, asOrganiser(t, d.state))
	if err != nil {
		t.Fatal(err)
	}
	defer org.Close()
	refusedSoFar := strings.Count(d.run.Output(), refusedLoads)
	forged := organiserLoad("Forged")
	replies := []string{
		"$KV." + subj.Boards() + ".lobby",
		"$KV." + subj.Pairings() + ".lobby",
		"scoreboard.repair.result.goscore.lobby",
		"scoreboard.repair.dump.goscore.ghost",
		"scoreboard.result.goscore.lobby",
		"$JS.API.STREAM.PURGE." + subj.Stream(),
		"_INBOX",
	}
	for _, r := range replies {
		if err := org.PublishRequest(load, r, forged); err != nil {
			t.Fatal(err)
		}
	}
	if err := org.Publish(load, forged); err != nil { // no reply at all
		t.Fatal(err)
	}
	waitRefusedOrWritten(t, "the organiser's loads with no inbox refused", d.run.Output, refusedSoFar+len(replies)+1, written)
	for _, c := range []struct {
		what   string
		stream string
		was    uint64
	}{{"the pairings bucket", pairings, before}, {"the boards bucket", boards, boardsBefore}, {"the history", subj.Stream(), historyBefore}} {
		if after := streamLastSeq(t, tool, c.stream); after != c.was {
			t.Errorf("loads answered on a subject no inbox: %s's revision went from %d to %d", c.what, c.was, after)
		}
	}

	bustest.Wait(t, "scoreboard_pairings_loads_refused_total", func() (bool, string) {
		refused := strings.Count(d.run.Output(), refusedLoads)
		resp, err := http.Get(d.page + "/metrics")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		n, ok := metric(string(page), "scoreboard_pairings_loads_refused_total")
		return ok && n == float64(refused), fmt.Sprintf("%v (found %v), %d refusals logged", n, ok, refused)
	})

	rep, err := pairing.Request(t.Context(), org, load, pairing.Load{File: "x", Round: pairing.Round{Info: pairing.Info{Round: 1},
		Games: []pairing.Game{{Table: 1, Black: pairing.Player{Name: "b"}, White: pairing.Player{Name: "w"}}}}}, 30*time.Second)
	if err != nil || rep.Ports[1] != "lobby" {
		t.Errorf("the organiser's load on its inbox: %+v, %v; want table 1 on lobby", rep, err)
	}
}

// TestHubPairingsLoadReplyRoutes (review F2 at a hub, and F1's routes there): a
// tool of a real hub, without credentials, names LEAGUE_BOARDS' and
// LEAGUE_PAIRINGS' subjects as its load's reply, and has JetStream deliver onto the
// load subject; neither bucket is written, each is refused and logged, and a load on
// the tool's inbox is still answered.
func TestHubPairingsLoadReplyRoutes(t *testing.T) {
	proctest.SkipShort(t, "a hub process attacked through reply subjects")
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	tools, leaf, web := proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\n"+
		"[[club]]\nname = \"south\"\ntoken = \"token-south\"\n[tables]\n1 = \"south.hall\"\n", tools, leaf, web, filepath.Join(root, "hub")), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	tool, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", tools))
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	load := pairing.LoadSubject(league.SubjectPrefix)
	round := pairing.Load{File: "legit", Round: pairing.Round{Info: pairing.Info{Round: 2},
		Games: []pairing.Game{{Table: 1, Black: pairing.Player{Name: "b"}, White: pairing.Player{Name: "w"}}}}}
	bustest.Wait(t, "the organiser's load at the hub", func() (bool, string) {
		rep, err := pairing.Request(t.Context(), tool, load, round, 10*time.Second)
		return err == nil && rep.Error == "", fmt.Sprintf("%+v, %v", rep, err)
	})
	hsubj := bus.Subjects{Prefix: league.SubjectPrefix}
	pairings, boards := "KV_"+league.PairingsBucket, "KV_"+hsubj.Boards()
	before, boardsBefore := streamLastSeq(t, tool, pairings), streamLastSeq(t, tool, boards)
	written := func() bool {
		return streamLastSeq(t, tool, pairings) != before || streamLastSeq(t, tool, boards) != boardsBefore
	}
	forged, _ := json.Marshal(pairing.Load{File: "FORGED BY A HUB TOOL", Round: pairing.Round{Info: pairing.Info{Round: 3},
		Games: []pairing.Game{{Table: 1, Black: pairing.Player{Name: "Mallory"}, White: pairing.Player{Name: "Eve"}}}}})
	replies := []string{"$KV." + hsubj.Boards() + ".south.hall", "$KV." + league.PairingsBucket + ".south.hall"}
	for _, r := range replies {
		if err := tool.PublishRequest(load, r, forged); err != nil {
			t.Fatal(err)
		}
	}
	waitRefusedOrWritten(t, "the tool's loads with no inbox refused", hub.Output, len(replies), written)
	jetStreamRoutes(t, tool, pairings, "$KV."+league.PairingsBucket+".>", load)
	waitRefusedOrWritten(t, "the pull's and the push consumer's deliveries refused", hub.Output, len(replies)+2, written)
	for _, c := range []struct {
		what   string
		stream string
		was    uint64
	}{{"LEAGUE_PAIRINGS", pairings, before}, {"LEAGUE_BOARDS", boards, boardsBefore}} {
		if after := streamLastSeq(t, tool, c.stream); after != c.was {
			t.Errorf("a hub tool's loads answered on a subject no inbox: %s's revision went from %d to %d", c.what, c.was, after)
		}
	}
	if n := strings.Count(hub.Output(), refusedLoads); n < len(replies)+2 {
		t.Errorf("the hub logged %d refused loads; want %d (two replies, a pull, a push)", n, len(replies)+2)
	}
	if rep, err := pairing.Request(t.Context(), tool, load, round, 30*time.Second); err != nil || rep.Error != "" {
		t.Errorf("the organiser's load on its inbox after the attack: %+v, %v", rep, err)
	}
	bustest.Wait(t, "scoreboard_league_pairings_loads_refused_total", func() (bool, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", web))
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		// The push consumer delivers the legitimate load's new value too, refused.
		n, ok := metric(string(page), "scoreboard_league_pairings_loads_refused_total")
		logged := strings.Count(hub.Output(), refusedLoads)
		return ok && n >= float64(len(replies)+2) && n == float64(logged), fmt.Sprintf("%v (found %v), %d logged, want %d or more", n, ok, logged, len(replies)+2)
	})
}
