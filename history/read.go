package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/result"
)

// staleAfter is how long after a unit was read its result may still come: beyond, a
// unit without one is reported unanswered without waiting for the end of the history.
// A unit is answered, or given up by the daemon, within its attempts (6 s by default).
const staleAfter = 10 * time.Minute

// staleMsgs is how far the stream must also have gone past a unit's dump before it
// is reported unanswered: times are the server's clock, which on a machine without
// a battery clock jumps (a day forward when NTP comes), and a unit in flight at the
// jump must not be reported unanswered and then shown again with its result.
const staleMsgs = 100_000

// unitKey names a unit: a port's dump numbered seq by origin.
type unitKey struct {
	port, origin string
	seq          uint64
}

// maxUnits bounds the units remembered as answered, so a second result is not shown.
const maxUnits = 4096

// consumerIdle is how long the server keeps a reader's consumer that no longer pulls.
const consumerIdle = 30 * time.Second

// Query selects what Read reads.
type Query struct {
	Port, Problem string    // only this port's, problem's units; "" for all
	Since, Until  time.Time // only units from Since, to Until; zero for no bound
	Last          int       // only the last Last units; 0 for all
	// Follow goes on with the units that come after the history, until ctx ends
	// (watch). It reads results only: a unit is shown when its result comes.
	Follow bool
	// Stream is the stream to read, when not the prefix's own: a league hub's
	// LEAGUE, whose subjects for a club are under the prefix league.<club>.
	Stream string
}

// Entry is one unit and its outcome.
type Entry struct {
	Problem, Port string
	Seq           uint64
	Result        []byte    // the result JSON as published; made up when Unanswered
	Unit          []byte    // the unit's text; nil when its dump is not in the history
	Time          time.Time // when the result came; when the unit was read if Unanswered
	Unanswered    bool      // read, and no result is kept
	// UnitSeq is the stream sequence of the unit's dump (a picture's address in
	// the history); 0 when the dump is not kept.
	UnitSeq uint64
}

// JSON is the entry as `history --json` prints it: the result JSON with "unit",
// "time", and for a unit without a result "unanswered":true.
func (e *Entry) JSON(dst []byte) []byte {
	return AppendRecord(dst, e.Result, e.Unit, e.Time, nil, e.Unanswered)
}

// Record is the entry's result, decoded.
func (e *Entry) Record() (result.Record, error) { return result.Decode(e.Result) }

// Line is the entry as watch prints a result: port, problem, #seq, and the answer
// (its lines joined by " | "), or the error.
func (e *Entry) Line() string {
	r, err := e.Record()
	if err != nil {
		return fmt.Sprintf("%s %s #%d malformed result: %v", e.Port, e.Problem, e.Seq, err)
	}
	if e.Unanswered {
		return fmt.Sprintf("%s %s #%d unanswered: read %s, no result kept", r.Port, r.Problem, r.Seq, e.Time.Local().Format(time.DateTime))
	}
	return r.OneLine()
}

// ErrNoHistory is returned by Read when the server keeps no history.
var ErrNoHistory = errors.New("no history kept on this server")

// Read reads the history oldest first, with ordered consumers (no acks, nothing
// written: a tool's read-only rights are enough), and calls emit for each unit that
// q selects. Without q.Follow it returns at the end of the history; with it, it
// goes on with the live results, so there is no gap and no duplicate where the two
// meet, until ctx ends. With q.Last (and not both q.Until and q.Follow) it reads
// only the stream's tail, or with q.Until its tail at that time (readTail): its
// cost is the same at any size of the history.
func Read(ctx context.Context, js jetstream.JetStream, prefix string, q Query, emit func(*Entry) error) error {
	if q.Last > 0 && (q.Until.IsZero() || !q.Follow) {
		return readTail(ctx, js, prefix, q, emit)
	}
	return readWhole(ctx, js, prefix, q, emit)
}

// readWhole is Read from the history's start (or q.Since), one consumer for the
// replay and the live results both.
func readWhole(ctx context.Context, js jetstream.JetStream, prefix string, q Query, emit func(*Entry) error) error {
	subj := bus.Subjects{Prefix: prefix}
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subj.Result(star(q.Problem), star(q.Port))},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		// A reader that goes away without a goodbye leaves no consumer for long.
		InactiveThreshold: consumerIdle,
	}
	if !q.Follow {
		cfg.FilterSubjects = append(cfg.FilterSubjects, subj.Dump(star(q.Problem), star(q.Port)))
	}
	if !q.Since.IsZero() {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &q.Since
	}
	return consume(ctx, js, streamOf(q, subj), cfg, newPairer(q, subj, emit))
}

// streamOf is the stream q reads: the prefix's own, or q.Stream.
func streamOf(q Query, subj bus.Subjects) string {
	if q.Stream != "" {
		return q.Stream
	}
	return subj.Stream()
}

// star is a filter's token: the name, or any.
func star(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

// noHistory says what a failed read of stream means: no history kept (no stream,
// no JetStream, no server), or another fault.
func noHistory(stream string, err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("%w: stream %s: %v (is the daemon running, with history on?)", ErrNoHistory, stream, err)
	}
	return fmt.Errorf("history: read stream %s: %w", stream, err)
}

// consume reads stream with an ordered consumer of cfg into p: the replay (unless
// p is already live: then it only follows), then with p.q.Follow the live results.
func consume(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.OrderedConsumerConfig, p *pairer) error {
	cons, err := js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return noHistory(stream, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("history: read stream %s: %w", stream, err)
	}
	defer stopConsumer(js, stream, cons, it)
	replaying := false
	if !p.live {
		info, err := cons.Info(ctx)
		if err != nil {
			return fmt.Errorf("history: read stream %s: %w", stream, err)
		}
		replaying = info.NumPending > 0
		if !replaying {
			if err := p.endReplay(); err != nil {
				return err
			}
		}
	}
	for replaying || p.q.Follow {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("history: read stream %s: %w", stream, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("history: read stream %s: %w", stream, err)
		}
		more, err := p.add(m, meta.Timestamp, meta.Sequence.Stream)
		if err != nil {
			return err
		}
		if replaying && (meta.NumPending == 0 || !more) {
			replaying = false
			if err := p.endReplay(); err != nil {
				return err
			}
		}
	}
	return nil
}

// stopConsumer stops reading and deletes the consumer: the server would drop it
// after consumerIdle anyway; at once is better, where the reader's rights allow it.
func stopConsumer(js jetstream.JetStream, stream string, cons jetstream.Consumer, it jetstream.MessagesContext) {
	it.Stop()
	if ci := cons.CachedInfo(); ci != nil {
		dctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = js.DeleteConsumer(dctx, stream, ci.Name)
		cancel()
	}
}

// pairer puts each result with its dump, and hands the entries on oldest first.
type pairer struct {
	q    Query
	subj bus.Subjects
	emit func(*Entry) error

	queue    []*entry // the entries in the order their units came (non-follow)
	open     map[unitKey][]*entry
	answered map[unitKey]bool // recently answered, so a second result is not a unit
	done     []unitKey        // the keys of answered, a ring
	next     int
	ring     []*entry // the last q.Last entries while replaying, from ring[head]
	head     int
	live     bool // past the replay
}

type entry struct {
	Entry
	key  unitKey
	line int64
	ok   bool // has its result
}

func newPairer(q Query, subj bus.Subjects, emit func(*Entry) error) *pairer {
	return &pairer{q: q, subj: subj, emit: emit, open: map[unitKey][]*entry{}, answered: map[unitKey]bool{}, done: make([]unitKey, maxUnits)}
}

// add takes one message of the history, stored at ts as the stream's message seq.
// It returns false once the history is past what q asks for.
func (p *pairer) add(m jetstream.Msg, ts time.Time, streamSeq uint64) (bool, error) {
	past := !p.q.Until.IsZero() && ts.After(p.q.Until)
	if past && (len(p.queue) == 0 || ts.Sub(p.q.Until) > staleAfter) {
		return false, p.flush(time.Time{}, 0, true)
	}
	h := m.Headers()
	if problem, port, err := p.subj.ParseDump(m.Subject()); err == nil {
		if past {
			return true, nil
		}
		d, _ := bus.ReadDump(h)
		e := &entry{Entry: Entry{Problem: problem, Port: port, Seq: d.Seq, Unit: m.Data(), Time: ts, UnitSeq: streamSeq},
			key: unitKey{port: port, origin: d.Origin, seq: d.Seq}, line: d.Line}
		p.open[e.key] = append(p.open[e.key], e)
		p.queue = append(p.queue, e)
		return true, p.flush(ts, streamSeq, false)
	}
	r, err := result.Decode(m.Data())
	if err != nil {
		return true, nil // not a result: nothing to show
	}
	k := unitKey{port: r.Port, origin: r.Origin, seq: r.Seq}
	var e *entry
	if es := p.open[k]; len(es) > 0 {
		e = es[0]
		if len(es) == 1 {
			delete(p.open, k)
		} else {
			p.open[k] = es[1:]
		}
	} else if past || (k.seq > 0 && p.answered[k]) {
		return true, nil // a second result of a unit already shown
	} else {
		e = &entry{Entry: Entry{Problem: r.Problem, Port: r.Port, Seq: r.Seq}, key: k}
		p.queue = append(p.queue, e)
	}
	e.Result, e.Time, e.ok = m.Data(), ts, true
	if p.q.Stream != "" {
		// Another stream than the prefix's own (a league hub's LEAGUE) got it later
		// than its publisher sent it: show the club's time.
		if at, ok := bus.ParseTime(h.Get(bus.HeaderTime)); ok {
			e.Time = at
		}
	}
	if k.seq > 0 {
		if old := p.done[p.next]; old != (unitKey{}) {
			delete(p.answered, old)
		}
		p.done[p.next], p.answered[k] = k, true
		p.next = (p.next + 1) % len(p.done)
	}
	return true, p.flush(ts, streamSeq, false)
}

// flush hands on the entries at the head of the queue that are complete: answered,
// or unanswered for longer than a result can take, by the clock and by the stream
// (staleMsgs) both (all, at the end).
func (p *pairer) flush(now time.Time, streamSeq uint64, end bool) error {
	n := 0
	for _, e := range p.queue {
		if !e.ok {
			if !end && (now.Sub(e.Time) <= staleAfter || streamSeq-e.UnitSeq <= staleMsgs) {
				break
			}
			p.unanswered(e)
		}
		if err := p.out(e); err != nil {
			return err
		}
		n++
	}
	p.queue = p.queue[n:]
	return nil
}

// unanswered makes up the result of a unit read and never answered.
func (p *pairer) unanswered(e *entry) {
	if es := p.open[e.key]; len(es) > 0 && es[0] == e {
		if len(es) == 1 {
			delete(p.open, e.key)
		} else {
			p.open[e.key] = es[1:]
		}
	}
	r := result.Record{Problem: e.Problem, Port: e.Port, Seq: e.Seq, Line: e.line, Origin: e.key.origin,
		Error: "read, never answered: no result is kept (the daemon stopped, or no worker answered)"}
	e.Result, e.Unanswered = r.AppendJSON(nil), true
}

func (p *pairer) out(e *entry) error {
	if p.q.Last > 0 && !p.live {
		if len(p.ring) < p.q.Last {
			p.ring = append(p.ring, e)
			return nil
		}
		p.ring[p.head] = e
		p.head = (p.head + 1) % len(p.ring)
		return nil
	}
	return p.emit(&e.Entry)
}

// endReplay is the end of the history: what waits is handed on, the last q.Last of
// it with --last.
func (p *pairer) endReplay() error {
	last, err := p.replayed()
	if err != nil {
		return err
	}
	return p.release(last)
}

// replayed ends the replay without handing anything on yet: what waits is flushed
// (without Follow), and the last q.Last entries (with --last) are returned, oldest
// first, for release.
func (p *pairer) replayed() ([]*entry, error) {
	if !p.q.Follow {
		if err := p.flush(time.Time{}, 0, true); err != nil {
			return nil, err
		}
	}
	last := make([]*entry, 0, len(p.ring))
	for i := range p.ring {
		last = append(last, p.ring[(p.head+i)%len(p.ring)])
	}
	return last, nil
}

// release hands on what replayed returned; from then on p is live: each entry is
// handed on as it is complete.
func (p *pairer) release(last []*entry) error {
	p.live, p.ring = true, nil
	for _, e := range last {
		if err := p.emit(&e.Entry); err != nil {
			return err
		}
	}
	return nil
}
