package dumpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/dumpclient"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/worker"
)

// reports keeps what Send told Options.Report; Send calls it from its own goroutine.
type reports struct {
	mu   sync.Mutex
	errs []string
}

func (r *reports) add(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err.Error())
}

func (r *reports) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// options are Send's options for problem on port, reporting into rep.
func options(t *testing.T, b *bustest.Bus, problem, port string, timeout time.Duration, rep *reports) dumpclient.Options {
	t.Helper()
	p, ok := engine.Lookup(problem)
	if !ok {
		t.Fatalf("no problem %q", problem)
	}
	return dumpclient.Options{Subjects: b.Subjects(), Problem: p, Port: port, Timeout: timeout, Report: rep.add}
}

// TestSendAnswered: every sample sent through the workers on a bus, as a tool without
// credentials, comes back as the sample's output, byte for byte, in unit order.
func TestSendAnswered(t *testing.T) {
	b := bustest.Start(t, bustest.Options{})
	b.Workers(worker.Options{})
	nc := b.Tool()
	for _, c := range samples.Cases {
		in, want := samples.Pair(t, c)
		var out strings.Builder
		rep := &reports{}
		err := dumpclient.Send(context.Background(), nc, strings.NewReader(string(in)), &out, options(t, b, c.Problem, "desk", 0, rep))
		if err != nil || out.String() != string(want) || len(rep.list()) != 0 {
			t.Errorf("%s: error %v, out %q, reports %q; want nil, %q, none", c.File, err, out.String(), rep.list(), want)
		}
	}
}

// TestSendWithoutWorker: with nothing on the bus that takes the dumps, the server
// says so at once, and Send ends with NoWorkerError, naming the subject and what to
// start, long before its timeout.
func TestSendWithoutWorker(t *testing.T) {
	b := bustest.Start(t, bustest.Options{})
	in, _ := samples.Pair(t, samples.Case{File: "goscore"})
	var out strings.Builder
	rep := &reports{}
	err := dumpclient.Send(context.Background(), b.Tool(), strings.NewReader(string(in)), &out, options(t, b, "goscore", "desk", time.Hour, rep))
	var nw *dumpclient.NoWorkerError
	if !errors.As(err, &nw) {
		t.Fatalf("error %#v; want a NoWorkerError", err)
	}
	if want := "scoreboard.dump.goscore.desk: no worker serves it (is 'scoreboard run' or 'scoreboard work' running there, with the same --nats-prefix?)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if out.Len() != 0 || len(rep.list()) != 0 {
		t.Errorf("out %q, reports %q; want nothing (not a malformed result per unit)", out.String(), rep.list())
	}
}

// TestSendNoResult: a subscriber that takes the dumps and never answers (a worker
// stuck, or a stream's capture alone): Send ends after the timeout with the units
// that got no result, and the error says what to check.
func TestSendNoResult(t *testing.T) {
	b := bustest.Start(t, bustest.Options{})
	taker := b.Daemon()
	sub, err := taker.Subscribe(b.Subjects().Dump("goscore", "desk"), func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := taker.Flush(); err != nil {
		t.Fatal(err)
	}
	in, _ := samples.Pair(t, samples.Case{File: "goscore"})
	var out strings.Builder
	rep := &reports{}
	start := time.Now()
	err = dumpclient.Send(context.Background(), b.Tool(), strings.NewReader(string(in)), &out, options(t, b, "goscore", "desk", 300*time.Millisecond, rep))
	var nr *dumpclient.NoResultError
	if !errors.As(err, &nr) || nr.Within != 300*time.Millisecond || nr.Published != 2 || len(nr.Missing) != 2 || nr.Missing[0] != 1 || nr.Missing[1] != 2 {
		t.Fatalf("error %#v; want a NoResultError for units 1 and 2 of 2 within 300ms", err)
	}
	if want := "no result within 300ms for unit(s) 1, 2 of 2 (is a worker running?)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("gave up after %v, before the timeout", took)
	}
	if out.Len() != 0 || len(rep.list()) != 0 {
		t.Errorf("out %q, reports %q; want nothing", out.String(), rep.list())
	}
}

// TestSendBadUnits: a unit the workers cannot solve (a board broken at its fifth
// line), a line longer than the problem's and the unit the framer then rejects are
// each reported with their line and counted, and the answers of the others are still
// written.
func TestSendBadUnits(t *testing.T) {
	b := bustest.Start(t, bustest.Options{})
	b.Workers(worker.Options{})
	nc := b.Tool()
	in, want := samples.Pair(t, samples.Case{File: "goscore"})
	// The first board broken at its fifth line, then the sample's two boards.
	rows := strings.Split(string(in), "\n")[:20]
	rows[4] = " + + garbage"
	var out strings.Builder
	rep := &reports{}
	err := dumpclient.Send(context.Background(), nc, strings.NewReader(strings.Join(rows, "\n")+"\n"+string(in)), &out, options(t, b, "goscore", "desk", 0, rep))
	if err != dumpclient.BadUnits(1) || err.Error() != "1 bad unit(s)" || out.String() != string(want) {
		t.Errorf("error %v, out %q; want 1 bad unit, %q", err, out.String(), want)
	}
	if r := rep.list(); len(r) != 1 || !strings.HasPrefix(r[0], "unit 1: goscore: line 5: ") {
		t.Errorf("reports %q; want unit 1's error, naming line 5", r)
	}

	out.Reset()
	rep = &reports{}
	long := strings.Repeat("+", 4096) + "\n"
	err = dumpclient.Send(context.Background(), nc, strings.NewReader(long+string(in)), &out, options(t, b, "goscore", "desk", 0, rep))
	if err != dumpclient.BadUnits(2) || out.String() != string(want) {
		t.Errorf("a long line: error %v, out %q; want 2 bad units, %q", err, out.String(), want)
	}
	r := rep.list()
	if len(r) != 2 || r[0] != "goscore: line 1: line too long: 4097 bytes or more, limit 128" || !strings.HasPrefix(r[1], "goscore: line 1: ") {
		t.Errorf("a long line: reports %q; want the line too long, then the framer's error, both at line 1", r)
	}
}

// byHand is a Send of the goscore sample's two units on port hall of a bus with no
// worker: the test takes the dumps in a worker's place, on a daemon's connection, and
// answers them as it likes.
type byHand struct {
	nc     *nats.Conn // the answerer's
	d1, d2 *nats.Msg  // the two dumps, as the answerer took them
	out    *proctest.Buffer
	rep    *reports
	done   chan error // what Send returns
}

func sendByHand(ctx context.Context, t *testing.T) *byHand {
	t.Helper()
	b := bustest.Start(t, bustest.Options{})
	h := &byHand{nc: b.Daemon(), out: &proctest.Buffer{}, rep: &reports{}, done: make(chan error, 1)}
	dumps := make(chan *nats.Msg, 16)
	if _, err := h.nc.ChanSubscribe(b.Subjects().Dump("goscore", "hall"), dumps); err != nil {
		t.Fatal(err)
	}
	if err := h.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	in, _ := samples.Pair(t, samples.Case{File: "goscore"})
	tool, o := b.Tool(), options(t, b, "goscore", "hall", bustest.Long, h.rep)
	go func() { h.done <- dumpclient.Send(ctx, tool, strings.NewReader(string(in)), h.out, o) }()
	for _, d := range []**nats.Msg{&h.d1, &h.d2} {
		select {
		case *d = <-dumps:
		case <-time.After(bustest.Long):
			t.Fatal("no dump")
		}
	}
	return h
}

// wait is what Send returned, once it did.
func (h *byHand) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.done:
		return err
	case <-time.After(bustest.Long):
		t.Fatal("Send did not end")
		return nil
	}
}

// reply answers the dump m with r, taking its seq, origin and digest from the dump
// unless r has them.
func (h *byHand) reply(t *testing.T, m *nats.Msg, r result.Record) {
	t.Helper()
	dh, _ := bus.ReadDump(m.Header)
	if r.Seq == 0 {
		r.Seq = dh.Seq
	}
	if r.Origin == "" {
		r.Origin = dh.Origin
	}
	if r.UnitDigest == "" {
		r.UnitDigest = bus.UnitDigest(m.Data)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.nc.Publish(m.Reply, data); err != nil {
		t.Fatal(err)
	}
}

// TestSendOrdersAndRefuses: the dumps carry the port, seq from 1, line, origin and
// Nats-Msg-Id; answers that come in reverse order are written in unit order; a reply
// with another origin, or another unit's digest, is refused and reported, not
// written; a second answer to a unit is ignored.
func TestSendOrdersAndRefuses(t *testing.T) {
	h := sendByHand(context.Background(), t)
	h1, _ := bus.ReadDump(h.d1.Header)
	h2, _ := bus.ReadDump(h.d2.Header)
	if h1.Port != "hall" || h1.Seq != 1 || h1.Line != 1 || h1.Origin == "" || h2.Seq != 2 || h2.Line <= h1.Line || h2.Origin != h1.Origin || h1.Attempt != 0 {
		t.Errorf("dump headers %+v, %+v; want port hall, seqs 1 and 2 from line 1, one origin, no attempt", h1, h2)
	}
	if id := h.d1.Header.Get(bus.HeaderMsgID); id != bus.DumpID(h1.Origin, 1) {
		t.Errorf("Nats-Msg-Id %q, want %q", id, bus.DumpID(h1.Origin, 1))
	}

	h.reply(t, h.d1, result.Record{Problem: "goscore", Port: "hall", Answer: "forged\n", Origin: "someone-else"})
	h.reply(t, h.d1, result.Record{Problem: "goscore", Port: "hall", Answer: "forged\n", UnitDigest: bus.UnitDigest([]byte("another unit"))})
	h.reply(t, h.d2, result.Record{Problem: "goscore", Port: "hall", Answer: "2 2\n"})
	bustest.Wait(t, "the forged replies refused", func() (bool, string) {
		r := h.rep.list()
		return len(r) == 2, strings.Join(r, "; ")
	})
	if h.out.String() != "" {
		t.Errorf("wrote %q before unit 1 was answered", h.out.String())
	}
	h.reply(t, h.d1, result.Record{Problem: "goscore", Port: "hall", Answer: "1 1\n"})
	h.reply(t, h.d1, result.Record{Problem: "goscore", Port: "hall", Answer: "late\n"})
	if err := h.wait(t); err != nil {
		t.Errorf("error %v, want nil", err)
	}
	if h.out.String() != "1 1\n2 2\n" {
		t.Errorf("out %q, want the answers in unit order, the refused ones left out", h.out.String())
	}
	r := h.rep.list()
	if len(r) != 2 || !strings.Contains(r[0], "refused a reply for unit 1: "+bus.ErrNotMine.Error()) || !strings.Contains(r[1], bus.ErrOtherUnit.Error()) {
		t.Errorf("reports %q; want the two forged replies, refused", r)
	}
}

// TestSendErrorResult: a unit whose result is an error is reported with its number
// and counted bad; the next unit's answer is still written.
func TestSendErrorResult(t *testing.T) {
	h := sendByHand(context.Background(), t)
	h.reply(t, h.d1, result.Record{Problem: "goscore", Port: "hall", Error: "goscore: line 3: no solver today"})
	h.reply(t, h.d2, result.Record{Problem: "goscore", Port: "hall", Answer: "2 2\n"})
	if err := h.wait(t); err != dumpclient.BadUnits(1) {
		t.Errorf("error %v, want 1 bad unit", err)
	}
	if r := h.rep.list(); len(r) != 1 || r[0] != "unit 1: goscore: line 3: no solver today" {
		t.Errorf("reports %q; want unit 1's error", r)
	}
	if h.out.String() != "2 2\n" {
		t.Errorf("out %q, want unit 2's answer", h.out.String())
	}
}

// TestSendEnds: Send returns the context's error when it is cancelled while it waits,
// and the input's when reading it fails.
func TestSendEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := sendByHand(ctx, t)
	cancel()
	if err := h.wait(t); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}

	b := bustest.Start(t, bustest.Options{})
	err := dumpclient.Send(context.Background(), b.Tool(), iotest.ErrReader(errors.New("disk gone")), &strings.Builder{}, options(t, b, "goscore", "hall", 0, &reports{}))
	if err == nil || err.Error() != "read line 1: disk gone" {
		t.Errorf("error %v, want read line 1: disk gone", err)
	}
}
