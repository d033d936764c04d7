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
)

// Bounds of the repairer.
const (
	// repairSpan is how long the repairer keeps what the bus carried: a stream
	// whose leader is lost elects another within seconds (nats-server's election
	// timeout is 4 to 9 s), so what it missed is younger than this when it is back.
	repairSpan = 2 * time.Minute
	// repairBytes bounds the memory of what is kept; beyond, the oldest goes first.
	repairBytes = 64 << 20
	// repairSkew is read in the stream before the oldest message kept: the stream's
	// times are its leader's clock, the repairer's its own machine's.
	repairSkew = 30 * time.Second
	// repairTimeout bounds a pass: a stream without a leader does not answer, and
	// the pass is made again later.
	repairTimeout = 10 * time.Second
	// repairRetries bounds the passes made again after the last one due failed,
	// repairPasses' last interval apart.
	repairRetries = 20
	// repairLast bounds the pass made when the daemon stops with passes due.
	repairLast = 3 * time.Second
)

// leaderElected is the subject prefix of nats-server's advisory that a replicated
// stream has elected a leader.
const leaderElected = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."

// repairPasses are when, after a new leader is elected, the repairer compares the
// stream with what the bus carried. Not at once: the new leader's interest in the
// subjects reaches the other servers over the routes a moment after it is elected,
// and what they carry meanwhile is missed too; the later passes catch that, and a
// leader lost again.
var repairPasses = []time.Duration{time.Second, 5 * time.Second, 15 * time.Second}

// Repairer is the actor that makes a replicated history stream hold every dump and
// result even when the node leading it is lost. The stream captures the subjects on
// the server without acks, so what the bus carries while the stream has no leader
// (from the loss until the others elect one, seconds) is not stored, though every
// port still gets its answers. The repairer keeps the dumps and results of the last
// repairSpan as any subscriber sees them; when the stream elects a leader
// ($JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.<stream>) it reads the ids
// (Nats-Msg-Id) the stream holds since the oldest message kept, and publishes those
// it lacks again on their Repair subject, which the stream stores under the
// original subject. A message published again that the stream took meanwhile is
// dropped by its id, within the stream's duplicates window. Messages without an id
// (a dump published by hand) cannot be told apart and are not repaired.
type Repairer struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	subj   bus.Subjects
	stream string
	log    zerolog.Logger

	mu    sync.Mutex
	kept  []keptMsg // oldest first
	bytes int

	elected chan struct{}
	subs    []*nats.Subscription

	repaired atomic.Uint64
	passes   atomic.Uint64
}

// keptMsg is a dump or a result as the bus carried it.
type keptMsg struct {
	id      string
	subject string
	header  nats.Header
	data    []byte
	at      time.Time
}

// NewRepairer makes the actor for the stream of prefix; Subscribe, then Run.
func NewRepairer(nc *nats.Conn, js jetstream.JetStream, prefix string, log zerolog.Logger) *Repairer {
	subj := bus.Subjects{Prefix: prefix}
	return &Repairer{
		nc: nc, js: js, subj: subj, stream: subj.Stream(),
		log:     log.With().Str("component", "history").Logger(),
		elected: make(chan struct{}, 1),
	}
}

// Repaired is how many messages the repairer has put back in the stream; Passes how
// many passes it has made (compared the stream with what the bus carried, or tried
// to).
func (r *Repairer) Repaired() uint64 { return r.repaired.Load() }
func (r *Repairer) Passes() uint64   { return r.passes.Load() }

// Subscribe subscribes to the dumps, the results and the stream's leader elections,
// and returns once the server has the subscriptions.
func (r *Repairer) Subscribe() error {
	for _, s := range []string{r.subj.Prefix + ".dump.>", r.subj.AllResults()} {
		sub, err := r.nc.Subscribe(s, r.keep)
		if err != nil {
			r.unsubscribe()
			return fmt.Errorf("history repair: subscribe to %s: %w", s, err)
		}
		// The callback only appends: the default limits would let half a million
		// messages wait; a flood beyond what it takes is the bounded loss nats.go
		// reports as a slow consumer.
		if err := sub.SetPendingLimits(65536, repairBytes); err != nil {
			r.log.Warn().Err(err).Msg("set the history repair's subscription limits")
		}
		r.subs = append(r.subs, sub)
	}
	sub, err := r.nc.Subscribe(leaderElected+r.stream, func(*nats.Msg) {
		select {
		case r.elected <- struct{}{}:
		default:
		}
	})
	if err != nil {
		r.unsubscribe()
		return fmt.Errorf("history repair: subscribe to the stream's leader elections: %w", err)
	}
	r.subs = append(r.subs, sub)
	if err := r.nc.FlushTimeout(5 * time.Second); err != nil {
		r.log.Warn().Err(err).Msg("the server has not confirmed the history repair's subscriptions yet")
	}
	return nil
}

func (r *Repairer) unsubscribe() {
	for _, sub := range r.subs {
		_ = sub.Unsubscribe()
	}
}

// keep is the subscriptions' callback: it keeps a message with an id, and lets go
// of those older than repairSpan or beyond repairBytes.
func (r *Repairer) keep(m *nats.Msg) {
	id := m.Header.Get(bus.HeaderMsgID)
	if id == "" {
		return
	}
	now := time.Now()
	k := keptMsg{id: id, subject: m.Subject, header: m.Header, data: m.Data, at: now}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kept = append(r.kept, k)
	r.bytes += k.size()
	drop := 0
	for drop < len(r.kept) && (r.bytes > repairBytes || now.Sub(r.kept[drop].at) > repairSpan) {
		r.bytes -= r.kept[drop].size()
		drop++
	}
	if drop > 0 {
		// Moved down rather than resliced, so that the array does not grow forever.
		r.kept = r.kept[:copy(r.kept, r.kept[drop:])]
	}
}

func (k *keptMsg) size() int { return len(k.id) + len(k.subject) + len(k.data) + 64 }

// Run repairs the stream after each leader election until ctx ends. A pass that
// fails (the stream still without a leader, say) is made again later; when ctx ends
// with passes still due, one last pass, bounded by repairLast, is made first, so
// that a daemon stopped just after an election leaves the stream whole.
func (r *Repairer) Run(ctx context.Context) error {
	if r.subs == nil {
		if err := r.Subscribe(); err != nil {
			return err
		}
	}
	defer r.unsubscribe()
	var due []time.Time // the passes still to make
	failed := 0
	for {
		var wait <-chan time.Time
		if len(due) > 0 {
			wait = time.After(time.Until(due[0]))
		}
		select {
		case <-ctx.Done():
			if len(due) > 0 {
				last, cancel := context.WithTimeout(context.WithoutCancel(ctx), repairLast)
				r.pass(last)
				cancel()
			}
			return nil
		case <-r.elected:
			r.log.Info().Str("stream", r.stream).Msg("the history stream has a new leader: what it missed meanwhile will be put back")
			now := time.Now()
			due, failed = due[:0], 0
			for _, d := range repairPasses {
				due = append(due, now.Add(d))
			}
		case <-wait:
			due = due[1:]
			if !r.pass(ctx) && len(due) == 0 && failed < repairRetries {
				failed++
				due = append(due, time.Now().Add(repairPasses[len(repairPasses)-1]))
			}
		}
	}
}

// pass makes one repair, bounded by repairTimeout, and says whether it was made.
func (r *Repairer) pass(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, repairTimeout)
	defer cancel()
	if err := r.repair(ctx); err != nil {
		r.log.Warn().Err(err).Str("stream", r.stream).Msg("history repair: could not compare the stream with what the bus carried; trying again later")
		return false
	}
	return true
}

// repair publishes again, on its Repair subject, each message kept that the stream
// does not hold, and forgets those it holds: they are stored for good.
func (r *Repairer) repair(ctx context.Context) error {
	defer r.passes.Add(1)
	r.mu.Lock()
	kept := append([]keptMsg(nil), r.kept...)
	r.mu.Unlock()
	if len(kept) == 0 {
		return nil
	}
	held, err := r.heldIDs(ctx, kept[0].at.Add(-repairSkew))
	if err != nil {
		return err
	}
	var put int
	for _, k := range kept {
		if _, ok := held[k.id]; ok {
			continue
		}
		m := &nats.Msg{Subject: r.subj.Repair(k.subject), Header: k.header, Data: k.data}
		if err := r.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("history repair: publish %s: %w", m.Subject, err)
		}
		put++
	}
	if err := r.nc.FlushTimeout(5 * time.Second); err != nil {
		return fmt.Errorf("history repair: flush: %w", err)
	}
	r.repaired.Add(uint64(put))
	r.forget(held)
	if put > 0 {
		r.log.Warn().Str("stream", r.stream).Int("repaired", put).Int("kept", len(kept)).Uint64("repaired_total", r.repaired.Load()).
			Msg("history repair: put back in the stream the dumps and results it missed while it had no leader")
	}
	return nil
}

// forget lets go of the messages the stream holds.
func (r *Repairer) forget(held map[string]struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, k := range r.kept {
		if _, ok := held[k.id]; ok {
			r.bytes -= k.size()
			continue
		}
		r.kept[n] = k
		n++
	}
	clear(r.kept[n:])
	r.kept = r.kept[:n]
}

// heldIDs reads the ids of the dumps and results the stream holds since since,
// with an ordered consumer that takes the headers only.
func (r *Repairer) heldIDs(ctx context.Context, since time.Time) (map[string]struct{}, error) {
	c, err := r.js.OrderedConsumer(ctx, r.stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{r.subj.Prefix + ".dump.>", r.subj.AllResults()},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy,
		OptStartTime:   &since,
		HeadersOnly:    true,
	})
	if err != nil {
		return nil, fmt.Errorf("read stream %s: %w", r.stream, err)
	}
	held := map[string]struct{}{}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read stream %s: %w", r.stream, err)
		}
		batch, err := c.Fetch(1000, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, fmt.Errorf("read stream %s: %w", r.stream, err)
		}
		n, pending := 0, uint64(0)
		for m := range batch.Messages() {
			n++
			if id := m.Headers().Get(bus.HeaderMsgID); id != "" {
				held[id] = struct{}{}
			}
			if md, err := m.Metadata(); err == nil {
				pending = md.NumPending
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return nil, fmt.Errorf("read stream %s: %w", r.stream, err)
		}
		if n == 0 || pending == 0 {
			return held, nil
		}
	}
}
