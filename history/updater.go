package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/result"
)

// Bounds of the updater.
const (
	// updaterQueue is how many results wait for the actor, read from the stream
	// ahead of it; the reader waits beyond (a consumer of the stream drops nothing).
	// The reader also tells the display writers which results are stored
	// (NoteStored), so it must not wait on an actor busy with a look-up (up to 5 s):
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
// last, never a result the stream did not keep. It never holds a port back: the
// ports publish on the bus, and the stream captures on the server; a reader of its
// own tells the display writers which results are stored (NoteStored), which they
// wait for, boundedly, before they write the answers.
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

	local  func(port, origin string, seq uint64) []byte    // see LookUpFirst
	stored atomic.Pointer[func(origin string, seq uint64)] // see NoteStored
	ports  map[string]*portValue
	stream jetstream.Stream // found at the first lookup
	msgs   chan jetstream.Msg
	itMu   sync.Mutex
	it     jetstream.MessagesContext // the reader's, under itMu
	reader chan struct{}             // closed when the reader has stopped
	quit   chan struct{}             // closed when Run returns
	// The start's reader of the results stored before Subscribe (the stream's last
	// startWindow messages, up to windowEnd): windowIt, set before Run; windowRead
	// set once it has handed them on, or given up.
	windowIt   jetstream.MessagesContext
	windowEnd  uint64
	windowRead atomic.Bool

	puts, refused, lost atomic.Uint64
	inFlight            atomic.Int64  // puts sent and not acked yet
	behind              atomic.Uint64 // results in the stream not read yet, at the last read
	// handed is the stream sequence of the last result the reader handed on;
	// lagging counts the comparisons in a row that found the stream's latest
	// result beyond it (see reconcile).
	handed  atomic.Uint64
	lagging int

	record *Recorder // nil for a stream of one replica
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

// NoteStored has the updater's reader of the stream tell stored of every result it
// reads (its publisher's origin and its unit's seq, from its Nats-Msg-Id), as it
// reads it: the result is in the store then, and a display writer holding the unit's
// answer for it (daemon.Stored) may write it. It is called from the reader, not the
// actor, so that a slow put or look-up does not hold answers back; the reader starts
// at the stream's end (the start window has its own), so that a start on a stream of
// large dumps does not either. Call it before the ports start.
func (u *Updater) NoteStored(stored func(origin string, seq uint64)) { u.stored.Store(&stored) }

// Puts is how many values the bucket has acked; Refused how many it refused;
// LostUnits how many values were put without their unit, not found in the stream
// after lookupTries look-ups.
func (u *Updater) Puts() uint64      { return u.puts.Load() }
func (u *Updater) Refused() uint64   { return u.refused.Load() }
func (u *Updater) LostUnits() uint64 { return u.lost.Load() }

// Pending is how many results the bucket has not taken yet: those in the stream not
// read yet, those queued for the updater and the puts waiting for their ack, and
// the dumps and results a replicated stream's recorder holds. Safe
// for concurrent use (it feeds scoreboard_history_pending); a bucket that keeps up
// holds it near 0.
func (u *Updater) Pending() int {
	n := len(u.msgs) + int(u.inFlight.Load()) + int(u.behind.Load())
	if u.record != nil {
		n += u.record.Held() // not in the stream yet
	}
	return n
}

// Storing reports whether the stream is taking the results: always for a stream
// that captures them, and while its recorder is not refused for a replicated one.
// Safe for concurrent use.
func (u *Updater) Storing() bool { return u.record == nil || u.record.Storing() }

// Recorder is the replicated stream's recorder, nil for a stream of one replica.
func (u *Updater) Recorder() *Recorder { return u.record }

// WithRecorder makes Subscribe and Run run r too, beside the updater: a replicated
// stream's Recorder rides on the updater's life, so the daemon starts and stops one
// actor for its history either way. A stop lets r store what it holds before the
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
	// is stored from now on, which tells the display writers (NoteStored). One
	// reader of both took seconds through a window of large dumps under load, every
	// answer held meanwhile; a second consumer of every result cost 12-15% of the
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
	if u.record != nil {
		if err := u.record.Subscribe(); err != nil {
			close(u.quit)
			u.it.Stop()
			<-u.reader
			return err
		}
	}
	return nil
}

// results reads the stream's results from stream sequence from on.
func (u *Updater) results(ctx context.Context, from uint64) (jetstream.MessagesContext, error) {
	cons, err := u.js.OrderedConsumer(ctx, u.subj.Stream(), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{u.subj.AllResults()},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    max(from, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("history: read stream %s: %w", u.subj.Stream(), err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("history: read stream %s: %w", u.subj.Stream(), err)
	}
	return it, nil
}

// readWindow hands on the results stored before Subscribe, from the start window
// to windowEnd: each port's results in flight at the end, so that the latest is its
// last unit's, not the last stored (the idle comparison takes each port's last
// stored, should this reader fail).
func (u *Updater) readWindow(it jetstream.MessagesContext) {
	defer u.windowRead.Store(true)
	defer it.Stop()
	for {
		m, err := it.Next()
		if err != nil {
			return // stopped by Run, or failed
		}
		meta, err := m.Metadata()
		if err != nil || meta.Sequence.Stream > u.windowEnd {
			return
		}
		select {
		case u.msgs <- m:
		case <-u.quit:
			return
		}
		if meta.Sequence.Stream == u.windowEnd || meta.NumPending == 0 {
			return
		}
	}
}

// startWindow is how many of the stream's last messages the updater reads at start:
// dumps and results of units in flight (a port has at most 1,024), of a few ports.
const startWindow = 20_000

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

// read hands the stream's results to the actor, until the iterator is stopped. The
// ordered consumer starts again by itself after a lost connection or JetStream,
// from the first result it has not read.
func (u *Updater) read() {
	defer close(u.reader)
	last := u.windowEnd // the stream sequence of the last result handed on
	it := u.iterator()
	failed := 0 // errors in a row
	for {
		m, err := it.Next()
		if err != nil && !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			u.warn.Warn(&u.log, "read").Err(err).Msg("reading the history stream's results for the bucket; trying again")
			if failed++; failed < 5 {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			it.Stop() // this one is stuck: a new one below
			err = jetstream.ErrMsgIteratorClosed
		}
		failed = 0
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			// Stopped by Run, or given up by the ordered consumer after resets that
			// failed (a replicated stream without a leader for long): a new one
			// goes on after the last result handed on.
			if it = u.restart(last); it == nil {
				return // stopped by Run before a new one could be made
			}
			continue
		}
		if meta, err := m.Metadata(); err == nil {
			last = meta.Sequence.Stream
		}
		if note := u.stored.Load(); note != nil {
			if origin, seq, ok := bus.ParseResultID(m.Headers().Get(nats.MsgIdHdr)); ok {
				(*note)(origin, seq)
			}
		}
		select {
		case u.msgs <- m:
			u.handed.Store(last)
		case <-u.quit:
			return
		}
	}
}

// iterator is the reader's current iterator.
func (u *Updater) iterator() jetstream.MessagesContext {
	u.itMu.Lock()
	defer u.itMu.Unlock()
	return u.it
}

// restart makes a new reader of the stream's results after stream sequence last,
// trying again (backing off to every 5 s, the failures logged sampled) for as long
// as the stream cannot be read: a replicated stream without a leader, or JetStream
// away. It returns nil only when Run has stopped the updater; never an iterator
// that does not exist (a nil one took the daemon down, issue 30).
func (u *Updater) restart(last uint64) jetstream.MessagesContext {
	for failures := 0; ; failures++ {
		select {
		case <-u.quit:
			return nil
		case <-time.After(restartRetry.Wait(failures)):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		it, err := u.results(ctx, last+1)
		cancel()
		if err != nil {
			u.warn.Warn(&u.log, "read").Err(err).Int("failures", failures+1).
				Msg("reading the history stream's results for the bucket again; trying again")
			continue
		}
		u.itMu.Lock()
		u.it = it
		u.itMu.Unlock()
		select {
		case <-u.quit:
			// Run's stop may have taken the old iterator before this one was set.
			it.Stop()
			return nil
		default:
		}
		u.log.Info().Uint64("after_stream_seq", last).Int("failures", failures).Msg("reading the history stream's results for the bucket again")
		return it
	}
}

// restartRetry spaces the attempts to read the stream again: the first a second
// after the reader stopped, as the ordered consumer's own resets are spaced.
var restartRetry = backoff.Policy{Min: time.Second, Max: 5 * time.Second}

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
		if u.windowRead.Load() || time.Since(u.started) > startPatience {
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

// pumpTick is how often Run looks at the puts while any is pending.
const pumpTick = 20 * time.Millisecond

// startPatience bounds how long a start-up waits to have read the stream's end
// before it puts.
const startPatience = 2 * time.Second

// reconcileIdle is how long the updater waits without a result before it compares
// each port's latest result in the stream with the one it has; reconcileEvery how
// often it does so while idle all along.
const (
	reconcileIdle  = 500 * time.Millisecond
	reconcileEvery = 2 * time.Second
)

// reconcileQuietAfter is how long after the last result the idle comparison goes on
// every reconcileEvery (a replicated stream's new leader, the reader's restart);
// then it runs every reconcileIdleEvery: an idle daemon wakes for it once a minute,
// not every 2 s.
const (
	reconcileQuietAfter = time.Minute
	reconcileIdleEvery  = time.Minute
)

// reconcile reads each port's latest result in the stream (last per subject) and
// takes it where the updater has an older one: a safety net under the reader, so
// that a reader that stalls or misses a result (an ordered consumer reset on a
// loaded machine) cannot leave the bucket behind the stream.
//
// It reports whether it found the updater behind: a result taken, or the reader
// behind the stream. A reader whose ordered consumer waits for good on a consumer
// lost in a leader change (seen in TestFaultClusterNodeAndWorkerKilled: it handed
// on nothing at all, and the stream's last result of the port was then an older
// unit's, put back late, so this comparison could not find the port's
// latest either) is stopped when two comparisons in a row find the stream's latest
// result beyond the last it handed on: read starts a new one after that.
func (u *Updater) reconcile(ctx context.Context) (behind bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	last, err := u.lastResults(ctx)
	if err != nil {
		return false
	}
	var latest uint64 // the stream's last result of any port
	defer func() {
		if latest <= u.handed.Load() {
			u.lagging = 0
			return
		}
		behind = true
		if u.lagging++; u.lagging >= 2 {
			u.lagging = 0
			u.log.Warn().Uint64("stream_seq", latest).Uint64("handed", u.handed.Load()).
				Msg("the history stream's reader is behind the stream's latest result and idle: starting it again")
			// Stop may wait for a reset in progress: not here.
			go u.iterator().Stop()
		}
	}()
	for port, m := range last {
		latest = max(latest, m.Sequence)
		if u.takeLast(port, m) {
			u.warn.Warn(&u.log, "reconcile").Str("port", port).Uint64("stream_seq", m.Sequence).
				Msg("the stream's latest result of the port had not reached the bucket's updater; taken from the stream")
			behind = true
		}
	}
	return behind
}

// takeLast makes the stream's last result of a port its next value, if it is newer
// than the one the updater has; it reports whether it was.
func (u *Updater) takeLast(port string, m *jetstream.RawStreamMsg) bool {
	pv := u.ports[port]
	if pv == nil {
		pv = &portValue{}
		u.ports[port] = pv
	}
	unitSeq, origin := result.SeqOrigin(m.Data)
	if !pv.newer(origin, unitSeq, m.Sequence) {
		return false
	}
	pv.set(m.Data, m.Time, m.Sequence, origin, unitSeq)
	return true
}

// lastResults yields each port's last result in the stream (last per subject).
func (u *Updater) lastResults(ctx context.Context) (iter.Seq2[string, *jetstream.RawStreamMsg], error) {
	stream, err := u.theStream(ctx)
	if err != nil {
		return nil, err
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(u.subj.AllResults()))
	if err != nil {
		return nil, err
	}
	return func(yield func(string, *jetstream.RawStreamMsg) bool) {
		for subject := range info.State.Subjects {
			m, err := stream.GetLastMsgForSubject(ctx, subject)
			if err != nil {
				continue
			}
			if !yield(subject[strings.LastIndexByte(subject, '.')+1:], m) {
				return
			}
		}
	}, nil
}

// theStream is the history stream, looked up once.
func (u *Updater) theStream(ctx context.Context) (jetstream.Stream, error) {
	if u.stream == nil {
		s, err := u.js.Stream(ctx, u.subj.Stream())
		if err != nil {
			return nil, err
		}
		u.stream = s
	}
	return u.stream, nil
}

// StopWithin bounds a stop's catch-up and last puts: left gives, when the stop
// begins, the time it may still take (a daemon's: what is left of its drain, so
// that the history does not make a stop longer than --daemon-drain). Without it a
// stop takes at most defaultStop.
func (u *Updater) StopWithin(left func() time.Duration) { u.stopLeft = left }

// defaultStop bounds a stop without StopWithin; minStop is the least a stop gets,
// for the last puts, when the drain has run out.
const (
	defaultStop = 5 * time.Second
	minStop     = 200 * time.Millisecond
)

func (u *Updater) stopBound() time.Duration {
	if u.stopLeft == nil {
		return defaultStop
	}
	return max(u.stopLeft(), minStop)
}

// catchUp takes, at a stop, the results the reader has not handed on yet up to the
// stream's latest result, until deadline. A reader behind the stream (started
// again after a replicated stream's leader change) would otherwise leave the bucket
// at what the idle comparison found, which after older units were put back late
// is an older unit's board (TestFaultClusterNodeAndWorkerKilled: unit 3,616 of
// 3,663, the reader started again from the stream's start 1 s before the stop).
func (u *Updater) catchUp(msgs <-chan jetstream.Msg, deadline time.Time) {
	defer func() {
		for range len(msgs) {
			u.take(<-msgs)
		}
	}()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	results, err := u.lastResults(ctx)
	if err != nil {
		return
	}
	// Each port's last result at once, as the idle comparison takes it: a reader
	// far behind (a stream of large dumps, under load) may not reach it in time.
	var latest uint64
	for port, m := range results {
		latest = max(latest, m.Sequence)
		u.takeLast(port, m)
	}
	last := u.handed.Load()
	for last < latest {
		select {
		case m := <-msgs:
			u.take(m)
			if meta, err := m.Metadata(); err == nil {
				last = max(last, meta.Sequence.Stream) // the start window's are older
			}
		case <-ctx.Done():
			u.log.Warn().Uint64("stream_seq", latest).Uint64("read", last).
				Msg("stopping: the history stream's reader has not reached the stream's latest result; the bucket may show an older board until the next start")
			return
		}
	}
}

// newer says whether a result (its origin and unit seq, stored at streamSeq) is its
// port's latest rather than pv's: the result of another publisher stored later (a
// daemon started again, or another sender), or of the same one a later unit.
// Workers answer a port's units in parallel, so its results are stored out of
// order: the stream's last result of a port is not always its last unit's.
func (pv *portValue) newer(origin string, unitSeq, streamSeq uint64) bool {
	if pv.seq == 0 {
		return true
	}
	if origin != pv.origin {
		return streamSeq > pv.seq
	}
	return unitSeq > pv.unitSeq || unitSeq == pv.unitSeq && streamSeq > pv.seq
}

// take makes a result the stream stored into its port's next value, if it is newer.
func (u *Updater) take(m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		return
	}
	if meta.Sequence.Stream > u.windowEnd {
		u.behind.Store(meta.NumPending) // the reader's, not the start window's
	}
	subject := m.Subject()
	port := subject[strings.LastIndexByte(subject, '.')+1:]
	pv := u.ports[port]
	if pv == nil {
		pv = &portValue{}
		u.ports[port] = pv
	}
	unitSeq, origin := result.SeqOrigin(m.Data())
	if !pv.newer(origin, unitSeq, meta.Sequence.Stream) {
		return
	}
	pv.set(m.Data(), meta.Timestamp, meta.Sequence.Stream, origin, unitSeq)
}

// set makes a result the port's next value, unless the bucket holds it already.
func (pv *portValue) set(result []byte, at time.Time, seq uint64, origin string, unitSeq uint64) {
	pv.seq, pv.origin, pv.unitSeq = seq, origin, unitSeq
	if seq == pv.stored && pv.put == nil {
		pv.result = nil // the bucket holds it already (a start-up's), and no put will change it
		return
	}
	pv.result, pv.at = result, at
	pv.retry, pv.lookups, pv.notBefore = 0, 0, time.Time{}
}

// value makes a result into the bucket's value: with its unit's text, when it was
// stored, its stream sequence, and for othello the board after the command. ok is
// false when the result names a unit whose text was not found (nil value), or when
// the result is not one of port's (nil value: nothing to put).
func (u *Updater) value(ctx context.Context, port string, pv *portValue) (value []byte, ok bool) {
	res, err := result.Decode(pv.result)
	if err != nil || res.Port != port {
		u.warn.Warn(&u.log, "bad result").Str("port", port).Msg("a message on a results subject is not a result of its port; not kept in the bucket")
		return nil, true
	}
	unit := u.unit(ctx, res.Problem, res.Port, res.Origin, res.Seq)
	if unit == nil && res.Seq != 0 {
		if pv.lookups++; pv.lookups < lookupTries {
			return nil, false
		}
		n := u.lost.Add(1)
		u.warn.Warn(&u.log, "lost unit").Str("port", port).Uint64("seq", res.Seq).Uint64("stream_seq", pv.seq).
			Int("lookups", pv.lookups).Uint64("values_without_unit", n).
			Msg("the unit of the port's latest result is not in the history stream; the bucket holds the result without it")
	}
	var board []string
	if res.Problem == "othello" && unit != nil {
		board, _ = engine.OthelloBoardAfter(unit) // a unit that does not parse has no board
	}
	return AppendStreamSeq(AppendRecord(nil, pv.result, unit, pv.at, board, false), pv.seq), true
}

// AppendStreamSeq adds "stream_seq" to a record (a JSON object): the stream sequence
// of the result a bucket's value holds, which orders the values, whatever the clocks.
func AppendStreamSeq(record []byte, seq uint64) []byte {
	record = append(record[:len(record)-1], `,"stream_seq":`...)
	return append(strconv.AppendUint(record, seq, 10), '}')
}

// maxLookups bounds the stream requests that look for one result's unit: a binary
// search over a stream of a billion messages takes 30.
const maxLookups = 40

// unit finds the text of the unit a result answers: its dump, kept in the stream. It
// is looked up only for the values put (a burst of results makes one put a port),
// rather than every dump being sent to the updater too, which cost the server and
// the updater as much again. Most often the port's last dump is the one; with units
// in flight it is a little earlier on the same subject, where a port's dumps are in
// seq order. nil if it is not found.
func (u *Updater) unit(ctx context.Context, problem, port, origin string, seq uint64) []byte {
	if seq == 0 {
		return nil // a dump by hand: nothing tells which one
	}
	if u.local != nil {
		if unit := u.local(port, origin, seq); unit != nil {
			return unit
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := u.theStream(ctx); err != nil {
		return nil
	}
	subject := u.subj.Dump(problem, port)
	m, err := u.stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return nil
	}
	d, _ := bus.ReadDump(m.Header)
	if d.Origin != origin {
		return nil // another publisher's dumps, or a daemon started since
	}
	if d.Seq == seq {
		return m.Data
	}
	if d.Seq < seq {
		return nil
	}
	// A binary search of the stream sequences [a, b] before the last dump.
	a, b := uint64(1), m.Sequence-1
	for range maxLookups {
		if a > b {
			return nil
		}
		mid := a + (b-a)/2
		if m, err = u.stream.GetMsg(ctx, mid, jetstream.WithGetMsgSubject(subject)); err != nil {
			return nil
		}
		if m.Sequence > b {
			b = mid - 1 // no dump of the port in [mid, b]
			continue
		}
		d, _ := bus.ReadDump(m.Header)
		if d.Origin != origin {
			// Most likely an earlier daemon's dumps on this port: look after them.
			a = m.Sequence + 1
			continue
		}
		switch {
		case d.Seq == seq:
			return m.Data
		case d.Seq < seq:
			a = m.Sequence + 1
		default:
			b = mid - 1 // m is the port's first dump from mid on, and past it
		}
	}
	return nil
}

// pump collects the acks that came and puts the values waiting, one a port, of the
// ports whose last put was sent before since.
// It reports whether anything is left: a value to put, or a put awaiting its ack.
//
// Its look-ups end with ctx: a stop does not wait for them (a tool's unit, not in
// LookUpFirst's, looked up in a stream of large dumps under load took seconds).
func (u *Updater) pump(ctx context.Context, since time.Time) (pending bool) {
	now := time.Now()
	for port, pv := range u.ports {
		if pv.put != nil {
			select {
			case <-pv.put.Ok():
				u.puts.Add(1)
				pv.stored = pv.putSeq
			case err := <-pv.put.Err():
				u.refuse(port, err)
				// A put refused (most often an ack late on a busy server) is put again,
				// unless a newer result came meanwhile: else the port's board stays
				// stale until its next result, which may never come.
				if pv.result == nil {
					pv.result, pv.at, pv.seq = pv.putting, pv.putAt, pv.putSeq
					pv.retry = putRetry.Next(pv.retry)
					pv.notBefore = now.Add(pv.retry)
				}
			default:
				continue // still waiting for its ack
			}
			u.inFlight.Add(-1)
			pv.put = nil
		}
		if pv.result == nil || pv.sent.After(since) || now.Before(pv.notBefore) {
			continue
		}
		value, ok := u.value(ctx, port, pv)
		if ctx.Err() != nil {
			break // a look-up cut short proves nothing of its unit
		}
		if !ok {
			// Its unit not found: looked up again a moment later (a look-up that
			// timed out on a busy machine), up to lookupTries.
			pv.notBefore = now.Add(lookupRetry.Wait(pv.lookups - 1))
			continue
		}
		if value == nil {
			pv.result = nil
			continue
		}
		f, err := u.js.PublishAsync(u.key+port, value)
		if err != nil {
			u.refuse(port, err)
			pv.retry = putRetry.Next(pv.retry)
			pv.notBefore = now.Add(pv.retry)
			continue
		}
		u.inFlight.Add(1)
		pv.put, pv.putting, pv.putAt, pv.putSeq, pv.result, pv.sent = f, pv.result, pv.at, pv.seq, nil, now
	}
	for _, pv := range u.ports {
		if pv.put != nil || pv.result != nil {
			return true
		}
	}
	return false
}
func (u *Updater) refuse(port string, err error) {
	n := u.refused.Add(1)
	u.warn.Warn(&u.log, "refused").Str("port", port).Uint64("refused", n).Err(err).
		Msg("the history bucket did not take the port's latest board; the scoreboard is not affected")
}

// finish waits for the puts in flight until deadline, so a clean stop keeps the last
// board.
func (u *Updater) finish(deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	// Twice: a put acked may let the next value of its port go.
	for range 2 {
		u.pump(ctx, time.Now())
		done := u.js.PublishAsyncComplete()
		select {
		case <-done:
			continue
		default:
		}
		t := time.NewTimer(max(time.Until(deadline), 0))
		select {
		case <-done:
			t.Stop()
			continue
		case <-t.C:
			u.log.Warn().Msg("stopping: the history bucket has not acked the last boards")
			return
		}
	}
}
