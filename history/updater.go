package history

import (
	"context"
	"encoding/json"
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

// Bounds of the updater.
const (
	// updaterQueue is how many results wait for the actor, read from the stream
	// ahead of it; the reader waits beyond (a consumer of the stream drops nothing).
	// 65,536 is 20 s of three ports' flood (1 MB of queue).
	updaterQueue = 1 << 16
	// putTimeout bounds the wait for the bucket's ack of a put.
	putTimeout = 5 * time.Second
	// maxPending bounds the puts waiting for their ack. There is at most one a port.
	maxPending = 256
	// putInterval is the least time between two puts of a port. A board on a screen
	// a tenth of a second late is not late, and a port answering thousands of units
	// a second would otherwise cost a put (a lookup of its unit and a message stored
	// in the bucket) every few of them. The port's latest is always put in the end.
	putInterval = 100 * time.Millisecond
	// maxRetryWait bounds the wait before a refused put is tried again; each refusal
	// of the same value doubles it from putInterval, so a bucket gone for good is not
	// asked ten times a second forever, and one back is filled within seconds.
	maxRetryWait = 5 * time.Second
	// lookupTries bounds the look-ups of a result's unit (lookupWait apart, doubling):
	// a look-up that times out on a busy machine is tried again; past them the value
	// is put without its unit, counted and logged.
	lookupTries = 6
	lookupWait  = 100 * time.Millisecond
)

var (
	putRetry    = backoff.Policy{Min: putInterval, Max: maxRetryWait}
	lookupRetry = backoff.Policy{Min: lookupWait, Max: lookupWait << lookupTries}
)

// NewJetStream is the JetStream context of the daemon's history connection, with the
// bounds on asynchronous puts.
func NewJetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	return jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(maxPending), jetstream.WithPublishAsyncTimeout(putTimeout))
}

// Updater is the actor that keeps the bucket's value of each port: the port's latest
// result in the stream, its unit's text, when it was stored, its stream sequence
// ("stream_seq"), and for othello the board after the command.
//
// The bucket is a function of the stream: the updater reads the results from the
// stream itself, in stream order, with an ordered consumer that starts with the
// latest result of each port (last per subject) and goes on with every result
// stored after. So at start-up it puts each port's latest wherever the bucket holds
// another (a daemon killed before its last put), after a lost connection or
// JetStream it goes on where it was, and what the bucket holds last is the stream's
// last, never a result the stream did not keep. The stream holds only what the
// daemon's own ports read and the outcomes they took (the Recorder is its only
// writer), so a port's board is always one of that port's units: a tool's dump,
// whatever its subject and headers, is never one. It never holds a port back.
//
// It puts at most one value a port at a time, without waiting for the ack, and when
// results come faster than the bucket acks, only a port's latest value is put. A put
// the bucket refuses is logged (sampled), counted, and tried again.
type Updater struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	subj bus.Subjects
	key  string // the bucket's subject prefix: $KV.<bucket>.
	log  zerolog.Logger
	warn *logging.Sampler

	local func(port, origin string, seq uint64) []byte // see LookUpFirst
	ports map[string]*portValue
	// refusedPorts counts the results of ports not kept (see port).
	refusedPorts atomic.Int64
	stream       jetstream.Stream // found at the first lookup
	msgs         chan jetstream.Msg
	itMu         sync.Mutex
	it           jetstream.MessagesContext // the reader's, under itMu
	reader       chan struct{}             // closed when the reader has stopped
	quit         chan struct{}             // closed when Run returns
	// The start's reader of the results stored before Subscribe (the stream's last
	// startWindow messages, up to windowEnd): windowIt, set before Run; windowRead
	// set once it has handed them on, or given up.
	windowIt   jetstream.MessagesContext
	windowEnd  uint64
	windowRead atomic.Bool

	puts, refused, lost atomic.Uint64
	inFlight            atomic.Int64  // puts sent and not acked yet
	behind              atomic.Uint64 // results in the stream not read yet, at the last read

	// resets counts the reader's consumers made again (see read).
	resets atomic.Uint64
	// handed is the stream sequence of the last result the reader handed on;
	// lagging counts the comparisons in a row that found the stream's latest
	// result beyond it (see reconcile).
	handed  atomic.Uint64
	lagging int

	record *Recorder // the stream's only writer; nil in a reader's tests
	// stopLeft gives, when a stop begins, the time it may take (StopWithin); stopBy
	// is the stop's deadline once it began.
	stopLeft func() time.Duration
	stopBy   time.Time

	started time.Time
}

// portValue is a port's latest result, and the put in flight of an earlier one.
type portValue struct {
	result    []byte    // to put; nil when put already
	at        time.Time // when the stream stored it
	seq       uint64    // its stream sequence
	origin    string    // its publisher's origin
	unitSeq   uint64    // and the unit's seq: of one origin, the highest is the latest
	stored    uint64    // the stream sequence of the value the bucket holds
	lookups   int       // failed look-ups of result's unit
	put       jetstream.PubAckFuture
	putting   []byte        // the result of the put in flight, put again if it is refused
	putAt     time.Time     // and when it came
	putSeq    uint64        // and its stream sequence
	retry     time.Duration // the wait before putting again a value refused; 0 when none was
	sent      time.Time     // when the last put was sent
	notBefore time.Time     // no put before this (a refusal's or a look-up's back-off)
}

// NewUpdater makes the actor; Run runs it. js must come from NewJetStream on nc.
func NewUpdater(nc *nats.Conn, js jetstream.JetStream, prefix string, log zerolog.Logger) *Updater {
	subj := bus.Subjects{Prefix: prefix}
	return &Updater{
		nc: nc, js: js, subj: subj, key: "$KV." + subj.Boards() + ".",
		log:   log.With().Str("component", "history").Logger(),
		warn:  logging.NewSampler(10, time.Second, 100),
		ports: map[string]*portValue{},
	}
}

// LookUpFirst has the updater look a unit's text up with local before it looks in
// the stream: daemon.Recent.Unit, for the daemon's own ports. A look in the stream
// loads the block the stream is writing, which the store then cannot recycle (8 MB
// held ten seconds); at a flood that doubled the history's cost. Call it before Run.
func (u *Updater) LookUpFirst(local func(port, origin string, seq uint64) []byte) { u.local = local }

// Puts is how many values the bucket has acked; Refused how many it refused;
// LostUnits how many values were put without their unit, not found in the stream
// after lookupTries look-ups.
func (u *Updater) Puts() uint64      { return u.puts.Load() }
func (u *Updater) Refused() uint64   { return u.refused.Load() }
func (u *Updater) LostUnits() uint64 { return u.lost.Load() }

// ReaderResets is how many times the reader of the stream's results went on from a
// consumer made again: the ordered consumer's own resets (a gap in what it was
// delivered: a message a tool pulled from it, review F3; a lost connection) and
// the reader's restarts.
func (u *Updater) ReaderResets() uint64 { return u.resets.Load() }

// Pending is how many results the bucket has not taken yet: those in the stream not
// read yet, those queued for the updater and the puts waiting for their ack, and
// the dumps and results the recorder holds. Safe
// for concurrent use (it feeds scoreboard_history_pending); a bucket that keeps up
// holds it near 0.
func (u *Updater) Pending() int {
	n := len(u.msgs) + int(u.inFlight.Load()) + int(u.behind.Load())
	if u.record != nil {
		n += u.record.Held() // not in the stream yet
	}
	return n
}

// Storing reports whether the stream is taking the results: while its recorder is
// not refused. Safe for concurrent use.
func (u *Updater) Storing() bool { return u.record == nil || u.record.Storing() }

// Recorder is the stream's recorder.
func (u *Updater) Recorder() *Recorder { return u.record }

// WithRecorder makes Run run r too, beside the updater: the stream's Recorder
// rides on the updater's life, so the daemon starts and stops one actor for its
// history. A stop lets r store what it holds before the
// updater's catch-up reads the stream's latest results.
func (u *Updater) WithRecorder(r *Recorder) { u.record = r }

// Subscribe reads what the bucket holds, and starts reading the stream's results:
// those of the stream's last startWindow messages, and every result stored from now
// on. Run then takes them. Call it before the ports start, so a stream or a bucket
// that cannot be read is told at start-up.
func (u *Updater) Subscribe() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := u.readBucket(ctx); err != nil {
		return err
	}
	stream, err := u.js.Stream(ctx, u.subj.Stream())
	if err != nil {
		return fmt.Errorf("history: read stream %s: %w", u.subj.Stream(), err)
	}
	u.stream = stream
	last := stream.CachedInfo().State.LastSeq
	// Two readers: the start window's, which stops at last, and the reader of what
	// is stored from now on. One reader of both took seconds through a window of
	// large dumps under load; a second consumer of every result cost 12-15% of the
	// daemon's CPU at a flood.
	u.windowEnd = last
	u.handed.Store(last) // what the window holds is the window reader's
	u.msgs = make(chan jetstream.Msg, updaterQueue)
	if u.it, err = u.results(ctx, last+1); err != nil {
		return err
	}
	u.reader, u.quit = make(chan struct{}), make(chan struct{})
	go u.read()
	if last == 0 {
		u.windowRead.Store(true)
	} else if u.windowIt, err = u.results(ctx, max(last, startWindow)-startWindow+1); err != nil {
		u.log.Warn().Err(err).Msg("reading the history stream's last results; the idle comparison takes each port's last")
		u.windowRead.Store(true)
	} else {
		go u.readWindow(u.windowIt)
	}
	return nil
}

// readBucket learns the stream sequence of each port's value in the bucket, so that
// only a port whose value is not the stream's latest is put at start-up.
func (u *Updater) readBucket(ctx context.Context) error {
	kv, err := u.js.KeyValue(ctx, u.subj.Boards())
	if err != nil {
		return fmt.Errorf("history: bucket %s: %w", u.subj.Boards(), err)
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("history: read bucket %s: %w", u.subj.Boards(), err)
	}
	defer w.Stop()
	for {
		select {
		case e := <-w.Updates():
			if e == nil {
				return nil // the values held; updates would follow
			}
			var v struct {
				StreamSeq uint64 `json:"stream_seq"`
			}
			_ = json.Unmarshal(e.Value(), &v) // a value of before stream_seq: 0, put again
			u.ports[e.Key()] = &portValue{stored: v.StreamSeq}
		case <-ctx.Done():
			return fmt.Errorf("history: read bucket %s: %w", u.subj.Boards(), ctx.Err())
		}
	}
}

// Run keeps the bucket up to date until ctx ends; then it gives the puts in flight a
// moment to be acked. It subscribes first, unless Subscribe did.
func (u *Updater) Run(ctx context.Context) error {
	if u.msgs == nil {
		if err := u.Subscribe(); err != nil {
			return err
		}
	}
	defer func() {
		// Stop waits for the ordered consumer's lock, which a reset holds while it
		// retries (a server overloaded at a flood's stop): the daemon's stop does not
		// wait for it beyond a second.
		close(u.quit)
		go u.iterator().Stop()
		if u.windowIt != nil && !u.windowRead.Load() {
			go u.windowIt.Stop()
		}
		wait := time.Second
		if !u.stopBy.IsZero() {
			wait = min(wait, max(time.Until(u.stopBy), 100*time.Millisecond))
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-u.reader:
		case <-t.C:
			u.log.Warn().Dur("waited_ms", wait).Msg("stopping: the history stream's reader has not stopped; left to stop by itself")
		}
	}()
	var recorded chan error // the recorder's end
	stopRecord := func() {}
	if u.record != nil {
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		stopRecord = cancel
		recorded = make(chan error, 1)
		go func() { recorded <- u.record.Run(rctx, func() time.Time { return u.stopBy }) }()
		defer cancel()
	}
	msgs := u.msgs
	u.started = time.Now()
	// The tick paces the puts and collects their acks; with nothing to put and no
	// ack awaited it is stopped, so an idle daemon does not wake 50 times a second.
	tick := time.NewTicker(pumpTick)
	defer tick.Stop()
	ticking := true
	// The reconciliation: once idle after results, then every reconcileEvery while
	// idle, and every reconcileIdleEvery once idle for reconcileQuietAfter.
	check := time.NewTimer(reconcileIdle)
	defer check.Stop()
	lastMsg := time.Now()
	windowTaken := false // the start window's results all taken: takeWindow
	for {
		select {
		case m := <-msgs:
			u.take(m)
			for range len(msgs) {
				u.take(<-msgs)
			}
			lastMsg = time.Now()
			check.Reset(reconcileIdle)
		case <-tick.C:
		case <-check.C:
			if u.reconcile(ctx) {
				// Behind: compared again soon, as after results.
				lastMsg = time.Now()
			}
			if time.Since(lastMsg) < reconcileQuietAfter {
				check.Reset(reconcileEvery)
			} else {
				check.Reset(reconcileIdleEvery)
			}
		case <-ctx.Done():
			u.stopBy = time.Now().Add(u.stopBound())
			if recorded != nil {
				// What the recorder holds is stored first, so that the catch-up
				// finds each port's last result in the stream.
				stopRecord()
				<-recorded // it returns by stopBy
			}
			u.catchUp(msgs, u.stopBy)
			u.finish(u.stopBy)
			return nil
		}
		// A start-up waits (ticking) to have read the stream's end before it puts.
		pending := true
		if !windowTaken {
			windowTaken = u.takeWindow(msgs)
		}
		if windowTaken || time.Since(u.started) > startPatience {
			pending = u.pump(ctx, time.Now().Add(-putInterval))
		}
		if pending != ticking {
			ticking = pending
			if pending {
				tick.Reset(pumpTick)
			} else {
				tick.Stop()
			}
		}
	}
}

// takeWindow reports whether the start window's reader is done, and then takes the
// results still queued in msgs: it hands its last ones on before it says it is done,
// and they must be taken before the first put. Else a port's older unit, taken
// before them, was put over the bucket's latest value, and the latest put again
// after it (TestBucketRebuiltAtStart, 3 runs in 50).
func (u *Updater) takeWindow(msgs <-chan jetstream.Msg) bool {
	if !u.windowRead.Load() {
		return false
	}
	for range len(msgs) {
		u.take(<-msgs)
	}
	return true
}

// pumpTick is how often Run looks at the puts while any is pending.
const pumpTick = 20 * time.Millisecond

// startPatience bounds how long a start-up waits to have read the stream's end
// before it puts.
const startPatience = 2 * time.Second
