package daemon_test

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
)

// Under .ci/run's race stage, the fault tests wait for its load stage
// (proctest.LeaveToLoadStage).
func TestMain(m *testing.M) {
	proctest.LeaveToLoadStage()
	proctest.Main(m)
}

// A unit whose dump or result died with the server is published again as soon as the
// connection is back: with an hour's request timeout, only the reconnection can get
// it answered. The worker answers on the dump's reply subject, as real ones do, and
// shares the daemon's connection, whose subscriptions are sent again before anything
// else, so the dump published again finds it.
func TestFaultReconnectRepublishes(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{})
	nc, err := bus.Connect(bus.ConnOptions{URL: s.URL(), Name: t.Name()}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	// The first dump is swallowed, as if its result had died with the server.
	var dumps atomic.Int64
	swallowed := make(chan struct{})
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	sub, err := nc.QueueSubscribe(subj.AllDumps(), bus.QueueGroup, func(m *nats.Msg) {
		if dumps.Add(1) == 1 {
			close(swallowed)
			return
		}
		p, _ := engine.Lookup("goscore")
		out, err := p.Append(nil, m.Data)
		seq, _ := strconv.ParseUint(m.Header.Get(bus.HeaderSeq), 10, 64)
		res := result.Record{Problem: "goscore", Port: m.Header.Get(bus.HeaderPort), Seq: seq,
			Answer: string(out), Origin: m.Header.Get(bus.HeaderOrigin), UnitDigest: bus.UnitDigest(m.Data), Worker: "test"}
		if err != nil {
			res.Answer, res.Error = "", err.Error()
		}
		data, _ := json.Marshal(res)
		// The display takes its answers from the dump's reply subject only.
		_ = m.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	pt := newPTY(t)
	d := startDaemon(t, nc, daemon.Config{
		Ports:          []daemon.PortConfig{{Device: pt.Path, Problem: "goscore"}},
		RequestTimeout: time.Hour,
	})
	waitOpened(t, pt)
	b := board(3)
	if _, err := pt.Master.Write([]byte(b)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-swallowed:
	case <-time.After(long):
		t.Fatalf("no dump within %v; logs:\n%s", long, d.logs.String())
	}
	s.Kill()
	s.Start()
	want := goscoreAnswer(t, b)
	if got := readN(t, pt.Master, len(want)); string(got) != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
	d.logs.wait(t, 1, map[string]any{"message": "reconnected: publishing the dumps in flight again", "in_flight": float64(1)})
	if n := dumps.Load(); n != 2 {
		t.Errorf("%d dumps, want 2: the first and the one published at the reconnection", n)
	}
	d.stop(t)
}
