package history_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/result"
)

// bucketRecord is what the test reads of a bucket's value.
type bucketRecord struct {
	Seq       uint64 `json:"seq"`
	StreamSeq uint64 `json:"stream_seq"`
	Unit      string `json:"unit"`
	Answer    string `json:"answer"`
}

// bucketMatchesStream says whether each port's value is the stream's latest result
// of the port (its last unit's, of its one publisher), and how they differ if not.
func (e *env) bucketMatchesStream(t *testing.T, n int, ports ...string) (bool, string) {
	t.Helper()
	ctx := context.Background()
	s, err := e.js.Stream(ctx, "SCOREBOARD")
	if err != nil {
		return false, err.Error()
	}
	for _, port := range ports {
		last, err := s.GetLastMsgForSubject(ctx, "scoreboard.result.goscore."+port)
		if err != nil {
			return false, port + ": stream: " + err.Error()
		}
		v, err := e.kv.Get(ctx, port)
		if err != nil {
			return false, port + ": bucket: " + err.Error()
		}
		var got bucketRecord
		if err := json.Unmarshal(v.Value(), &got); err != nil {
			return false, err.Error()
		}
		var want bucketRecord
		json.Unmarshal(last.Data, &want)
		// Each port of these tests has one publisher: its latest is its last unit.
		if got.Seq != uint64(n) || got.Unit == "" {
			return false, fmt.Sprintf("%s: bucket holds unit %d (stream seq %d, unit %d bytes); the stream's latest is unit %d at %d",
				port, got.Seq, got.StreamSeq, len(got.Unit), want.Seq, last.Sequence)
		}
		m, err := s.GetMsg(ctx, got.StreamSeq)
		var at bucketRecord
		if err != nil || json.Unmarshal(m.Data, &at) != nil || at.Seq != got.Seq || m.Subject != "scoreboard.result.goscore."+port {
			return false, fmt.Sprintf("%s: bucket's stream_seq %d is not its result (%v)", port, got.StreamSeq, err)
		}
	}
	return true, ""
}

// A burst of units on two ports: once answered, each port's value in the bucket is
// the stream's latest result of the port, with its unit, whatever the put interval
// coalesced.
func TestBucketFollowsStream(t *testing.T) {
	e := start(t)
	results := e.results(t)
	const n = 200
	for seq := range uint64(n) {
		e.dump(t, "goscore", "lobby", "o1", seq+1, goscore())
		e.dump(t, "goscore", "hall", "o2", seq+1, goscore())
	}
	await(t, results, 2*n)
	bustest.Wait(t, "the bucket at the stream's latest", func() (bool, string) { return e.bucketMatchesStream(t, n, "lobby", "hall") })
}

// A bucket that holds a port's older value (a daemon killed before its last put) is
// set right by the next updater as it starts, from the stream alone; a port whose
// value is the stream's latest is not put again.
func TestBucketRebuiltAtStart(t *testing.T) {
	e := start(t)
	results := e.results(t)
	const n = 20
	for seq := range uint64(n) {
		e.dump(t, "goscore", "lobby", "o1", seq+1, goscore())
		e.dump(t, "goscore", "hall", "o2", seq+1, goscore())
	}
	await(t, results, 2*n)
	bustest.Wait(t, "the bucket at the stream's latest", func() (bool, string) { return e.bucketMatchesStream(t, n, "lobby", "hall") })
	ctx := context.Background()
	stale := history.AppendStreamSeq(history.AppendRecord(nil, []byte(`{"problem":"goscore","port":"lobby","seq":1}`), []byte("old"), time.Time{}, nil, false), 1)
	if _, err := e.kv.Put(ctx, "lobby", stale); err != nil {
		t.Fatal(err)
	}
	hall, err := e.kv.Get(ctx, "hall")
	if err != nil {
		t.Fatal(err)
	}

	u := history.NewUpdater(e.nc, e.js, bus.DefaultPrefix, zerolog.Nop())
	if err := u.Subscribe(); err != nil {
		t.Fatal(err)
	}
	uctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { u.Run(uctx) })
	defer func() { stop(); wg.Wait() }()
	bustest.Wait(t, "the stale value set right", func() (bool, string) { return e.bucketMatchesStream(t, n, "lobby", "hall") })
	if v, err := e.kv.Get(ctx, "hall"); err != nil || v.Revision() != hall.Revision() {
		t.Errorf("hall, at the stream's latest already, put again: revision %v, was %d (%v)", revision(v), hall.Revision(), err)
	}
	bustest.Wait(t, "the put acked", func() (bool, string) { return u.Puts() >= 1, fmt.Sprintf("%d puts", u.Puts()) })
	if u.Puts() != 1 {
		t.Errorf("the new updater put %d values, want 1 (lobby's)", u.Puts())
	}
}

func revision(e jetstream.KeyValueEntry) string {
	if e == nil {
		return "none"
	}
	return strconv.FormatUint(e.Revision(), 10)
}

// A stop takes the results the reader has not handed on yet: an updater stopped
// right after a burst of results stored (a reader behind the stream, as after a
// replicated stream's leader change) still puts the port's latest. Before, the stop
// took only what was already handed on, and the bucket kept an older board.
func TestBucketCaughtUpAtStop(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	// A prefix of its own, so that only this updater writes its bucket.
	kv, err := history.Setup(ctx, e.js, history.Config{Prefix: "club", MaxAge: time.Hour, MaxBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	bustest.CaptureHistory(t, e.nc, "club")
	u := history.NewUpdater(e.nc, e.js, "club", zerolog.Nop())
	if err := u.Subscribe(); err != nil {
		t.Fatal(err)
	}
	uctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); u.Run(uctx) }()
	// Results published by hand (seq 0: no unit to look up), each its own answer,
	// as the workers publish them: core NATS, the stream storing them (no acks).
	const n = 5000
	for k := 1; k <= n; k++ {
		res := fmt.Sprintf(`{"problem":"goscore","port":"den","seq":0,"answer":"%d\n","solve_us":1}`, k)
		if err := e.nc.Publish("club.result.goscore.den", []byte(res)); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := e.js.Stream(ctx, "CLUB")
	if err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the results stored", func() (bool, string) {
		info, err := stream.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs >= n, fmt.Sprintf("%d of %d stored", info.State.Msgs, n)
	})
	stop()
	<-done
	v, err := kv.Get(ctx, "den")
	if err != nil {
		t.Fatalf("the bucket has no value for the port after the stop: %v", err)
	}
	var got bucketRecord
	if err := json.Unmarshal(v.Value(), &got); err != nil || got.Answer != strconv.Itoa(n)+"\n" {
		t.Fatalf("the bucket holds answer %q (stream seq %d) after the stop, want the last, %d (%v)", got.Answer, got.StreamSeq, n, err)
	}
}

// Issue 41: anyone may publish a dump, and so name a port; the bucket keeps the
// boards of history.MaxPorts ports at most, and none of a port whose name is no
// port name (over 64 bytes here): their results are counted, not kept as boards.
func TestBucketBoundsPorts(t *testing.T) {
	e := start(t)
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	publish := func(port string) {
		r := result.Record{Problem: "goscore", Port: port, Seq: 1, Origin: "o", Answer: "1 1\n", Worker: "w"}
		if err := e.nc.Publish(s.Result("goscore", port), r.AppendJSON(nil)); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("p", bus.MaxToken+1)
	publish(long)
	for i := range history.MaxPorts + 5 {
		publish(fmt.Sprintf("p%d", i))
	}
	bustest.Wait(t, "the ports beyond the bound refused", func() (bool, string) {
		return e.u.RefusedPorts() >= 6, fmt.Sprint(e.u.RefusedPorts(), " refused")
	})
	ctx := context.Background()
	var keys int
	bustest.Wait(t, "the bucket's boards", func() (bool, string) {
		lister, err := e.kv.ListKeys(ctx)
		if err != nil {
			return false, err.Error()
		}
		keys = 0
		for range lister.Keys() {
			keys++
		}
		return keys == history.MaxPorts, fmt.Sprint(keys, " keys")
	})
	if _, err := e.kv.Get(ctx, long); err == nil {
		t.Error("the bucket keeps a board of a port whose name is no port name")
	}
	t.Logf("%d boards kept, %d results of ports refused", keys, e.u.RefusedPorts())
}
