package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
)

// tailFirst is the margin of the first window readTail reads back from the
// stream's end, in messages of q's beyond two a unit asked for (a unit is its dump
// and its result): the window is that many messages of q's at the share of the
// stream that q's subjects have. Each next window is twice as wide.
const tailFirst = 64

// held is a message of the tail, kept to pair the windows read so far together.
type held struct {
	m   jetstream.Msg
	ts  time.Time
	seq uint64
}

// portOrigin names a publisher's units of a port: their seqs grow as it publishes.
type portOrigin struct{ port, origin string }

// readTail is Read of the last q.Last units: it reads the stream from its last
// sequence (with q.Until, the last a whole read would read: a result may come up
// to staleAfter after q.Until and still be its unit's) backwards, in windows that grow, each by an ordered consumer
// from the window's first sequence to the next window's, until the last q.Last
// units of what it read are settled (they are what a read of the whole history
// would end with) or it reached the history's start (or q.Since). Then, with
// q.Follow, it goes on live from the sequence after the tail: no gap, no duplicate.
//
// A unit is settled when its dump is among what was read, or when a dump of the
// same port and publisher with a lower number is: a publisher numbers its units as
// it publishes them, so that unit's dump, and every result of it, come after that
// one, inside what was read. Anything else (a result whose dump may lie further
// back, or was never kept) needs a wider window.
func readTail(ctx context.Context, js jetstream.JetStream, prefix string, q Query, emit func(*Entry) error) error {
	subj := bus.Subjects{Prefix: prefix}
	stream := streamOf(q, subj)
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return noHistory(stream, err)
	}
	// q's share of the stream: the server counts each subject's messages (no read).
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subj.Prefix+".*."+star(q.Problem)+"."+star(q.Port)))
	if err != nil {
		return fmt.Errorf("history: read stream %s: %w", stream, err)
	}
	st := info.State
	var mine uint64
	for _, n := range st.Subjects {
		mine += n
	}
	// The dumps are read with Follow too: they settle the results.
	results, dumps := subj.Result(star(q.Problem), star(q.Port)), subj.Dump(star(q.Problem), star(q.Port))
	floor, last := max(st.FirstSeq, 1), st.LastSeq
	if end := q.Until.Add(staleAfter + time.Nanosecond); !q.Until.IsZero() && !st.LastTime.Before(end) {
		// A whole read stops at the first message stored that long after q.Until.
		after, err := seqFromTime(ctx, js, stream, end)
		if err != nil {
			return err
		}
		last = min(last, after-1)
	}
	var (
		tail      []held // what was read, oldest first: from..last
		from      = last + 1
		width     = uint64(2*q.Last + tailFirst)
		sinceSeen bool // the floor is q.Since's, found
		p         *pairer
		out       []*entry
	)
	if mine == 0 {
		from = floor // nothing of q's: nothing to read back
	} else {
		// A port that is one of two: twice the messages; one rare among many:
		// back to where its last units may be, or its first.
		width = max(width, width*st.Msgs/mine)
	}
	for from > floor {
		start := floor
		if from-floor > width {
			start = from - width
		}
		seg, err := readSpan(ctx, js, stream, []string{results, dumps}, start, from-1)
		if err != nil {
			if ctx.Err() != nil {
				return nil // given up, as a whole read is: nothing handed on
			}
			return err
		}
		tail, from = append(seg, tail...), start
		if len(tail) == 0 && from > floor {
			// Nothing of q's in the stream's tail: its last message may be far back
			// (a port idle since), where the next window had better start.
			at, err := lastOf(ctx, s, results, dumps)
			if err != nil {
				return err
			}
			from = max(min(from, at+1), floor)
		}
		if !q.Since.IsZero() && !sinceSeen && len(tail) > 0 && tail[0].ts.Before(q.Since) {
			// The window reaches back past q.Since: from here on the floor is where
			// the server starts a read by that time, as a whole read would.
			if floor, err = seqFromTime(ctx, js, stream, q.Since); err != nil {
				return err
			}
			sinceSeen = true
			for len(tail) > 0 && tail[0].seq < floor {
				tail = tail[1:]
			}
			from = max(from, floor)
		}
		p, out, err = pairTail(q, subj, emit, tail)
		if err != nil {
			return err
		}
		if from <= floor || settled(q, subj, tail, out) {
			break
		}
		width *= 2
	}
	if p == nil {
		p = newPairer(q, subj, emit)
	}
	if err := p.release(out); err != nil || !q.Follow || ctx.Err() != nil {
		return err // or the reader had enough of the tail (watch --count)
	}
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{results},
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       last + 1,
		InactiveThreshold: consumerIdle,
	}
	return consume(ctx, js, stream, cfg, p)
}

// pairTail pairs the messages read as a whole read would (with Follow, the results
// only), and returns the pairer at the end of the replay and its last q.Last
// entries, not yet handed on.
func pairTail(q Query, subj bus.Subjects, emit func(*Entry) error, tail []held) (*pairer, []*entry, error) {
	p := newPairer(q, subj, emit)
	for _, h := range tail {
		if q.Follow {
			if _, _, err := subj.ParseDump(h.m.Subject()); err == nil {
				continue
			}
		}
		if _, err := p.add(h.m, h.ts, h.seq); err != nil {
			return nil, nil, err
		}
	}
	out, err := p.replayed()
	return p, out, err
}

// settled says whether out, the last entries of tail, are q.Last units that are
// each settled (readTail).
func settled(q Query, subj bus.Subjects, tail []held, out []*entry) bool {
	if len(out) < q.Last {
		return false
	}
	first := map[portOrigin]uint64{} // the lowest numbered dump read of each
	for _, h := range tail {
		_, port, err := subj.ParseDump(h.m.Subject())
		if err != nil {
			continue
		}
		d, _ := bus.ReadDump(h.m.Headers())
		if d.Seq == 0 {
			continue
		}
		k := portOrigin{port, d.Origin}
		if s, ok := first[k]; !ok || d.Seq < s {
			first[k] = d.Seq
		}
	}
	for _, e := range out {
		if e.UnitSeq != 0 {
			continue // its dump was read
		}
		s, ok := first[portOrigin{e.key.port, e.key.origin}]
		if e.key.seq == 0 || !ok || s > e.key.seq {
			return false
		}
	}
	return true
}

// readSpan reads the messages of stream on filters from sequence start to end, with
// an ordered consumer, oldest first.
func readSpan(ctx context.Context, js jetstream.JetStream, stream string, filters []string, start, end uint64) ([]held, error) {
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    filters,
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       start,
		InactiveThreshold: consumerIdle,
	})
	if err != nil {
		return nil, noHistory(stream, err)
	}
	// No more pulled at once than the window holds: what lies beyond it was read.
	it, err := cons.Messages(jetstream.PullMaxMessages(int(min(end-start+1, 500))))
	if err != nil {
		return nil, fmt.Errorf("history: read stream %s: %w", stream, err)
	}
	defer stopConsumer(js, stream, cons, it)
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("history: read stream %s: %w", stream, err)
	}
	var seg []held
	for pending := info.NumPending; pending > 0; {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("history: read stream %s: %w", stream, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return nil, fmt.Errorf("history: read stream %s: %w", stream, err)
		}
		if meta.Sequence.Stream > end {
			break
		}
		seg = append(seg, held{m: m, ts: meta.Timestamp, seq: meta.Sequence.Stream})
		if meta.Sequence.Stream == end {
			break
		}
		pending = meta.NumPending
	}
	return seg, nil
}

// lastOf is the sequence of the stream's last message on any of subjects, 0 if
// none.
func lastOf(ctx context.Context, s jetstream.Stream, subjects ...string) (uint64, error) {
	var last uint64
	for _, subject := range subjects {
		m, err := s.GetLastMsgForSubject(ctx, subject)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return 0, fmt.Errorf("history: read stream %s: the last message on %s: %w", s.CachedInfo().Config.Name, subject, err)
		default:
			last = max(last, m.Sequence)
		}
	}
	return last, nil
}

// seqFromTime is the stream sequence a read from t starts at: the first message
// stored at t or later, by the server's own search.
func seqFromTime(ctx context.Context, js jetstream.JetStream, stream string, t time.Time) (uint64, error) {
	c, err := js.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverByStartTimePolicy,
		OptStartTime:      &t,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: consumerIdle,
		MemoryStorage:     true,
	})
	if err != nil {
		return 0, noHistory(stream, err)
	}
	ci := c.CachedInfo()
	dctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = js.DeleteConsumer(dctx, stream, ci.Name)
	cancel()
	// A consumer not yet delivering says the sequence before its first.
	return ci.Delivered.Stream + 1, nil
}
