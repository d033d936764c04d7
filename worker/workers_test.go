package worker_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/worker"
)

func TestMain(m *testing.M) { proctest.Main(m) }

// sample returns a seed sample's input and expected output.
func sample(t testing.TB, file string) (in, out []byte) {
	t.Helper()
	return samples.Pair(t, samples.Case{File: file})
}

// The same suite runs on a connection in-process to the embedded server, and on one
// through its loopback listener.
func TestEmbeddedInProcess(t *testing.T) {
	srv := bustest.Start(t, bustest.Options{Off: true})
	if url := srv.ClientURL(); url != "" {
		t.Errorf("ClientURL with the listener off = %q, want none", url)
	}
	nc := srv.Daemon()
	busSuite(t, nc, nc)
}

func TestEmbeddedLoopback(t *testing.T) {
	srv := bustest.Start(t, bustest.Options{})
	url := srv.ClientURL()
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("ClientURL = %q, want a loopback URL", url)
	}
	// The workers are in-process, as in the daemon; the client comes over TCP.
	workersConn := srv.Daemon()
	client := bustest.Connect(t, bus.ConnOptions{URL: url})
	busSuite(t, workersConn, client)
}

func busSuite(t *testing.T, workersConn, nc *nats.Conn) {
	w := bustest.StartWorkers(t, workersConn, worker.Options{Version: "v1.2.3"}, bustest.Logger(t))
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}

	t.Run("solve samples", func(t *testing.T) {
		for _, c := range samples.Cases {
			in, want := samples.Pair(t, c)
			msg, err := nc.Request(subj.Solve(c.Problem), in, 10*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", c.File, err)
			}
			if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
				t.Fatalf("%s: error %s %s", c.File, code, msg.Header.Get(micro.ErrorHeader))
			}
			if string(msg.Data) != string(want) {
				t.Errorf("%s: got %q, want %q", c.File, msg.Data, want)
			}
		}
	})

	t.Run("solve bad input", func(t *testing.T) {
		in, want := sample(t, "goscore")
		// A board whose fourth row (line 5 of the input) is garbage, then the sample.
		board := strings.Split(string(in), "\n")[:20]
		board[4] = "garbage"
		bad := strings.Join(board, "\n") + "\n"
		msg, err := nc.Request(subj.Solve("goscore"), []byte(bad+string(in)), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if code := msg.Header.Get(micro.ErrorCodeHeader); code != "400" {
			t.Fatalf("error code %q, want 400", code)
		}
		if desc := msg.Header.Get(micro.ErrorHeader); !strings.Contains(desc, "line 5") {
			t.Errorf("error %q does not name line 5", desc)
		}
		// The good boards after the bad one are still answered.
		if string(msg.Data) != string(want) {
			t.Errorf("body %q, want the good boards' answers %q", msg.Data, want)
		}
	})

	t.Run("monitoring", func(t *testing.T) {
		// Every process is one instance, its solve endpoints' and its dumps'.
		pings := proctest.Gather(t, nc, "$SRV.PING.scoreboard", 1, 10*time.Second)
		if len(pings) != 1 {
			t.Fatalf("%d instances answered $SRV.PING.scoreboard, want 1: %q", len(pings), pings)
		}
		var ping micro.Ping
		if err := json.Unmarshal(pings[0], &ping); err != nil {
			t.Fatal(err)
		}
		if ping.Name != "scoreboard" || ping.Version != "1.2.3" || ping.Type != micro.PingResponseType || ping.ID != w.ID() {
			t.Errorf("PING = %+v; want instance %s", ping, w.ID())
		}
		var info micro.Info
		request(t, nc, "$SRV.INFO.scoreboard."+w.ID(), &info)
		names := engine.Names()
		if len(info.Endpoints) != len(names) {
			t.Fatalf("INFO lists %d endpoints, want %d: %+v", len(info.Endpoints), len(names), info.Endpoints)
		}
		for i, e := range info.Endpoints {
			if e.Name != names[i] || e.Subject != "scoreboard.solve."+names[i] || e.QueueGroup != bus.QueueGroup {
				t.Errorf("endpoint %d = %+v", i, e)
			}
		}
		// micro counts a request once its handler has returned, after the reply has
		// gone: the stats may trail the replies the subtests above already read.
		var goscore *micro.EndpointStats
		bustest.Wait(t, "goscore stats of 2 requests or more, 1 error or more", func() (bool, string) {
			var stats micro.Stats
			request(t, nc, "$SRV.STATS.scoreboard."+w.ID(), &stats)
			for _, e := range stats.Endpoints {
				if e.Name == "goscore" {
					goscore = e
				}
			}
			return goscore != nil && goscore.NumRequests >= 2 && goscore.NumErrors >= 1, fmt.Sprintf("goscore stats %+v", goscore)
		})
	})

	t.Run("dumps", func(t *testing.T) {
		in, _ := sample(t, "goscore")
		board := strings.Join(strings.Split(string(in), "\n")[:20], "\n") + "\n"
		results := make(chan *nats.Msg, 16)
		sub, err := nc.ChanSubscribe(subj.AllResults(), results)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}

		// From a port reader: headers, as a request.
		dump := nats.NewMsg(subj.Dump("goscore", "p1"))
		dump.Header.Set(bus.HeaderPort, "p1")
		dump.Header.Set(bus.HeaderSeq, "7")
		dump.Header.Set(bus.HeaderLine, "41")
		dump.Data = []byte(board)
		reply, err := nc.RequestMsg(dump, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := nextResult(t, results)
		if string(got.Data) != string(reply.Data) {
			t.Errorf("reply %s differs from the published result %s", reply.Data, got.Data)
		}
		if got.Subject != "scoreboard.result.goscore.p1" {
			t.Errorf("result on %s", got.Subject)
		}
		r := decode(t, got)
		if r.Problem != "goscore" || r.Port != "p1" || r.Seq != 7 || r.Line != 41 || r.Answer != "5 3\n" || r.Worker != w.ID() || r.SolveMicros <= 0 {
			t.Errorf("result %+v", r)
		}
		var raw map[string]any
		_ = json.Unmarshal(got.Data, &raw)
		if _, has := raw["error"]; has {
			t.Errorf("a good result carries an error key: %s", got.Data)
		}
		if len(r.Result) == 0 || r.Result[0] != '{' {
			t.Errorf("structured answer %s, want an object", r.Result)
		}

		// By hand: no headers, no reply subject, no final newline.
		if err := nc.Publish(subj.Dump("goscore", "desk"), []byte(strings.TrimSuffix(board, "\n"))); err != nil {
			t.Fatal(err)
		}
		r = decode(t, nextResult(t, results))
		if r.Port != "desk" || r.Seq != 0 || r.Answer != "5 3\n" || r.Error != "" {
			t.Errorf("hand-published dump: result %+v", r)
		}

		// A bad unit: the error names the stream line, from the Line header.
		rows := strings.Split(board, "\n")
		rows[4] = "garbage"
		dump = nats.NewMsg(subj.Dump("goscore", "p1"))
		dump.Header.Set(bus.HeaderSeq, "8")
		dump.Header.Set(bus.HeaderLine, "101")
		dump.Data = []byte(strings.Join(rows, "\n"))
		if err := nc.PublishMsg(dump); err != nil {
			t.Fatal(err)
		}
		r = decode(t, nextResult(t, results))
		if r.Seq != 8 || r.Answer != "" || len(r.Result) != 0 || !strings.Contains(r.Error, "line 105") {
			t.Errorf("bad unit: result %+v, want an error naming line 105", r)
		}

		// A problem no worker serves is not taken: each problem has its own
		// subscription (so that a flood of one cannot make nats.go drop another's
		// dumps), and a request for one gets no responders at once.
		if _, err := nc.Request(subj.Dump("chess", "p1"), []byte("e4\n"), 5*time.Second); !errors.Is(err, nats.ErrNoResponders) {
			t.Errorf("a dump of an unknown problem as a request: %v, want no responders", err)
		}

		// The three dumps in goscore's endpoint's stats: a worker counts a dump
		// before it publishes the result, so the results read above are all in.
		var stats micro.Stats
		request(t, nc, "$SRV.STATS.scoreboard."+w.ID(), &stats)
		i := slices.IndexFunc(stats.Endpoints, func(e *micro.EndpointStats) bool { return e.Name == "goscore" })
		if i < 0 {
			t.Fatalf("no goscore endpoint in STATS: %+v", stats)
		}
		e := stats.Endpoints[i]
		var data worker.EndpointData
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatalf("goscore's stats data %s: %v", e.Data, err)
		}
		d := data.Dumps
		if d.ProcessingTime <= 0 || !strings.Contains(d.LastError, "line 105") ||
			d.DumpCounts != (worker.DumpCounts{Taken: 3, Solved: 2, Bad: 1}) || stats.Type != micro.StatsResponseType {
			t.Errorf("goscore's dumps in its stats: %s; want 3 taken, 2 solved, 1 bad (line 105), a processing time", e.Data)
		}
		for _, e := range stats.Endpoints {
			if e.Name != "goscore" && !strings.Contains(string(e.Data), `"taken":0,`) {
				t.Errorf("endpoint %s counts goscore's dumps: %s", e.Name, e.Data)
			}
		}
	})
}

func request(t *testing.T, nc *nats.Conn, subject string, v any) {
	t.Helper()
	msg, err := nc.Request(subject, nil, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	if err := json.Unmarshal(msg.Data, v); err != nil {
		t.Fatalf("%s: %v: %s", subject, err, msg.Data)
	}
}

func nextResult(t *testing.T, results chan *nats.Msg) *nats.Msg {
	t.Helper()
	select {
	case msg := <-results:
		return msg
	case <-time.After(10 * time.Second):
		t.Fatal("no result within 10s")
		return nil
	}
}

func decode(t *testing.T, msg *nats.Msg) result.Record {
	t.Helper()
	var r result.Record
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		t.Fatalf("result %s: %v", msg.Data, err)
	}
	return r
}

func TestPrefixAndStop(t *testing.T) {
	srv := bustest.Start(t, bustest.Options{Off: true})
	nc := srv.Daemon()
	w, err := worker.Start(nc, worker.Options{Prefix: "club.sb", Problems: []string{"goscore"}}, bustest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	in, want := sample(t, "goscore")
	msg, err := nc.Request("club.sb.solve.goscore", in, 10*time.Second)
	if err != nil || string(msg.Data) != string(want) {
		t.Fatalf("club.sb.solve.goscore: %q, %v", msg.Data, err)
	}
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := w.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := nc.Request("club.sb.solve.goscore", in, 2*time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("request after Stop: %v, want no responders", err)
	}
	for _, o := range []worker.Options{{Prefix: "Club"}, {Prefix: "a..b"}, {Problems: []string{"chess"}}} {
		if _, err := worker.Start(nc, o, bustest.Logger(t)); err == nil {
			t.Errorf("Start(%+v) accepted", o)
		}
	}
}

// The reconnect buffer: what the daemon publishes while its server is away is
// delivered once it is back, and answered by the workers on the same connection.
func TestDumpsSurviveShortDisconnect(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{})
	nc := bustest.Connect(t, bus.ConnOptions{URL: s.URL()})
	bustest.StartWorkers(t, nc, worker.Options{Problems: []string{"goscore"}}, bustest.Logger(t))
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	results := make(chan *nats.Msg, 64)
	if _, err := nc.ChanSubscribe(subj.Result("goscore", "p1"), results); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	in, _ := sample(t, "goscore")
	board := strings.Join(strings.Split(string(in), "\n")[:20], "\n") + "\n"

	s.Stop()
	bustest.Wait(t, "disconnect", func() (bool, string) { return !nc.IsConnected(), "status " + nc.Status().String() })
	const n = 20
	for seq := 1; seq <= n; seq++ {
		dump := nats.NewMsg(subj.Dump("goscore", "p1"))
		dump.Header.Set(bus.HeaderSeq, fmt.Sprint(seq))
		dump.Data = []byte(board)
		if err := nc.PublishMsg(dump); err != nil {
			t.Fatalf("publish while disconnected: %v", err)
		}
	}
	s.Start()
	seen := map[uint64]bool{}
	for len(seen) < n {
		r := decode(t, nextResult(t, results))
		if r.Answer != "5 3\n" {
			t.Errorf("result %+v", r)
		}
		seen[r.Seq] = true
	}
	if nc.Stats().Reconnects < 1 {
		t.Errorf("no reconnect counted")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 20s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A dump larger than its problem's largest unit gets an error result at once and is
// counted; the workers go on. Stopped with a backlog, the workers give every dump they
// took exactly one result: solved within the drain bound, or an error.
func TestWorkersOversizeAndStopBacklog(t *testing.T) {
	srv := bustest.Start(t, bustest.Options{Off: true})
	nc := srv.Daemon()
	client := srv.Daemon()
	w, err := worker.Start(nc, worker.Options{Concurrency: 1, Drain: 50 * time.Millisecond}, bustest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	goscore, _ := engine.Lookup("goscore")
	msg, err := client.Request("scoreboard.dump.goscore.hall", make([]byte, goscore.Limits().MaxUnit+1), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Record
	if err := json.Unmarshal(msg.Data, &r); err != nil || !strings.Contains(r.Error, "larger than the problem's largest unit") {
		t.Fatalf("oversize dump: result %s, %v", msg.Data, err)
	}
	if c := w.Counts(); c.Oversize != 1 || c.Taken != 1 {
		t.Fatalf("counts %+v, want 1 taken, 1 oversize", c)
	}

	// A backlog of capture dumps, more than one solver does in the drain bound.
	var unit strings.Builder
	unit.WriteString("300 25000\n")
	for i := range 25000 {
		fmt.Fprintf(&unit, "%d %d\n", i%300, i/300*3%300)
	}
	inbox := nats.NewInbox()
	replies := make(chan *nats.Msg, 1000)
	sub, err := client.ChanSubscribe(inbox, replies)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	const sent = 100
	for range sent {
		if err := client.PublishRequest("scoreboard.dump.capture.heavy", inbox, []byte(unit.String())); err != nil {
			t.Fatal(err)
		}
	}
	// Behind them in the same queue (no origin of their own), dumps from a publisher
	// that publishes each again when no answer comes (Scoreboard-Attempt): the stop
	// hands them back unanswered.
	const ported = 10
	portInbox := nats.NewInbox()
	portReplies := make(chan *nats.Msg, ported)
	psub, err := client.ChanSubscribe(portInbox+".*", portReplies)
	if err != nil {
		t.Fatal(err)
	}
	defer psub.Unsubscribe()
	for i := range ported {
		m := nats.NewMsg("scoreboard.dump.capture.heavy")
		m.Reply, m.Data = fmt.Sprintf("%s.%d", portInbox, i), []byte("5 1\n0 0\n")
		m.Header.Set(bus.HeaderSeq, strconv.Itoa(i+1))
		m.Header.Set(bus.HeaderAttempt, "1")
		if err := client.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.Flush(); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the workers taking every dump", func() (bool, string) {
		c := w.Counts()
		return c.Taken >= 1+sent+ported, fmt.Sprintf("the workers took %+v of %d dumps", c, 1+sent+ported)
	})
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	c := w.Counts()
	if err := client.Flush(); err != nil {
		t.Fatal(err)
	}
	got, stopping := 0, 0
	for got < sent {
		select {
		case m := <-replies:
			got++
			if strings.Contains(string(m.Data), "worker stopping") {
				stopping++
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d results for %d dumps; counts %+v", got, sent, c)
		}
	}
	t.Logf("counts: taken=%d solved=%d bad=%d stopping=%d shed=%d oversize=%d handed-back=%d port-replies=%d",
		c.Taken, c.Solved, c.Bad, c.Stopping, c.Shed, c.Oversize, c.HandedBack, len(portReplies))
	if c.Solved+c.Bad+c.Stopping+c.Shed+c.Oversize+c.HandedBack != c.Taken || c.Stopping == 0 || int64(stopping) != c.Stopping ||
		c.HandedBack != ported || len(portReplies) != 0 {
		t.Fatalf("counts %+v, %d error results for stopping, %d replies to the port's dumps; want every dump counted once, some stopped, the port's %d handed back unanswered",
			c, stopping, len(portReplies), ported)
	}
	select {
	case m := <-replies:
		t.Fatalf("a result more: %s", m.Data)
	case <-time.After(50 * time.Millisecond):
	}
}
