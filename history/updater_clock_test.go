package history

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
)

// storedMsg is a result as the updater's reader gets it from the stream: its stream
// sequence and the server's time, injected.
type storedMsg struct {
	clockMsg
	meta *jetstream.MsgMetadata
}

func (m storedMsg) Metadata() (*jetstream.MsgMetadata, error) { return m.meta, nil }

// The bucket's latest is the stream's order, whatever the server's clock did: a
// port's latest result is its publisher's highest unit (workers answer in
// parallel), or the result of another publisher stored later (a daemon started
// again), by stream sequence; a result stored after the clock jumped back a year
// or forward a day is neither older nor newer for its time.
func TestBucketLatestUnderClockJumps(t *testing.T) {
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	t0 := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	year, day := 365*24*time.Hour, 24*time.Hour
	result := func(origin, seq string, streamSeq uint64, at time.Time) storedMsg {
		return storedMsg{
			clockMsg: clockMsg{subject: subj.Result("goscore", "hall"),
				data: []byte(`{"problem":"goscore","port":"hall","seq":` + seq + `,"answer":"1 2\n","origin":"` + origin + `"}`)},
			meta: &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: streamSeq}, Timestamp: at, NumPending: 1},
		}
	}
	u := NewUpdater(nil, nil, bus.DefaultPrefix, zerolog.Nop())
	for _, c := range []struct {
		m          storedMsg
		origin     string
		unit, sseq uint64
	}{
		{result("o1", "1", 10, t0), "o1", 1, 10},
		// The clock a year back: unit 3 stored before unit 2, both at older times.
		{result("o1", "3", 11, t0.Add(-year)), "o1", 3, 11},
		{result("o1", "2", 12, t0.Add(-year+time.Second)), "o1", 3, 11},
		// A day forward: unit 2 again would not win either.
		{result("o1", "2", 13, t0.Add(day)), "o1", 3, 11},
		// The daemon started again, its clock back a year: its unit 1 is the latest.
		{result("o2", "1", 14, t0.Add(-year)), "o2", 1, 14},
		// The first daemon's result stored after it, with a later time, is not.
		{result("o1", "4", 9, t0.Add(day)), "o2", 1, 14},
		{result("o2", "2", 15, t0.Add(-2*year)), "o2", 2, 15},
	} {
		u.take(c.m)
		pv := u.ports["hall"]
		if pv.origin != c.origin || pv.unitSeq != c.unit || pv.seq != c.sseq {
			t.Fatalf("after the result %s at stream seq %d, stored at %v: the latest is unit %d of %s at %d; want unit %d of %s at %d",
				c.m.data, c.m.meta.Sequence.Stream, c.m.meta.Timestamp, pv.unitSeq, pv.origin, pv.seq, c.unit, c.origin, c.sseq)
		}
	}
	if got := string(AppendStreamSeq([]byte(`{"seq":2}`), 15)); got != `{"seq":2,"stream_seq":15}` {
		t.Errorf("the value's order: %s", got)
	}
}

// The page's earlier units (/api/history: the last N of a port) are the last N in
// the stream's order, whatever times the server stamped on them.
func TestReadLastUnderClockJumps(t *testing.T) {
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	t0 := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	dump, result := clockDump, clockResult
	for _, jump := range []time.Duration{24 * time.Hour, -365 * 24 * time.Hour} {
		var got []uint64
		p := newPairer(Query{Last: 3}, subj, func(e *Entry) error { got = append(got, e.Seq); return nil })
		msgs := []struct {
			m  clockMsg
			at time.Time
		}{
			{dump("1"), t0}, {result("1"), t0}, {dump("2"), t0.Add(time.Second)}, {result("2"), t0.Add(time.Second)},
			{dump("3"), t0.Add(jump)}, {result("3"), t0.Add(jump)},
			{dump("4"), t0.Add(jump + time.Second)}, {result("4"), t0.Add(jump + time.Second)},
		}
		for i, m := range msgs {
			if _, err := p.add(m.m, m.at, uint64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.endReplay(); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 4 {
			t.Errorf("clock jumped by %v: the last 3 units are %v, want [2 3 4]", jump, got)
		}
	}
}
