package daemon

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/serialio"
)

// flight is a unit published as a dump and not answered yet.
type flight struct {
	it       item
	attempts int
	deadline time.Time
}

// outcome is what a unit came to, as it waits for its turn on the device: only what
// is written (its answer, or its error line, or nothing) and how it is counted. Up
// to MaxHeld of them wait while a device does not read, so the result they come from,
// with its unit's digest, origin and worker, is not kept.
type outcome struct {
	text            []byte
	failed, stopped bool
	epoch           uint64    // the device the unit was read from
	read            time.Time // when the unit was read
	at              time.Time // when the unit came to it: a hold for the history is bounded from then
}

// settle makes res the outcome of it's unit.
func (d *display) settle(it *item, res *result.Record) {
	o := outcome{failed: res.Error != "", stopped: res.Stopped(), epoch: it.epoch, read: it.read, at: time.Now()}
	switch {
	case res.Error == "":
		o.text = []byte(res.Answer)
	case d.pc.ErrorLine:
		o.text = []byte("error: " + strings.ReplaceAll(res.Error, "\n", " ") + "\n")
	}
	d.done[it.seq] = o
}

// display is a port's display writer actor. It publishes each unit as a dump whose
// reply subject is under the port's own inbox, takes the workers' answers from that
// inbox only, publishes a dump again when no worker answered in time, and puts the
// outcomes back in sequence order for the device writer: each unit gets exactly one
// outcome, the first that comes (later results of a unit published twice are
// ignored), and a unit no worker answers ends, after the last attempt, as an error,
// so it never holds the later ones back.
//
// Only a worker can publish on the inbox, and only on the reply subject of a dump
// it received (the bus's roles, bus/roles.go); the results subject, which anyone
// with rights on the bus may write, is never read here. An answer must also carry
// the dump's origin, its seq and its unit's digest (a dump forged with a copied
// reply subject gets an answer to another unit), and be no longer than the
// problem's longest answer. It must echo the problem and port of the dump subject
// (the workers take them from the subject the dump came on): a copy of the dump
// published on another problem's or port's subject, which any tool may do, gets an
// answer (an error, most often) that is refused like a forgery. Anything else is
// counted and ignored.
type display struct {
	cfg       *Config
	pc        PortConfig
	nc        *nats.Conn
	log       zerolog.Logger
	dump      string // the dump subject
	result    string // the result subject, for the error results the daemon publishes
	inbox     string // the prefix of the dumps' reply subjects: inbox.<slot>
	origin    string // the dumps' Scoreboard-Origin
	maxAnswer int    // the problem's longest answer
	maxLine   int    // the problem's longest line
	msg       nats.Msg

	items   <-chan item
	replies chan *nats.Msg
	out     chan<- answer // to the device writer

	next     uint64 // the seq to write next
	last     uint64 // the highest seq taken from the reader
	inFlight map[uint64]*flight
	done     map[uint64]outcome
	blocked  bool            // an outcome waits for room in the device writer's queue
	drained  bool            // stopping, and the drain bound has passed
	dropping bool            // and a write timeout more: outcomes the queue has no room for are dropped
	answered uint64          // outcomes handed to the device writer: answers
	failed   uint64          // errors
	stopped  uint64          // and units unanswered when the drain bound ended
	room     chan struct{}   // the device writer took answers from its queue
	stuck    <-chan struct{} // closed when stopping finds the reader's reads uninterruptible
	warn     *logging.Sampler
	met      *metrics.Port // nil without metrics
	// stats are the stream's line ends, watched on the tick (lineEnds); unended
	// says the port's bytes have no line ends now, as was said once.
	stats   *serialio.LineStats
	unended bool

	// The hold for the history (Stored): an outcome is written once its unit's
	// result is stored in the stream, or StoreWait after it came.
	stored      *storedSink         // nil without a history: nothing held
	storedSeqs  map[uint64]struct{} // units from next on with their result stored
	spare       []uint64            // the notices' slice, given back to stored
	unconfirmed uint64              // outcomes written after StoreWait, their result not seen stored
}

func newDisplay(cfg *Config, pc PortConfig, nc *nats.Conn, log zerolog.Logger, items <-chan item, out chan<- answer, room chan struct{}) *display {
	s := bus.Subjects{Prefix: cfg.Prefix}
	p, _ := engine.Lookup(pc.Problem) // checked by Config.Validate
	return &display{
		cfg: cfg, pc: pc, nc: nc, log: log,
		dump:      s.Dump(pc.Problem, pc.Name),
		result:    s.Result(pc.Problem, pc.Name),
		inbox:     nc.NewInbox(),
		origin:    bus.NewOrigin(),
		maxAnswer: p.Limits().MaxAnswer,
		maxLine:   p.Limits().MaxLine,
		items:     items,
		// Room for every attempt of every unit in flight eight times over: the
		// answers to copies of the dumps that tools may publish on the other
		// problems' subjects come here too, to be refused. Past it nats.go would drop
		// replies (a slow consumer), real answers among them.
		replies:    make(chan *nats.Msg, 8*cfg.MaxInFlight*cfg.Attempts),
		out:        out,
		room:       room,
		next:       1,
		inFlight:   map[uint64]*flight{},
		done:       map[uint64]outcome{},
		warn:       newWarnSampler(),
		storedSeqs: map[uint64]struct{}{},
	}
}

// openInbox subscribes the port's inbox and opens what run listens to besides: the
// history's notices of stored results and the connection's reconnections. close
// undoes it all.
func (d *display) openInbox() (storedWake <-chan struct{}, back chan nats.Status, close func(), err error) {
	// The connection's reader hands answers straight to this actor: no goroutine in
	// between. The channel holds more than the units in flight can get (newDisplay);
	// should it ever be full, the answer is dropped (nats.go reports a slow consumer)
	// and the unit's next attempt makes up for it.
	sub, err := d.nc.ChanSubscribe(d.inbox+".*", d.replies)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("port %s: subscribe to its inbox: %w", d.pc.Name, err)
	}
	// The history's notices of the units whose results it stored, from before the
	// first dump is published.
	if d.cfg.Stored != nil {
		d.stored = d.cfg.Stored.open(d.origin)
		storedWake = d.stored.wake
	}
	// The server must have the subscription before the first dump's answer comes. A
	// connection that is reconnecting resends it when it is back, and the units' next
	// attempts make up for answers missed meanwhile: a warning, not a failed port.
	if err := d.nc.FlushTimeout(5 * time.Second); err != nil {
		d.log.Warn().Err(err).Msg("the server has not confirmed the inbox subscription yet")
	}
	// A reconnection means dumps and results may have died with the old server, or
	// reached it before the workers had subscribed again: see reconnected.
	back = d.nc.StatusChanged(nats.CONNECTED)
	return storedWake, back, func() {
		d.nc.RemoveStatusListener(back)
		if d.cfg.Stored != nil {
			d.cfg.Stored.close(d.origin)
		}
		sub.Unsubscribe()
	}, nil
}

// run works until the reader has stopped and every unit it handed over has its
// outcome. Once ctx ends, it takes every unit the reader still hands over, whatever
// the bounds, and gives them and those in flight cfg.Drain to be answered; then each
// one left gets its error outcome. It closes out when it returns.
func (d *display) run(ctx context.Context) error {
	defer close(d.out)
	storedWake, back, closeInbox, err := d.openInbox()
	if err != nil {
		return err
	}
	defer closeInbox()

	busyTick := d.busyTick()
	tick := time.NewTicker(busyTick)
	defer tick.Stop()
	ticking := busyTick
	var drain, grace, dropBy <-chan time.Time
	items := d.items
	stopping := ctx.Done()
	for items != nil || d.next <= d.last {
		// Stopping, the units read are taken whatever the bounds: none is left behind.
		take := items
		if stopping != nil && !d.canTake() {
			take = nil
		}
		// What else is already queued on the channel woken for is taken at once: a
		// receive from one channel costs a fraction of this select over all of them.
		select {
		case it, ok := <-take:
			if !ok {
				items = nil
				continue
			}
			d.take(it)
			for len(items) > 0 && (stopping == nil || d.canTake()) {
				d.take(<-items)
			}
		case m := <-d.replies:
			d.answer(m)
			for range len(d.replies) {
				d.answer(<-d.replies)
			}
		case <-d.room:
			d.blocked = false
		case <-storedWake:
			d.noteStored()
		case <-back:
			d.reconnected()
		case now := <-tick.C:
			d.turn(now)
		case <-stopping:
			// The reader stops reading; what it read is still taken, and the units
			// get a bounded time to be answered.
			stopping = nil
			t := time.NewTimer(d.cfg.Drain)
			defer t.Stop()
			drain = t.C
			d.log.Info().Int("in_flight", len(d.inFlight)).Uint64("held", d.last-d.next+1).Dur("bound_ms", d.cfg.Drain).
				Msg("stopping: answering the units read")
		case <-drain:
			drain = nil
			d.drained = true
			// The outcomes left, error lines among them, still go to a device that
			// reads; one that does not gets a write timeout more.
			dropBy = time.After(d.cfg.WriteTimeout)
			for seq := d.next; seq <= d.last; seq++ {
				if f, ok := d.inFlight[seq]; ok {
					d.giveUp(f, stopGiveUp)
				}
			}
			if items != nil && grace == nil {
				grace = time.After(time.Second)
			}
		case <-d.stuck:
			// The reader, its reads interrupted, closes items at once; one blocked in a
			// read that cannot be interrupted (stdin) is given a second for a unit it
			// may be handing over, then left.
			d.stuck = nil
			if grace == nil {
				grace = time.After(time.Second)
			}
		case <-grace:
			items = nil
		case <-dropBy:
			dropBy = nil
			d.dropping = true
		}
		d.flush()
		// With no unit in flight there is nothing to expire: the tick only beats for
		// the health check, and an idle daemon wakes a few times a minute, not eight
		// times a request timeout.
		if want := idleTick(d.cfg.Monitor, busyTick, len(d.inFlight) == 0 && len(d.done) == 0); want != ticking {
			ticking = want
			tick.Reset(want)
		}
	}
	d.log.Info().Uint64("units", d.last).Uint64("answered", d.answered).Uint64("errors", d.failed).
		Uint64("stopped", d.stopped).Uint64("written_before_stored", d.unconfirmed).Msg("display writer stopped")
	return nil
}

// canTake says whether to take another unit: not while as many units as allowed wait
// for a worker, nor while as many as allowed are held for the device. The device
// writer being behind does not stop the reader before that: a relay blocked writing
// into the port must be read from before it reads the answers.
func (d *display) canTake() bool {
	return len(d.inFlight) < d.cfg.MaxInFlight && d.last-d.next+1 < uint64(d.cfg.MaxHeld)
}

// take publishes a unit from the reader, or records its framing error. Past the
// drain bound, it gives the unit up at once.
func (d *display) take(it item) {
	d.last = it.seq
	if d.cfg.Players != nil {
		it.players = d.cfg.Players(d.pc.Name)
	}
	if d.drained && it.err == nil {
		d.giveUp(&flight{it: it}, stopGiveUp)
		return
	}
	if it.err != nil {
		d.warn.Warn(&d.log, "bad unit").Uint64("seq", it.seq).Int64("line", it.line).Err(it.err).Msg("bad unit")
		res := d.publishError(&it, it.err.Error(), "reader", false)
		d.settle(&it, &res)
		return
	}
	d.log.Debug().Uint64("seq", it.seq).Int64("line", it.line).Msg("unit read")
	f := &flight{it: it}
	d.inFlight[it.seq] = f
	d.cfg.Recent.add(d.pc.Name, d.origin, it.seq, it.unit)
	d.publish(f)
}

// reconnected publishes again, at once, every dump still in flight, without spending
// one of its attempts. An attempt that spans a reconnection proves nothing about the
// workers: its dump or its result may have died with the server, or reached the new
// one before the workers' subscriptions did (and a server drops a message nobody
// subscribes to). Counted, a few quick restarts of the server would use up a unit's
// attempts while workers were ready, and give it up as an error.
func (d *display) reconnected() {
	if len(d.inFlight) == 0 {
		return
	}
	d.log.Warn().Int("in_flight", len(d.inFlight)).Msg("reconnected: publishing the dumps in flight again")
	for _, f := range d.inFlight {
		f.attempts--
		d.met.Retry()
		d.publish(f)
	}
}

func (d *display) publish(f *flight) {
	f.attempts++
	f.deadline = time.Now().Add(d.cfg.RequestTimeout)
	// One message, reused: PublishMsg has encoded it by the time it returns.
	m := &d.msg
	if m.Header == nil {
		m.Subject = d.dump
		m.Header = make(nats.Header, 6)
	}
	// The port publishes a dump again when its answer does not come (Attempt): a
	// worker that cannot solve it hands it back rather than answer it with an
	// error. The same id on every attempt: the history keeps the unit once.
	bus.DumpHeader{Port: d.pc.Name, Seq: f.it.seq, Origin: d.origin, Attempt: f.attempts}.Put(m.Header)
	// The line is put here, in 64 bits (DumpHeader's is an int: 32 bits on armhf),
	// and always: the header is reused, and a line left out would be the last one's.
	if f.it.line > 0 {
		m.Header[bus.HeaderLine] = []string{strconv.FormatInt(f.it.line, 10)}
	} else {
		delete(m.Header, bus.HeaderLine)
	}
	if f.it.players != "" {
		m.Header[bus.HeaderPlayers] = []string{f.it.players}
	} else {
		delete(m.Header, bus.HeaderPlayers)
	}
	m.Data = f.it.unit
	m.Reply = d.inbox + "." + strconv.FormatUint(d.slot(f.it.seq), 10)
	// A publish fails only when the connection is closed for good; the attempt then
	// times out like any other.
	if err := d.nc.PublishMsg(m); err != nil {
		d.log.Error().Err(err).Uint64("seq", f.it.seq).Msg("publish dump")
	}
	if f.attempts == 1 && d.cfg.Record != nil {
		h := make(nats.Header, len(m.Header))
		for k, v := range m.Header {
			h[k] = []string{v[0]}
		}
		d.cfg.Record(&nats.Msg{Subject: m.Subject, Header: h, Data: m.Data})
	}
}

// record hands the result the port takes as a unit's outcome to the history's
// recorder, as the worker published it.
func (d *display) record(seq uint64, data []byte) {
	if d.cfg.Record == nil {
		return
	}
	d.cfg.Record(&nats.Msg{Subject: d.result, Data: data, Header: nats.Header{
		bus.HeaderMsgID: {bus.ResultID(d.origin, seq)}, bus.HeaderTime: {bus.FormatTime(time.Now())}}})
}

// answer records a worker's answer to one of this port's dumps, from the reply
// subject of the dump, unless the unit already has its outcome. A reply that is not
// the answer to the dump (another origin, seq or unit, or an answer longer than any
// of the problem's) is refused, counted, and never written.
func (d *display) answer(m *nats.Msg) {
	slot, err := strconv.ParseUint(strings.TrimPrefix(m.Subject, d.inbox+"."), 10, 64)
	if err != nil {
		d.refuse(m, 0, err)
		return
	}
	res, err := result.Decode(m.Data)
	if err != nil {
		d.refuse(m, 0, err)
		return
	}
	seq := res.Seq
	if d.slot(seq) != slot {
		d.refuse(m, seq, fmt.Errorf("on the reply subject of slot %d, not %d: %w", slot, d.slot(seq), bus.ErrOtherSeq))
		return
	}
	// A late answer's unit is gone, and its digest with it: its origin and length
	// are still checked, so that a forgery is counted however late it comes.
	f, ok := d.inFlight[seq]
	digest := res.UnitDigest
	if ok {
		digest = f.it.digest
	}
	dumped := bus.Dumped{Problem: d.pc.Problem, Port: d.pc.Name, Seq: seq, Origin: d.origin, Digest: digest, MaxAnswer: d.maxAnswer}
	err = dumped.CheckSubject(res.Problem, res.Port)
	if err == nil {
		err = dumped.Check(res.Seq, res.Origin, res.UnitDigest, len(res.Answer))
	}
	if err != nil {
		d.refuse(m, seq, err)
		return
	}
	if !ok {
		d.log.Debug().Uint64("seq", seq).Msg("late or repeated answer ignored")
		return
	}
	delete(d.inFlight, seq)
	d.record(seq, m.Data)
	if res.Error != "" {
		// The worker published the error result itself.
		d.warn.Warn(&d.log, "bad unit").Uint64("seq", seq).Dur(logging.FieldElapsed, time.Since(f.it.read)).Str("error", res.Error).Msg("bad unit")
		d.settle(&f.it, &res)
		return
	}
	if e := d.log.Debug(); e.Enabled() {
		e.Uint64("seq", seq).Dur(logging.FieldElapsed, time.Since(f.it.read)).Msg("unit answered")
	}
	d.settle(&f.it, &res)
}

// slot is the token of a unit's reply subject. The units in flight span fewer seqs
// than MaxInFlight, so no two of them share one: a worker allowed to answer once on
// a reply subject (allow_responses) can always answer its dump. A few subjects
// reused, rather than one per seq, keep the server's subject cache warm.
func (d *display) slot(seq uint64) uint64 { return seq % uint64(d.cfg.MaxInFlight) }

// refuse counts a reply that is not an answer to this port's dump, with a sampled
// warning: a worker that sends one has a bug, or someone forged it.
func (d *display) refuse(m *nats.Msg, seq uint64, why error) {
	d.cfg.Monitor.refused()
	d.warn.Warn(&d.log, "refused answer").Uint64("seq", seq).Int("bytes", len(m.Data)).Err(why).
		Msg("a reply on the port's inbox is not the answer to its dump; refused, never written")
}

// expire publishes again the dumps whose attempt timed out, and gives up those out
// of attempts.
func (d *display) expire(now time.Time) {
	for _, f := range d.inFlight {
		if now.Before(f.deadline) {
			continue
		}
		if f.attempts >= d.cfg.Attempts {
			d.giveUp(f, fmt.Sprintf("no worker answered within %v (%d attempts)", d.cfg.RequestTimeout, f.attempts))
			continue
		}
		d.log.Warn().Uint64("seq", f.it.seq).Int("attempt", f.attempts).Msg("no answer in time; publishing the dump again")
		d.met.Retry()
		d.publish(f)
	}
}

func (d *display) giveUp(f *flight, why string) {
	delete(d.inFlight, f.it.seq)
	d.log.Error().Uint64("seq", f.it.seq).Int64("line", f.it.line).Dur(logging.FieldElapsed, time.Since(f.it.read)).Msg(why)
	res := d.publishError(&f.it, why, "daemon", why == stopGiveUp)
	d.settle(&f.it, &res)
}

// publishError publishes the error result of a unit no worker answered, with the
// outcome "stopped" for one the drain bound ended: the history keeps it as it keeps
// any result. It comes back to answer, which ignores it: the unit already has its
// outcome. It returns the result, the unit's outcome.
func (d *display) publishError(it *item, msg, who string, stopped bool) result.Record {
	seq, line := it.seq, it.line
	res := result.Record{Problem: d.pc.Problem, Port: d.pc.Name, Seq: seq, Error: msg, Origin: d.origin, Worker: who,
		Players: result.ParsePlayers(it.players)}
	if int64(int(line)) == line { // a result's line is an int: past it (armhf), none
		res.Line = int(line)
	}
	if stopped {
		res.Outcome = result.OutcomeStopped
	}
	// The workers' id for the unit's result: whichever comes first is the one the
	// history keeps, as on the port.
	m := &nats.Msg{Subject: d.result, Data: res.AppendJSON(nil), Header: nats.Header{
		bus.HeaderMsgID: {bus.ResultID(d.origin, seq)}, bus.HeaderTime: {bus.FormatTime(time.Now())}}}
	if err := d.nc.PublishMsg(m); err != nil {
		d.log.Error().Err(err).Uint64("seq", seq).Msg("publish error result")
	}
	if d.cfg.Record != nil {
		d.cfg.Record(m)
	}
	return res
}

// noteStored takes the history's notices of this port's units whose results it
// stored.
func (d *display) noteStored() {
	seqs := d.stored.take(d.spare)
	for _, seq := range seqs {
		if seq >= d.next {
			d.storedSeqs[seq] = struct{}{}
		}
	}
	d.spare = seqs
}

// flush hands the outcomes that are next in sequence to the device writer. It never
// waits: when the writer's queue is full, it stops until the writer makes room.
//
// With a history storing, an outcome waits for its unit's result to be stored in
// the stream (Stored), at most StoreWait: an answer on the port is then one the
// history keeps through a kill -9. Past the drain bound nothing waits.
func (d *display) flush() {
	for {
		o, ok := d.done[d.next]
		if !ok {
			return
		}
		if d.stored != nil {
			// Past the drain bound nothing waits for the history: the stop's
			// bound is the drain's, and the device's write timeout after it.
			if _, ok := d.storedSeqs[d.next]; !ok && !d.drained && d.cfg.Stored.holding() {
				if time.Since(o.at) < d.cfg.StoreWait {
					return // held: noteStored or the tick flushes again
				}
				d.unconfirmed++
				d.warn.Warn(&d.log, "not stored").Uint64("seq", d.next).Uint64("written_before_stored", d.unconfirmed).
					Dur("bound_ms", d.cfg.StoreWait).Msg("the history has not stored the unit's result in time; its answer is written anyway")
			}
		}
		if len(o.text) > 0 {
			// Counted by the device writer once written, or dropped.
			select {
			case d.out <- answer{text: o.text, epoch: o.epoch, failed: o.failed, stopped: o.stopped}:
			default:
				if !d.dropping {
					// The device writer is behind: keep the outcome until it makes
					// room. A device that does not read at all still lets the queue
					// move: each write gives up after its deadline.
					d.blocked = true
					return
				}
				// Stopping, the drain bound and a write timeout more have passed: a
				// device still this far behind is not reading; no more waiting.
				d.log.Error().Uint64("seq", d.next).Msg("stopping: the port's write queue is full; answer dropped")
				d.cfg.Monitor.dropped(d.pc.Name)
			}
		} else {
			d.cfg.Monitor.outcome(d.pc.Name, o.failed, o.stopped)
		}
		d.met.Took(time.Since(o.read).Seconds())
		switch {
		case o.stopped:
			d.stopped++
		case o.failed:
			d.failed++
		default:
			d.answered++
		}
		delete(d.done, d.next)
		delete(d.storedSeqs, d.next)
		d.next++
	}
}
