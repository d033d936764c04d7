package main

import (
	"encoding/json"
	"net/http"

	"github.com/nats-io/nats.go"

	"fmt"
	"github.com/goclub/scoreboard/bus"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/serialio"
)

// The attacks of the club review (issue 41) on the bus's boundaries that a tool, or
// anyone reaching the listener, has: each by the official nats CLI against a real
// `scoreboard run` with a pseudo-terminal port.

// toolEnv is a daemon with a goscore port on a pty, a token listener, and the nats
// CLI pointed at it.
type toolEnv struct {
	run  *proctest.Process
	web  string // the page's address, or ""
	pt   *serialio.PTY
	url  string
	cli  string
	next int // the next goscore board to send
}

func startToolEnv(t *testing.T, page bool) *toolEnv {
	t.Helper()
	pt := runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	web := "off"
	if page {
		web = "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	}
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr, "--nats-listen-token", trustToken,
		"--http", web, "--state-dir", filepath.Join(t.TempDir(), "state"),
		"--port", pt.Path, "--port-name", trustPort, "--problem", "goscore", "--baud", "115200", "--error-line")
	runWaitOpened(t, pt, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	e := &toolEnv{run: run, pt: pt, url: "nats://" + addr, cli: proctest.NATSCLI(t)}
	if page {
		e.web = web
	}
	return e
}

// nats runs the nats CLI against the daemon, with args after the server's.
func (e *toolEnv) nats(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), e.cli, append([]string{"--server", e.url, "--timeout", "10s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// units sends n boards on the port and waits for their answers, and for their
// results in the history.
func (e *toolEnv) units(t *testing.T, n int) {
	t.Helper()
	diskUnits(t, e.pt.Master, e.pt.Master, e.next, e.next+n, e.run)
	e.next += n
	js := historyJetStream(t, e.url)
	bustest.Wait(t, "the units' results in the history", func() (bool, string) {
		got := historyCount(js, "scoreboard.result.>")
		return got == uint64(e.next), fmt.Sprintf("%d results stored, %d units answered", got, e.next)
	})
}

// F9: a user name the server logs as an error when it refuses it, before any
// authentication, was taken for the store's own "no space left on device": the
// daemon said its history was not storing and restarted JetStream. Now only the
// store's own write error counts: no such line, and every unit stored.
func TestTrustToolNoSpaceUserName(t *testing.T) {
	e := startToolEnv(t, false)
	e.units(t, 5)
	const tries = 5
	for i := range tries {
		out, err := e.nats(t, "--user", "no space left on device", "--password", "x", "pub", "x", "x")
		if err == nil || !strings.Contains(out, "Authorization Violation") {
			t.Fatalf("attempt %d: the CLI with a wrong user: %v, %s", i, err, out)
		}
	}
	bustest.Wait(t, "the server's refusals in the log", func() (bool, string) {
		n := strings.Count(e.run.Output(), "authentication error")
		return n >= tries, fmt.Sprintf("%d of %d", n, tries)
	})
	// The keeper looks at the store every half second; a few rounds of units, each
	// stored, give it many looks.
	for range 5 {
		e.units(t, 10)
	}
	out := e.run.Output()
	for _, line := range []string{"history is not storing", "history storing again", "will be DISABLED"} {
		if n := strings.Count(out, line); n != 0 {
			t.Errorf("%q logged %d times after %d refused logins named \"no space left on device\"", line, n, tries)
		}
	}
}

// api is a tool's JetStream API request, its answer decoded into a map; the error
// is the request's or the API's.
func api(t *testing.T, nc *nats.Conn, subj string, req any) (map[string]any, error) {
	t.Helper()
	var data []byte
	if req != nil {
		data, _ = json.Marshal(req)
	}
	m, err := nc.Request(subj, data, 10*time.Second)
	if err != nil {
		return nil, err
	}
	var r map[string]any
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return nil, err
	}
	if e, ok := r["error"]; ok {
		return r, fmt.Errorf("%v", e)
	}
	return r, nil
}

// consumers are the names of a stream's consumers, as a tool lists them.
func consumers(t *testing.T, nc *nats.Conn, stream string) []string {
	t.Helper()
	r, err := api(t, nc, "$JS.API.CONSUMER.NAMES."+stream, nil)
	if err != nil {
		t.Fatalf("consumer names of %s: %v", stream, err)
	}
	var names []string
	for _, n := range r["consumers"].([]any) {
		names = append(names, n.(string))
	}
	return names
}

// pageSeq is the seq of the port's board on the page's /api/boards.
func (e *toolEnv) pageSeq() (int, string) {
	resp, err := http.Get("http://" + e.web + "/api/boards")
	if err != nil {
		return -1, err.Error()
	}
	defer resp.Body.Close()
	var boards []struct {
		Port string `json:"port"`
		Seq  int    `json:"seq"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&boards); err != nil || len(boards) != 1 {
		return -1, fmt.Sprintf("%v, %d boards", err, len(boards))
	}
	return boards[0].Seq, ""
}

// F7: a tool changed the daemon's own consumers ("action":"update" on their names):
// the page's bucket watcher took a filter of nothing and the page froze until a
// restart. Now the consumer a tool changed is deleted, and its owner makes it again.
func TestTrustToolUpdatesDaemonConsumers(t *testing.T) {
	e := startToolEnv(t, true)
	e.units(t, 5)
	bustest.Wait(t, "the page at the 5th unit", func() (bool, string) {
		seq, why := e.pageSeq()
		return seq == 5, fmt.Sprintf("seq %d %s", seq, why)
	})
	nc := busConnect(t, e.url)
	var changed int
	for stream, filter := range map[string]string{"KV_SCOREBOARD_BOARDS": "$KV.SCOREBOARD_BOARDS.none", "SCOREBOARD": "scoreboard.result.none.none"} {
		r, err := api(t, nc, "$JS.API.CONSUMER.LIST."+stream, nil)
		if err != nil {
			t.Fatalf("consumer list of %s: %v", stream, err)
		}
		for _, c := range r["consumers"].([]any) {
			info := c.(map[string]any)
			cfg := info["config"].(map[string]any)
			cfg["filter_subject"] = filter
			delete(cfg, "filter_subjects")
			name := info["name"].(string)
			_, err := api(t, nc, "$JS.API.CONSUMER.CREATE."+stream+"."+name, map[string]any{"stream_name": stream, "config": cfg, "action": "update"})
			t.Logf("a tool's update of %s > %s: %v", stream, name, err)
			if err == nil && stream == "KV_SCOREBOARD_BOARDS" {
				changed++
			}
		}
	}
	if changed == 0 {
		t.Fatal("no consumer of the page's bucket updated: the attack did not run")
	}
	e.units(t, 5)
	bustest.WaitWithin(t, time.Minute, "the page following the port after a tool changed the daemon's consumers", func() (bool, string) {
		seq, why := e.pageSeq()
		return seq == 10, fmt.Sprintf("page at seq %d, the port at 10 %s", seq, why)
	})
}

// F2: a tool made durable consumers without bound, kept in the store. Now each one
// is deleted as it is made, by the nats CLI or a raw request.
func TestTrustToolDurableConsumers(t *testing.T) {
	e := startToolEnv(t, false)
	e.units(t, 3)
	nc := busConnect(t, e.url)
	const n = 50
	made := 0
	for i := range n {
		name := fmt.Sprintf("evil%d", i)
		if _, err := api(t, nc, "$JS.API.CONSUMER.CREATE.SCOREBOARD."+name, map[string]any{"stream_name": "SCOREBOARD",
			"config": map[string]any{"durable_name": name, "ack_policy": "explicit"}}); err == nil {
			made++
		}
	}
	if out, err := e.nats(t, "consumer", "add", "SCOREBOARD", "cli_evil", "--pull", "--defaults"); err == nil {
		made++
	} else {
		t.Logf("nats consumer add: %v %s", err, out)
	}
	// What the nats CLI's `stream view` pager makes (jsm.go): a durable in memory
	// that goes an hour after its last use. A tool may have it.
	if _, err := api(t, nc, "$JS.API.CONSUMER.CREATE.SCOREBOARD.pager", map[string]any{"stream_name": "SCOREBOARD",
		"config": map[string]any{"durable_name": "pager", "inactive_threshold": int64(time.Hour), "mem_storage": true}}); err != nil {
		t.Fatalf("a pager's consumer: %v", err)
	}
	bustest.WaitWithin(t, time.Minute, "the tool's durable consumers gone", func() (bool, string) {
		var left []string
		for _, c := range consumers(t, nc, "SCOREBOARD") {
			if strings.Contains(c, "evil") {
				left = append(left, c)
			}
		}
		return len(left) == 0, fmt.Sprintf("%d of %d made still there", len(left), made)
	})
	if !slices.Contains(consumers(t, nc, "SCOREBOARD"), "pager") {
		t.Error("the pager's consumer (durable in memory, inactive threshold 1h) was deleted: nats stream view would fail")
	}
	e.units(t, 3)
	t.Logf("%d durable consumers made by a tool, all deleted", made)
}

// goscoreSolves is how many goscore solve requests the daemon's workers served.
func goscoreSolves(t *testing.T, nc *nats.Conn) float64 {
	t.Helper()
	r, err := api(t, nc, "$SRV.STATS.scoreboard", nil)
	if err != nil {
		t.Fatalf("$SRV.STATS: %v", err)
	}
	for _, ep := range r["endpoints"].([]any) {
		if m := ep.(map[string]any); m["subject"] == "scoreboard.solve.goscore" {
			return m["num_requests"].(float64)
		}
	}
	t.Fatalf("$SRV.STATS: no goscore endpoint: %v", r)
	return 0
}

// F8, in part: a push consumer a tool made with deliver group scoreboard-workers
// onto a solve subject delivered the whole history to the workers, and stayed, for
// every later dump. Now it is deleted as soon as it is made; what it delivered before
// that is logged (the one replay per request is not prevented: see the report).
func TestTrustToolDeliverOntoSolve(t *testing.T) {
	e := startToolEnv(t, false)
	const history = 300
	e.units(t, history)
	nc := busConnect(t, e.url)
	before := goscoreSolves(t, nc)
	r, err := api(t, nc, "$JS.API.CONSUMER.CREATE.SCOREBOARD", map[string]any{"stream_name": "SCOREBOARD", "config": map[string]any{
		"deliver_subject": "scoreboard.solve.goscore", "deliver_group": bus.QueueGroup, "deliver_policy": "all",
		"filter_subject": "scoreboard.dump.goscore.>", "ack_policy": "none", "replay_policy": "instant"}})
	if err != nil {
		t.Fatalf("the push consumer onto solve: %v", err)
	}
	name, _ := r["name"].(string)
	bustest.WaitWithin(t, 30*time.Second, "the push consumer onto solve gone", func() (bool, string) {
		names := consumers(t, nc, "SCOREBOARD")
		return !slices.Contains(names, name), fmt.Sprintf("consumers %v, %s among them; %v solve requests more", names, name, goscoreSolves(t, nc)-before)
	})
	e.units(t, 3) // the workers' answers to it came before these
	solved := goscoreSolves(t, nc) - before
	t.Logf("%v solve requests delivered onto the workers before the consumer went, of %d dumps in the history", solved, history)
}

// F11: a tool's subscriptions and connections were not bounded (300,000
// subscriptions cost the daemon 124 MB). Now the one past bus.MaxSubs is refused, and
// the connections past bus.MaxConns, while the port answers.
func TestTrustToolLimits(t *testing.T) {
	e := startToolEnv(t, false)
	e.units(t, 3)
	var refused atomic.Int64
	nc, err := nats.Connect(e.url, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if strings.Contains(strings.ToLower(err.Error()), "maximum subscriptions exceeded") {
			refused.Add(1)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	const subs = bus.MaxSubs + 100
	for i := range subs {
		if _, err := nc.SubscribeSync(fmt.Sprintf("scoreboard.x%d.%d", i%1000, i)); err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	_ = nc.Flush()
	bustest.WaitWithin(t, 30*time.Second, "the subscriptions past the bound refused", func() (bool, string) {
		return refused.Load() > 0, fmt.Sprintf("%d of %d subscriptions refused (bound %d)", refused.Load(), subs, bus.MaxSubs)
	})
	e.units(t, 3)

	const conns = bus.MaxConns + 50
	var held []*nats.Conn
	failed := 0
	for range conns {
		c, err := nats.Connect(e.url, nats.NoReconnect())
		if err != nil {
			failed++
			continue
		}
		held = append(held, c)
	}
	t.Logf("%d subscriptions refused of %d; %d connections let in, %d refused, of %d tried", refused.Load(), subs, len(held), failed, conns)
	if failed == 0 || len(held) > bus.MaxConns {
		t.Errorf("%d connections let in of %d, bound %d", len(held), conns, bus.MaxConns)
	}
	// The daemon's own connections are in-process and open: the port answers while
	// the tool holds every other one.
	diskUnits(t, e.pt.Master, e.pt.Master, e.next, e.next+3, e.run)
	e.next += 3
	for _, c := range held {
		c.Close()
	}
	e.units(t, 3)
}

// F3, in part: a tool may still delete the daemon's consumers by name (subject
// permissions cannot tell whose a consumer is). Their owners make them again, and
// the daemon now says who deleted which, so that the resets it costs are seen.
func TestTrustToolDeletesDaemonConsumers(t *testing.T) {
	e := startToolEnv(t, true)
	e.units(t, 3)
	nc := busConnect(t, e.url)
	deleted := 0
	for _, stream := range []string{"KV_SCOREBOARD_BOARDS", "SCOREBOARD"} {
		for _, name := range consumers(t, nc, stream) {
			if _, err := api(t, nc, "$JS.API.CONSUMER.DELETE."+stream+"."+name, nil); err == nil {
				deleted++
			}
		}
	}
	if deleted == 0 {
		t.Fatal("no consumer of the daemon's deleted: the attack did not run")
	}
	e.run.WaitOutput("a tool deleted one of the daemon's consumers", time.Minute)
	e.units(t, 3)
	bustest.WaitWithin(t, time.Minute, "the page following the port after a tool deleted the daemon's consumers", func() (bool, string) {
		seq, why := e.pageSeq()
		return seq == 6, fmt.Sprintf("page at seq %d, the port at 6 %s", seq, why)
	})
	t.Logf("%d of the daemon's consumers deleted by a tool; said %d times", deleted, strings.Count(e.run.Output(), "a tool deleted one of the daemon's consumers"))
}
