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
	// ownOrigins bounds the origins the recorder knows as the daemon's own ports':
	// every port start is a new one, and a board that comes and goes for weeks
	// would otherwise grow the set for the daemon's life. Far more than a daemon's
	// ports; the one forgotten is the one that recorded least recently (a port
	// stopped long ago), and a forgotten port's copy from the bus is only published
	// twice, the second a duplicate the stream drops.
	ownOrigins = 256
)

// recordRetry spaces the publishes after a refusal: the stream is without a leader
// for seconds, and every message refused meanwhile waits behind the first.
var recordRetry = backoff.Policy{Min: 50 * time.Millisecond, Max: 2 * time.Second}

// Recorder is the actor that stores every dump and result the bus carries in a
// replicated history stream, with acknowledged publishes. A replicated stream
// stores only on the node that leads it: a stream that captured the bus subjects
// (as one of one replica does) would miss whatever the bus carried from the loss
// of its leader until another was elected and its interest had reached every
// server, with nothing to tell what was missed. So a replicated stream captures
// only the Repair subjects (stored under the original ones, by a subject
// transform), and the recorder publishes each dump and result it sees there, keeps
// it until the stream acks it, and sends it again, after a back-off, for as long as
// the stream does not: through any sequence of leader changes. Its Nats-Msg-Id
// makes a message sent again that the stream had stored (its ack lost with the
// leader) a duplicate, dropped within the window (RecordDuplicates at least).
//
// It never holds a port back: the ports publish on the bus, and the recorder takes
// its copies from a subscription. What it cannot keep (more than recordBytes
// waiting; a stop whose drain ends first) is counted and logged.
type Recorder struct {
	nc     *nats.Conn
	js     jetstream.JetStream // the recorder's own: its pending bound and ack wait
	subj   bus.Subjects
	stream string
	log    zerolog.Logger
	warn   *logging.Sampler

	mu       sync.Mutex
	again    []*recording // refused, sent before fresh, oldest first
	fresh    []*recording // from the bus, oldest first
	bytes    int
	failures int       // refusals in a row
	pause    time.Time // no publish before this (the back-off)
	wake     chan struct{}

	subs []*nats.Subscription

	ownMu   sync.Mutex
	own     map[string]uint64 // origins of the daemon's own ports (Record): when each last recorded
	ownTick uint64

	// refusing is failures > 0, read without the lock: every display writer asks
	// it (Storing) for every outcome it holds.
	refusing atomic.Bool

	stored, resent, dropped atomic.Uint64
	waiting                 atomic.Int64
}

// recording is a message to store, as the bus carried it, on its Repair subject.
type recording struct {
	msg  *nats.Msg
	id   string
	size int
}

// NewRecorder makes the actor for the stream of prefix on nc; Subscribe, then Run.
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
		own:  map[string]uint64{},
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

// Subscribe subscribes to the dumps and the results, and returns once the server
// has the subscriptions: everything published after it is recorded.
func (r *Recorder) Subscribe() error {
	for _, s := range []string{r.subj.Prefix + ".dump.>", r.subj.AllResults()} {
		sub, err := r.nc.Subscribe(s, r.fromBus)
		if err != nil {
			r.unsubscribe()
			return fmt.Errorf("history record: subscribe to %s: %w", s, err)
		}
		// The callback only appends; recordBytes is the bound that counts.
		if err := sub.SetPendingLimits(-1, recordBytes); err != nil {
			r.log.Warn().Err(err).Msg("set the history recorder's subscription limits")
		}
		r.subs = append(r.subs, sub)
	}
	if err := r.nc.FlushTimeout(5 * time.Second); err != nil {
		r.log.Warn().Err(err).Msg("the server has not confirmed the history recorder's subscriptions yet")
	}
	return nil
}

func (r *Recorder) unsubscribe() {
	for _, sub := range r.subs {
		_ = sub.Unsubscribe()
	}
}

// Record takes a dump or result from the daemon's own ports (daemon.Config.Record):
// what a port published and took as its outcome reaches the stream even when the
// daemon's connection was away as the bus carried it (its node lost), when the
// subscriptions cannot see it. The subscriptions leave the messages of an origin
// recorded here to it. Safe for concurrent use; it never blocks.
func (r *Recorder) Record(m *nats.Msg) {
	if d, _ := bus.ReadDump(m.Header); d.Origin != "" {
		r.ownRecorded(d.Origin)
	}
	r.keep(m)
}

// ownRecorded marks origin as the daemon's own, recorded now, and forgets the
// least recently recorded beyond ownOrigins.
func (r *Recorder) ownRecorded(origin string) {
	r.ownMu.Lock()
	defer r.ownMu.Unlock()
	r.ownTick++
	_, known := r.own[origin]
	r.own[origin] = r.ownTick
	if known || len(r.own) <= ownOrigins {
		return
	}
	// A new origin beyond the bound: a scan of ownOrigins entries, once a port start.
	oldest, at := "", r.ownTick
	for o, t := range r.own {
		if t < at {
			oldest, at = o, t
		}
	}
	delete(r.own, oldest)
}

// isOwn reports whether origin is one of the daemon's own ports'.
func (r *Recorder) isOwn(origin string) bool {
	r.ownMu.Lock()
	defer r.ownMu.Unlock()
	_, ok := r.own[origin]
	return ok
}

// fromBus is the subscriptions' callback: a message of the daemon's own ports is
// left to Record.
func (r *Recorder) fromBus(m *nats.Msg) {
	d, _ := bus.ReadDump(m.Header) // a dump's
	origin := d.Origin
	if origin == "" {
		origin, _, _ = bus.ParseResultID(m.Header.Get(bus.HeaderMsgID))
	}
	if origin != "" {
		if r.isOwn(origin) {
			return
		}
	}
	r.keep(m)
}

// keep queues a message, and lets the oldest go beyond recordBytes.
func (r *Recorder) keep(m *nats.Msg) {
	rec := &recording{
		msg: &nats.Msg{Subject: r.subj.Repair(m.Subject), Header: m.Header, Data: m.Data},
		id:  m.Header.Get(bus.HeaderMsgID),
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
			Msg("history: the replicated stream has not taken the dumps and results for so long that the recorder's memory is full: the oldest are not kept; bring back a majority of the stream's nodes so that it elects a leader")
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
			Msg("history: the replicated stream does not take the dumps and results (no leader yet?); the recorder keeps them, and sends them again until it does")
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
		Msg("history: the replicated stream did not take a dump or result, and sending it again would not help (refused for what it is, or without a Nats-Msg-Id and maybe held already): not kept")
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
	if spell > 0 {
		r.log.Info().Str("stream", r.stream).Int("refusals", spell).Uint64("resent_total", r.resent.Load()).
			Msg("history: the replicated stream takes the dumps and results again; what it refused is sent again")
	}
}

// inFlight is a publish waiting for its ack.
type inFlight struct {
	rec *recording
	f   jetstream.PubAckFuture
}

// Run records until ctx ends; then it stops taking from the bus and goes on
// publishing what it holds until flushBy's time, and counts what is left as
// dropped. It subscribes first, unless Subscribe did.
func (r *Recorder) Run(ctx context.Context, flushBy func() time.Time) error {
	if r.subs == nil {
		if err := r.Subscribe(); err != nil {
			return err
		}
	}
	acks := make(chan inFlight, recordInFlight)
	ackerDone := make(chan struct{})
	go r.acker(acks, ackerDone)
	r.send(ctx, acks, nil)

	// The stop: whatever the subscriptions hold is taken first (the ports and the
	// workers have stopped), then published until the deadline.
	deadline := time.Now().Add(5 * time.Second)
	if flushBy != nil {
		deadline = flushBy()
	}
	drainBy := time.Now().Add(time.Second)
	if deadline.Before(drainBy) {
		drainBy = deadline
	}
	r.drainSubs(drainBy)
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
			Msg("stopping: the replicated history stream has not acked every dump and result within the drain; those are not in the history")
	}
	return nil
}

// drainSubs stops the subscriptions once their callbacks have taken what reached
// them, until deadline.
func (r *Recorder) drainSubs(deadline time.Time) {
	for _, sub := range r.subs {
		_ = sub.Drain()
	}
	for _, sub := range r.subs {
		for sub.IsValid() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	r.unsubscribe()
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
