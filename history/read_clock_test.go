package history

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
)

// clockMsg is a message of the stream as Read gets it; only what the pairer reads.
type clockMsg struct {
	jetstream.Msg
	subject string
	data    []byte
	header  nats.Header
}

// clockDump and clockResult are unit seq's dump and result, of origin o1 on port
// hall.
func clockDump(seq string) clockMsg {
	return clockMsg{subject: bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", "hall"), data: []byte("unit " + seq),
		header: nats.Header{bus.HeaderSeq: {seq}, bus.HeaderOrigin: {"o1"}, bus.HeaderLine: {"1"}}}
}

func clockResult(seq string) clockMsg {
	return clockMsg{subject: bus.Subjects{Prefix: bus.DefaultPrefix}.Result("goscore", "hall"),
		data: []byte(`{"problem":"goscore","port":"hall","seq":` + seq + `,"origin":"o1","answer":"1 2\n"}`)}
}

func (m clockMsg) Subject() string      { return m.subject }
func (m clockMsg) Data() []byte         { return m.data }
func (m clockMsg) Headers() nats.Header { return m.header }

// The history's order is the stream's, whatever the server's clock did: units
// stored across a jump forward of a day and one back of a year are each listed
// once, answered, in stream order; none is reported unanswered because the clock
// moved. Times are injected: the server stamps messages with its own clock.
func TestReadOrderUnderClockJumps(t *testing.T) {
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	t0 := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	dump, result := clockDump, clockResult
	for _, jump := range []struct {
		name string
		by   time.Duration
	}{{"a day forward", 24 * time.Hour}, {"a year back", -365 * 24 * time.Hour}} {
		var got []*Entry
		p := newPairer(Query{}, subj, func(e *Entry) error { got = append(got, e); return nil })
		// Units 1 and 2 in flight when the clock jumps; 3 after it.
		msgs := []struct {
			m  clockMsg
			at time.Time
		}{
			{dump("1"), t0}, {dump("2"), t0.Add(time.Second)},
			{dump("3"), t0.Add(jump.by)}, {result("2"), t0.Add(jump.by)}, {result("1"), t0.Add(jump.by + time.Second)},
			{result("3"), t0.Add(jump.by + 2*time.Second)},
		}
		for i, m := range msgs {
			if _, err := p.add(m.m, m.at, uint64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.endReplay(); err != nil {
			t.Fatal(err)
		}
		var seqs []uint64
		for _, e := range got {
			seqs = append(seqs, e.Seq)
			if e.Unanswered || e.Unit == nil {
				t.Errorf("%s: unit %d: unanswered %v, unit %q", jump.name, e.Seq, e.Unanswered, e.Unit)
			}
		}
		if len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 2 || seqs[2] != 3 {
			t.Errorf("%s: listed units %v, want [1 2 3] once each", jump.name, seqs)
		}
	}
}
