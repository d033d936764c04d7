package history_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
)

// A stream that missed the dumps (as a replicated one does while it has no leader)
// gets them back from the repairer once a leader is elected: each once, under its
// own subject, with its headers; the results it took are not stored twice, a dump
// without an id is left alone, and no subscriber of the dumps or the results sees
// anything twice. A later election puts nothing more.
func TestRepairerPutsBackWhatTheStreamMissed(t *testing.T) {
	// The embedded server of the other history tests, under a prefix of its own:
	// its workers and its stream leave these subjects alone.
	e := start(t)
	nc, js := e.nc, e.js
	subj := bus.Subjects{Prefix: "repairtest"}
	ctx := context.Background()
	// The stream as Setup makes a replicated one, except that it does not capture
	// the dumps: they are what it missed.
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:             subj.Stream(),
		Subjects:         []string{subj.AllResults(), subj.AllRepairs()},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: subj.AllRepairs(), Destination: subj.Prefix + ".>"},
		NoAck:            true,
		Duplicates:       time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	var dumpsSeen, resultsSeen atomic.Int64
	for s, n := range map[string]*atomic.Int64{subj.Prefix + ".dump.>": &dumpsSeen, subj.AllResults(): &resultsSeen} {
		if _, err := nc.Subscribe(s, func(*nats.Msg) { n.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	r := history.NewRepairer(nc, js, subj.Prefix, zerolog.Nop())
	if err := r.Subscribe(); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	const units = 10
	for seq := 1; seq <= units; seq++ {
		s := strconv.Itoa(seq)
		dump := &nats.Msg{Subject: subj.Dump("goscore", "lobby"), Data: []byte("unit " + s),
			Header: nats.Header{bus.HeaderSeq: {s}, bus.HeaderOrigin: {"o"}, bus.HeaderMsgID: {bus.DumpID("o", uint64(seq))}}}
		res := &nats.Msg{Subject: subj.Result("goscore", "lobby"), Data: []byte(`{"seq":` + s + `}`),
			Header: nats.Header{bus.HeaderMsgID: {bus.ResultID("o", uint64(seq))}}}
		for _, m := range []*nats.Msg{dump, res} {
			if err := nc.PublishMsg(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	// By hand: no id, so nothing tells whether the stream has it.
	if err := nc.Publish(subj.Dump("goscore", "desk"), []byte("by hand")); err != nil {
		t.Fatal(err)
	}
	elect := func() {
		t.Helper()
		if err := nc.Publish("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."+subj.Stream(), []byte("{}")); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	elect()
	bustest.Wait(t, "the repairer's first pass", func() (bool, string) { return r.Passes() >= 1, "passes " + strconv.FormatUint(r.Passes(), 10) })
	if got := r.Repaired(); got != units {
		t.Errorf("repaired %d messages, want the %d dumps", got, units)
	}

	// What the stream holds: every dump once, in its own subject and with its
	// headers, and every result once.
	c, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	dumps, results := map[string]int{}, map[string]int{}
	for {
		m, err := c.Next(jetstream.FetchMaxWait(2 * time.Second))
		if err != nil {
			break
		}
		id := m.Headers().Get(bus.HeaderMsgID)
		switch m.Subject() {
		case subj.Dump("goscore", "lobby"):
			dumps[id]++
			seq := m.Headers().Get(bus.HeaderSeq)
			if want := "unit " + seq; string(m.Data()) != want || m.Headers().Get(bus.HeaderOrigin) != "o" || id != bus.DumpID("o", parseUint(t, seq)) {
				t.Errorf("dump %s: %q, headers %v; want %q with its headers", id, m.Data(), m.Headers(), want)
			}
		case subj.Result("goscore", "lobby"):
			results[id]++
		default:
			t.Errorf("the stream holds %q on %s", m.Data(), m.Subject())
		}
	}
	for seq := uint64(1); seq <= units; seq++ {
		if n := dumps[bus.DumpID("o", seq)]; n != 1 {
			t.Errorf("dump %d stored %d times, want once", seq, n)
		}
		if n := results[bus.ResultID("o", seq)]; n != 1 {
			t.Errorf("result %d stored %d times, want once", seq, n)
		}
	}
	if dumpsSeen.Load() != units+1 || resultsSeen.Load() != units {
		t.Errorf("subscribers saw %d dumps and %d results, want %d and %d: the repair reached them", dumpsSeen.Load(), resultsSeen.Load(), units+1, units)
	}

	// Another election: the stream holds everything now, so nothing is put back.
	passes := r.Passes()
	elect()
	bustest.Wait(t, "the repairer's pass after a second election", func() (bool, string) { return r.Passes() > passes, "passes " + strconv.FormatUint(r.Passes(), 10) })
	if got := r.Repaired(); got != units {
		t.Errorf("after a second election: repaired %d messages in all, want %d", got, units)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2*units {
		t.Errorf("the stream holds %d messages, want %d", info.State.Msgs, 2*units)
	}
}

func parseUint(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("seq %q: %v", s, err)
	}
	return n
}
