package history

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/goclub/scoreboard/logging"
)

// Bounds of the recorder.
const (
	// recordBytes bounds the messages waiting for the stream's ack, in memory.
	// 64 MiB is a minute of three ports' flood, and hours of a club's games; a
	// stream without a leader for longer than that holds drops the oldest, each
	// counted and logged.
	recordBytes = 64 << 20
	// recordInFlight bounds the publishes waiting for their ack: the pipe to the
	// stream's leader, not the queue (which is recordBytes).
	recordInFlight = 1024
	// recordAckWait is how long a publish waits for its ack before it is sent
	// again: a leader lost with the publish in hand never answers.
	recordAckWait = 5 * time.Second
	// RecordDuplicates is the least deduplication window of a recorded stream: a
	// message the stream stored whose ack was lost with its leader is sent again
	// after the election (4 to 9 s) and the back-off, and must be known then.
	RecordDuplicates = 2 * time.Minute
)

// recordRetry spaces the publishes after a refusal: the stream is without a leader
// for seconds, and every message refused meanwhile waits behind the first.
var recordRetry = backoff.Policy{Min: 50 * time.Millisecond, Max: 2 * time.Second}

// Recorder is the actor that writes the history stream: the only one. The stream
// takes nothing off the bus (a tool may publish any dump there, with any header),
// only the Repair subjects, which the daemon alone may publish. The daemon's ports
// hand the recorder (Record) each dump they publish and each result they take as a
// unit's outcome; it publishes each on its Repair subject (stored under the
// original one, by the stream's subject transform), keeps it until the stream acks
// it, and sends it again, after a back-off, for as long as the stream does not: a
// replicated stream without a leader for a while, a stream whose intake is full. Its
// Nats-Msg-Id, the port's, makes a message sent again that the stream had stored
// (its ack lost) a duplicate, dropped within the window.
//
// It never holds a port back: Record only queues. What it cannot keep (more than
// recordBytes waiting; a stop whose drain ends first) is counted and logged. As the
// stream acks a result it tells the display writer that waits for it (NoteStored).
type Recorder struct {
	nc     *nats.Conn
	js     jetstream.JetStream // the recorder's own: its pending bound and ack wait
	subj   bus.Subjects
	stream string
	log    zerolog.Logger
	warn   *logging.Sampler

	mu       sync.Mutex
	again    []*recording // refused, sent before fresh, oldest first
	fresh    []*recording // handed by Record, oldest first
	bytes    int
	failures int       // refusals in a row
	pause    time.Time // no publish before this (the back-off)
	wake     chan struct{}

	// noted, if set, is told of each result the stream acks (NoteStored).
	noted atomic.Pointer[func(origin string, seq uint64)]

	// refusing is failures > 0, read without the lock: every display writer asks
	// it (Storing) for every outcome it holds.
	refusing atomic.Bool

	stored, resent, dropped atomic.Uint64
	waiting                 atomic.Int64
}

// recording is a message to store, as the port published it, on its Repair subject.
type recording struct {
	msg  *nats.Msg
	id   string
	size int
	// origin and seq are a result's unit, from its id: told to NoteStored once
	// the stream acks it; "" for a dump.
	origin string
	seq    uint64
}

// NewRecorder makes the actor for the stream of prefix on nc; Run runs it.
func NewRecorder(nc *nats.Conn, prefix string, log zerolog.Logger) (*Recorder, error) {
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(recordInFlight), jetstream.WithPublishAsyncTimeout(recordAckWait))
	if err != nil {
		return nil, fmt.Errorf("history record: %w", err)
	}
	subj := bus.Subjects{Prefix: prefix}
	return &Recorder{
		nc: nc, js: js, subj: subj, stream: subj.Stream(),
		log:  log.With().Str("component", "history").Logger(),
		warn: logging.NewSampler(5, time.Second, 100),
		wake: make(chan struct{}, 1),
	}, nil
}

// Stored is how many messages the stream has acked (duplicates among them);
// Resent how many publishes were sent again after a refusal or no ack; Dropped how
// many messages were given up (beyond recordBytes, or at a stop); Waiting how many
// wait for their ack now. Safe for concurrent use.
func (r *Recorder) Stored() uint64  { return r.stored.Load() }
func (r *Recorder) Resent() uint64  { return r.resent.Load() }
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }
func (r *Recorder) Waiting() int    { return int(r.waiting.Load()) }

// Held is how many messages wait to be stored: queued, or published and not acked
// yet. Safe for concurrent use.
func (r *Recorder) Held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.again) + len(r.fresh) + int(r.waiting.Load())
}

// Storing reports whether the stream takes what the recorder publishes: false from
// a refusal until the next ack (a stream without a leader), when a display writer
// should not hold its answers for their results (daemon.Stored). Safe for
// concurrent use.
func (r *Recorder) Storing() bool { return !r.refusing.Load() }

// NoteStored has the recorder tell stored of every result the stream acks (its
// port's origin and its unit's seq): the result is in the store then (an R1 file
// store writes it before it acks; a replicated one has its quorum), and the display
// writer holding the unit's answer for it (daemon.Stored) may write it. It comes
// from the publish's own ack, so that no other message in the stream, nor a reader
// behind, holds an answer back. Call it before the ports start.
func (r *Recorder) NoteStored(stored func(origin string, seq uint64)) { r.noted.Store(&stored) }

// Record takes a dump or result from the daemon's own ports (daemon.Config.Record):
// what a port published and took as its outcome reaches the stream with acks,
// whatever the bus and the stream do meanwhile. Safe for concurrent use; it never
// blocks.
func (r *Recorder) Record(m *nats.Msg) { r.keep(m) }

// keep queues a message, and lets the oldest go beyond recordBytes.
func (r *Recorder) keep(m *nats.Msg) {
	rec := &recording{
		msg: &nats.Msg{Subject: r.subj.Repair(m.Subject), Header: m.Header, Data: m.Data},
		id:  m.Header.Get(bus.HeaderMsgID),
	}
	if origin, seq, ok := bus.ParseResultID(rec.id); ok {
		rec.origin, rec.seq = origin, seq
	}
	rec.size = len(rec.msg.Subject) + len(m.Data) + 64
	for k, vs := range m.Header {
		rec.size += len(k)
		for _, v := range vs {
			rec.size += len(v)
		}
	}
	r.mu.Lock()
	r.fresh = append(r.fresh, rec)
	r.bytes += rec.size
	var dropped int
	// The unacked count toward the bound but cannot be dropped: the queued go, the
	// newest last. The queues never run dry here (what keep adds keeps the total
	// within the bound once it drops them all), but a loop that indexes them says so
	// itself rather than trusting it: the daemon never panics.
	for r.bytes > recordBytes && len(r.again)+len(r.fresh) > 0 {
		q := &r.again
		if len(*q) == 0 {
			q = &r.fresh
		}
		r.bytes -= (*q)[0].size
		(*q)[0] = nil
		*q = (*q)[1:]
		dropped++
	}
	r.mu.Unlock()
	if dropped > 0 {
		n := r.dropped.Add(uint64(dropped))
		r.warn.Event(&r.log, zerolog.ErrorLevel, "record dropped").Int("dropped", dropped).Uint64("dropped_total", n).Int("bytes", recordBytes).
			Msg("history: the stream has not taken the ports' dumps and results for so long that the recorder's memory is full: the oldest are not kept; a replicated stream needs a majority of its nodes back to elect a leader")
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// next takes the message to publish next, the refused first; nil when none waits or
// the back-off has not run out (wait is then how long it has left).
func (r *Recorder) next() (rec *recording, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := time.Until(r.pause); d > 0 {
		return nil, d
	}
	for _, q := range []*[]*recording{&r.again, &r.fresh} {
		if len(*q) > 0 {
			rec = (*q)[0]
			(*q)[0] = nil
			*q = (*q)[1:]
			return rec, 0
		}
	}
	return nil, -1
}

// refused puts a message back at the end of the refused ones, and backs off: what
// one publish met (no leader), the next meets too.
func (r *Recorder) refused(rec *recording, err error) {
	r.mu.Lock()
	r.again = append(r.again, rec)
	r.failures++
	r.refusing.Store(true)
	r.pause = time.Now().Add(recordRetry.Wait(r.failures - 1))
	failures := r.failures
	r.mu.Unlock()
	r.resent.Add(1)
	if failures == 1 {
		r.warn.Warn(&r.log, "record refused").Err(err).Str("stream", r.stream).
			Msg("history: the stream does not take the ports' dumps and results (no leader yet? its intake full?); the recorder keeps them, and sends them again until it does")
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// refusedForGood says whether the stream refused a message for what it is, not for
// the moment: larger than the stream keeps (JSStreamMessageExceedsMaximumErr).
// Every other refusal is sent again: "duplicate message id is in process" (a publish
// that timed out still in the stream's pipeline, seen in CI) is followed by an ack,
// or by the message's loss with its leader.
func refusedForGood(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == errMessageTooLarge
}

// errMessageTooLarge is nats-server's JSStreamMessageExceedsMaximumErr.
const errMessageTooLarge jetstream.ErrorCode = 10054

// giveUp lets go of a message the stream refused for good, or one without an id
// that it may or may not hold.
func (r *Recorder) giveUp(rec *recording, err error) {
	r.mu.Lock()
	r.bytes -= rec.size
	r.mu.Unlock()
	n := r.dropped.Add(1)
	r.warn.Warn(&r.log, "record given up").Err(err).Str("subject", rec.msg.Subject).Int("bytes", len(rec.msg.Data)).Uint64("dropped_total", n).
		Msg("history: the stream did not take a dump or result, and sending it again would not help (refused for what it is, or without a Nats-Msg-Id and maybe held already): not kept")
}

// acked counts a message stored, and ends the back-off.
func (r *Recorder) acked(rec *recording) {
	r.mu.Lock()
	r.bytes -= rec.size
	spell := r.failures
	r.failures = 0
	r.refusing.Store(false)
	r.mu.Unlock()
	r.stored.Add(1)
	if rec.origin != "" {
		if f := r.noted.Load(); f != nil {
			(*f)(rec.origin, rec.seq)
		}
	}
	if spell > 0 {
		r.log.Info().Str("stream", r.stream).Int("refusals", spell).Uint64("resent_total", r.resent.Load()).
			Msg("history: the stream takes the ports' dumps and results again; what it refused is sent again")
	}
}

// inFlight is a publish waiting for its ack.
type inFlight struct {
	rec *recording
	f   jetstream.PubAckFuture
}

// Run records until ctx ends; then it stops taking from the bus and goes on
// publishing what it holds until flushBy's time, and counts what is left as
// dropped.
func (r *Recorder) Run(ctx context.Context, flushBy func() time.Time) error {
	acks := make(chan inFlight, recordInFlight)
	ackerDone := make(chan struct{})
	go r.acker(acks, ackerDone)
	r.send(ctx, acks, nil)

	// The stop: what the ports handed over is published until the deadline.
	deadline := time.Now().Add(5 * time.Second)
	if flushBy != nil {
		deadline = flushBy()
	}
	stop, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	r.send(stop, acks, r.empty)
	close(acks)
	select {
	case <-ackerDone:
	case <-stop.Done():
	}
	r.mu.Lock()
	left := len(r.again) + len(r.fresh) + int(r.waiting.Load())
	r.mu.Unlock()
	if left > 0 {
		n := r.dropped.Add(uint64(left))
		r.log.Error().Int("not_stored", left).Uint64("dropped_total", n).Str("stream", r.stream).
			Msg("stopping: the history stream has not acked every dump and result within the drain; those are not in the history")
	}
	return nil
}

// empty reports whether nothing waits to be published or acked.
func (r *Recorder) empty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.again)+len(r.fresh) == 0 && r.waiting.Load() == 0
}

// send publishes the messages as they come, until ctx ends or done reports true.
func (r *Recorder) send(ctx context.Context, acks chan<- inFlight, done func() bool) {
	idle := time.NewTimer(time.Hour)
	defer idle.Stop()
	for {
		rec, wait := r.next()
		if rec == nil {
			switch {
			case done != nil && done():
				return
			case done != nil && (wait < 0 || wait > stopPoll):
				wait = stopPoll // a stop ends on its acks, which wake nothing
			case wait < 0:
				wait = time.Hour
			}
			idle.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-r.wake:
			case <-idle.C:
			}
			continue
		}
		f, err := r.js.PublishMsgAsync(rec.msg)
		if err != nil {
			r.refused(rec, err)
			if errors.Is(err, nats.ErrConnectionClosed) || ctx.Err() != nil {
				return
			}
			continue
		}
		r.waiting.Add(1)
		acks <- inFlight{rec, f} // the acker takes each within recordAckWait
	}
}

// stopPoll is how often a stop looks whether everything is acked.
const stopPoll = 20 * time.Millisecond

// acker takes the acks in the order of the publishes: a publish answers within
// recordAckWait, so one waited for holds the others back no longer than that.
func (r *Recorder) acker(acks <-chan inFlight, done chan<- struct{}) {
	defer close(done)
	for p := range acks {
		select {
		case <-p.f.Ok():
			r.waiting.Add(-1)
			r.acked(p.rec)
		case err := <-p.f.Err():
			r.waiting.Add(-1)
			switch {
			case refusedForGood(err):
				// The stream answered, and will answer so again: a dump larger
				// than it keeps (MaxMsgSize), say. Sent again, it would hold every
				// other message back behind the back-off.
				r.giveUp(p.rec, err)
			case p.rec.id == "" && !errors.Is(err, jetstream.ErrNoStreamResponse):
				// Without an id, a message the stream may have stored (its ack
				// lost) would be stored twice if sent again: given up.
				r.giveUp(p.rec, err)
			default:
				r.refused(p.rec, err)
			}
		}
	}
}
