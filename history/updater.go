package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
)

// Bounds of the updater.
const (
	// updaterQueue is how many messages wait for the actor; beyond, nats.go drops
	// them and reports a slow consumer: the bucket then misses a board, never a port.
	updaterQueue = 16384
	// putTimeout bounds the wait for the bucket's ack of a put.
	putTimeout = 5 * time.Second
	// maxPending bounds the puts waiting for their ack. There is at most one a port.
	maxPending = 256
	// putInterval is the least time between two puts of a port. A board on a screen
	// a tenth of a second late is not late, and a port answering thousands of units
	// a second would otherwise cost a put (a lookup of its unit and a message stored
	// in the bucket) every few of them.
	putInterval = 100 * time.Millisecond
	// maxRetryWait bounds the wait before a refused put is tried again; each refusal
	// of the same value doubles it from putInterval, so a bucket gone for good is not
	// asked ten times a second forever, and one back is filled within seconds.
	maxRetryWait = 5 * time.Second
)

// NewJetStream is the JetStream context of the daemon's history connection, with the
// bounds on asynchronous puts.
func NewJetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	return jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(maxPending), jetstream.WithPublishAsyncTimeout(putTimeout))
}

// Updater is the actor that keeps the bucket's value of each port: the port's latest
// result, its unit's text, when it came, and for othello the board after the command.
// It takes the results from the bus as any subscriber does, so it never holds a port
// back, and looks the unit's text up in the stream only for the values it puts; it puts at most one value a port at a time, without waiting for
// the ack, and when results come faster than the bucket acks, only a port's latest
// value is put. A put the bucket refuses is logged (sampled) and counted.
type Updater struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	subj bus.Subjects
	key  string // the bucket's subject prefix: $KV.<bucket>.
	log  zerolog.Logger
	warn *logging.Sampler

	local  func(port, origin string, seq uint64) []byte // see LookUpFirst
	ports  map[string]*portValue
	stream jetstream.Stream // found at the first lookup
	msgs   chan *nats.Msg
	subs   []*nats.Subscription

	puts, refused atomic.Uint64
	inFlight      atomic.Int64 // puts sent and not acked yet

	repair *Repairer // nil for a stream of one replica
}

// portValue is a port's latest result, and the put in flight of an earlier one.
type portValue struct {
	result  []byte    // to put; nil when put already
	at      time.Time // when it came
	seq     uint64    // the newest result's, put or not
	origin  string
	put     jetstream.PubAckFuture
	putting []byte        // the result of the put in flight, put again if it is refused
	putAt   time.Time     // and when it came
	retry   time.Duration // the wait before putting again a value refused; 0 when none was
	sent    time.Time     // when the last put was sent
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

// Puts is how many values the bucket has acked; Refused how many it refused.
func (u *Updater) Puts() uint64    { return u.puts.Load() }
func (u *Updater) Refused() uint64 { return u.refused.Load() }

// Pending is how many results the bucket has not taken yet: those queued for the
// updater and the puts waiting for their ack. Safe for concurrent use (it feeds
// scoreboard_history_pending) once Subscribe has returned; a bucket that keeps up
// holds it near 0.
func (u *Updater) Pending() int {
	return len(u.msgs) + int(u.inFlight.Load())
}

// WithRepair makes Subscribe and Run run r too, beside the updater: a replicated
// stream's Repairer rides on the updater's life, so the daemon starts and stops one
// actor for its history either way.
func (u *Updater) WithRepair(r *Repairer) { u.repair = r }

// Subscribe subscribes to the dumps and the results, and returns once the server has
// the subscriptions: called before the ports start, the bucket misses none of their
// units. Run then takes what comes.
func (u *Updater) Subscribe() error {
	u.msgs = make(chan *nats.Msg, updaterQueue)
	for _, s := range []string{u.subj.AllResults()} {
		sub, err := u.nc.ChanSubscribe(s, u.msgs)
		if err != nil {
			u.unsubscribe()
			return fmt.Errorf("history: subscribe to %s: %w", s, err)
		}
		u.subs = append(u.subs, sub)
	}
	if err := u.nc.FlushTimeout(5 * time.Second); err != nil {
		u.log.Warn().Err(err).Msg("the server has not confirmed the history's subscriptions yet")
	}
	if u.repair != nil {
		if err := u.repair.Subscribe(); err != nil {
			u.unsubscribe()
			return err
		}
	}
	return nil
}

func (u *Updater) unsubscribe() {
	for _, sub := range u.subs {
		_ = sub.Unsubscribe()
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
	defer u.unsubscribe()
	if u.repair != nil {
		done := make(chan error, 1)
		go func() { done <- u.repair.Run(ctx) }()
		defer func() { <-done }()
	}
	msgs := u.msgs
	// The tick paces the puts and collects their acks; with nothing to put and no
	// ack awaited it is stopped, so an idle daemon does not wake 50 times a second.
	tick := time.NewTicker(pumpTick)
	defer tick.Stop()
	ticking := true
	for {
		select {
		case m := <-msgs:
			u.take(m)
			for range len(msgs) {
				u.take(<-msgs)
			}
		case <-tick.C:
		case <-ctx.Done():
			// What the server has already sent is taken too: a round trip makes sure
			// it is here.
			_ = u.nc.FlushTimeout(time.Second)
			for range len(msgs) {
				u.take(<-msgs)
			}
			u.finish()
			return nil
		}
		if pending := u.pump(time.Now().Add(-putInterval)); pending != ticking {
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

// take records a dump's unit, or makes a result into its port's next value.
func (u *Updater) take(m *nats.Msg) {
	// A result only becomes its port's next value here; it is read when it is put,
	// so of a burst of results only the one put is parsed.
	i := strings.LastIndexByte(m.Subject, '.')
	port := m.Subject[i+1:]
	pv := u.ports[port]
	if pv == nil {
		pv = &portValue{}
		u.ports[port] = pv
	}
	// Workers answer in parallel, so a port's results come out of order: the latest
	// is the one of the highest seq (of the newest publisher, if another took over).
	seq, origin := scanSeqOrigin(m.Data)
	if origin == pv.origin && seq < pv.seq {
		return
	}
	pv.result, pv.at, pv.seq, pv.origin = m.Data, time.Now(), seq, origin
	pv.retry = 0
}

// scanSeqOrigin finds a result's seq and origin without decoding it all: a result is
// parsed only when it is put.
func scanSeqOrigin(data []byte) (seq uint64, origin string) {
	if i := bytes.Index(data, []byte(`"seq":`)); i >= 0 {
		for _, c := range data[i+len(`"seq":`):] {
			if c < '0' || c > '9' {
				break
			}
			seq = seq*10 + uint64(c-'0')
		}
	}
	if i := bytes.Index(data, []byte(`"origin":"`)); i >= 0 {
		rest := data[i+len(`"origin":"`):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 {
			origin = string(rest[:j])
		}
	}
	return seq, origin
}

// value makes a result into the bucket's value: with its unit's text, when it came,
// and for othello the board after the command.
func (u *Updater) value(port string, result []byte, at time.Time) []byte {
	var res struct {
		Problem string `json:"problem"`
		Port    string `json:"port"`
		Seq     uint64 `json:"seq"`
		Origin  string `json:"origin"`
	}
	if err := json.Unmarshal(result, &res); err != nil || res.Port != port {
		u.warn.Warn(&u.log, "bad result").Str("port", port).Msg("a message on a results subject is not a result of its port; not kept in the bucket")
		return nil
	}
	unit := u.unit(res.Problem, res.Port, res.Origin, res.Seq)
	var board []string
	if res.Problem == "othello" && unit != nil {
		board, _ = engine.OthelloBoardAfter(unit) // a unit that does not parse has no board
	}
	return AppendRecord(nil, result, unit, at, board, false)
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
func (u *Updater) unit(problem, port, origin string, seq uint64) []byte {
	if seq == 0 {
		return nil // a dump by hand: nothing tells which one
	}
	if u.local != nil {
		if unit := u.local(port, origin, seq); unit != nil {
			return unit
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if u.stream == nil {
		s, err := u.js.Stream(ctx, u.subj.Stream())
		if err != nil {
			return nil
		}
		u.stream = s
	}
	subject := u.subj.Dump(problem, port)
	m, err := u.stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return nil
	}
	if m.Header.Get(bus.HeaderOrigin) != origin {
		return nil // another publisher's dumps, or a daemon started since
	}
	got, _ := parseSeq(m.Header.Get(bus.HeaderSeq))
	if got == seq {
		return m.Data
	}
	if got < seq {
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
		if m.Header.Get(bus.HeaderOrigin) != origin {
			// Most likely an earlier daemon's dumps on this port: look after them.
			a = m.Sequence + 1
			continue
		}
		switch got, _ := parseSeq(m.Header.Get(bus.HeaderSeq)); {
		case got == seq:
			return m.Data
		case got < seq:
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
func (u *Updater) pump(since time.Time) (pending bool) {
	for port, pv := range u.ports {
		if pv.put != nil {
			select {
			case <-pv.put.Ok():
				u.puts.Add(1)
			case err := <-pv.put.Err():
				u.refuse(port, err)
				// A put refused (most often an ack late on a busy server) is put again,
				// unless a newer result came meanwhile: else the port's board stays
				// stale until its next result, which may never come.
				if pv.result == nil {
					pv.result, pv.at = pv.putting, pv.putAt
					pv.retry = min(max(2*pv.retry, putInterval), maxRetryWait)
				}
			default:
				continue // still waiting for its ack
			}
			u.inFlight.Add(-1)
			pv.put = nil
		}
		if pv.result == nil || pv.sent.After(since) || time.Since(pv.sent) < pv.retry {
			continue
		}
		value := u.value(port, pv.result, pv.at)
		if value == nil {
			pv.result = nil
			continue
		}
		f, err := u.js.PublishAsync(u.key+port, value)
		if err != nil {
			u.refuse(port, err)
			continue // tried again with the next result or tick
		}
		u.inFlight.Add(1)
		pv.put, pv.putting, pv.putAt, pv.result, pv.sent = f, pv.result, pv.at, nil, time.Now()
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

// finish waits a little for the puts in flight, so a clean stop keeps the last board.
func (u *Updater) finish() {
	u.pump(time.Now())
	select {
	case <-u.js.PublishAsyncComplete():
	case <-time.After(2 * time.Second):
	}
	u.pump(time.Now())
	select {
	case <-u.js.PublishAsyncComplete():
	case <-time.After(2 * time.Second):
		u.log.Warn().Msg("stopping: the history bucket has not acked the last boards")
	}
}
