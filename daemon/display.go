package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/logging"
)

// flight is a unit published as a dump and not answered yet.
type flight struct {
	it       item
	attempts int
	deadline time.Time
}

// outcome is what a unit came to: its answer, or why it has none.
type outcome struct {
	answer []byte
	err    string
	line   int
	read   time.Time
}

// display is a port's display writer actor. It publishes each unit as a dump, takes
// the workers' answers from the port's results subject (other tools read the same
// results; a request-reply would put a third message through the server for every
// unit), publishes a dump again when no worker answered in time, and puts the
// outcomes back in sequence order for the device writer: each unit gets exactly one
// outcome, the first that comes (later results of a unit published twice are
// ignored), and a unit no worker answers ends, after the last attempt, as an error,
// so it never holds the later ones back.
type display struct {
	cfg    *Config
	pc     PortConfig
	nc     *nats.Conn
	log    zerolog.Logger
	dump   string // the dump subject
	result string // the result subject
	origin string // the dumps' Scoreboard-Origin: results carrying another are not ours
	msg    nats.Msg

	items   <-chan item
	results chan *nats.Msg
	out     chan<- []byte // to the device writer

	next     uint64 // the seq to write next
	last     uint64 // the highest seq taken from the reader
	inFlight map[uint64]*flight
	done     map[uint64]outcome
	blocked  bool          // an outcome waits for room in the device writer's queue
	drained  bool          // stopping, and the drain bound has passed
	room     chan struct{} // the device writer took answers from its queue
	warn     *logging.Sampler
}

func newDisplay(cfg *Config, pc PortConfig, nc *nats.Conn, log zerolog.Logger, items <-chan item, out chan<- []byte, room chan struct{}) *display {
	s := bus.Subjects{Prefix: cfg.Prefix}
	return &display{
		cfg: cfg, pc: pc, nc: nc, log: log,
		dump:     s.Dump(pc.Problem, pc.Name),
		result:   s.Result(pc.Problem, pc.Name),
		origin:   bus.NewOrigin(),
		items:    items,
		results:  make(chan *nats.Msg, 2*cfg.MaxInFlight*cfg.Attempts),
		out:      out,
		room:     room,
		next:     1,
		inFlight: map[uint64]*flight{},
		done:     map[uint64]outcome{},
		warn:     newWarnSampler(),
	}
}

// run works until the reader has stopped and every unit it handed over has its
// outcome; or, once ctx ends, for at most cfg.Drain more. It closes out when it
// returns.
func (d *display) run(ctx context.Context) error {
	defer close(d.out)
	// The connection's reader hands results straight to this actor: no goroutine in
	// between. Should the channel ever be full, the result is dropped (nats.go reports
	// a slow consumer) and the unit's next attempt makes up for it.
	sub, err := d.nc.ChanSubscribe(d.result, d.results)
	if err != nil {
		return fmt.Errorf("port %s: subscribe to results: %w", d.pc.Name, err)
	}
	defer sub.Unsubscribe()
	// The server must have the subscription before the first dump's result comes. A
	// connection that is reconnecting resends it when it is back, and the units' next
	// attempts make up for results missed meanwhile: a warning, not a failed port.
	if err := d.nc.FlushTimeout(5 * time.Second); err != nil {
		d.log.Warn().Err(err).Msg("the server has not confirmed the results subscription yet")
	}

	tick := time.NewTicker(max(d.cfg.RequestTimeout/8, time.Millisecond))
	defer tick.Stop()
	var drain <-chan time.Time
	items := d.items
	stopping := ctx.Done()
	for items != nil || d.next <= d.last {
		take := items
		if !d.canTake() {
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
			for len(items) > 0 && d.canTake() {
				d.take(<-items)
			}
		case m := <-d.results:
			d.answer(m)
			for range len(d.results) {
				d.answer(<-d.results)
			}
		case <-d.room:
			d.blocked = false
		case now := <-tick.C:
			d.expire(now)
			d.cfg.Monitor.beat(d.pc.Name)
		case <-stopping:
			// Stop taking units, and give those in flight a bounded time to finish.
			stopping, items = nil, nil
			t := time.NewTimer(d.cfg.Drain)
			defer t.Stop()
			drain = t.C
			d.log.Info().Int("in_flight", len(d.inFlight)).Dur("bound", d.cfg.Drain).Msg("stopping: draining units in flight")
		case <-drain:
			d.drained = true
			for seq := d.next; seq <= d.last; seq++ {
				if f, ok := d.inFlight[seq]; ok {
					d.giveUp(f, "daemon stopping: no answer within the drain bound")
				}
			}
		}
		d.flush()
	}
	return nil
}

// canTake says whether to take another unit: not while as many units as allowed wait
// for their answers, nor while the device writer is behind.
func (d *display) canTake() bool {
	return !d.blocked && d.last-d.next+1 < uint64(d.cfg.MaxInFlight)
}

// take publishes a unit from the reader, or records its framing error.
func (d *display) take(it item) {
	d.last = it.seq
	if it.err != nil {
		d.warn.Warn(&d.log, "bad unit").Uint64("seq", it.seq).Int("line", it.line).Err(it.err).Msg("bad unit")
		d.publishError(it.seq, it.line, it.err.Error(), "reader")
		d.done[it.seq] = outcome{err: it.err.Error(), line: it.line, read: it.read}
		return
	}
	d.log.Debug().Uint64("seq", it.seq).Int("line", it.line).Msg("unit read")
	f := &flight{it: it}
	d.inFlight[it.seq] = f
	d.publish(f)
}

func (d *display) publish(f *flight) {
	f.attempts++
	f.deadline = time.Now().Add(d.cfg.RequestTimeout)
	// One message, reused: PublishMsg has encoded it by the time it returns.
	m := &d.msg
	if m.Header == nil {
		m.Subject = d.dump
		m.Header = nats.Header{
			bus.HeaderPort: {d.pc.Name}, bus.HeaderSeq: {""}, bus.HeaderLine: {""}, bus.HeaderOrigin: {d.origin},
			bus.HeaderMsgID: {""},
		}
	}
	// The same id on every attempt: the history keeps the unit once.
	m.Header[bus.HeaderMsgID][0] = bus.DumpID(d.origin, f.it.seq)
	m.Data = f.it.unit
	m.Header[bus.HeaderSeq][0] = strconv.FormatUint(f.it.seq, 10)
	m.Header[bus.HeaderLine][0] = strconv.Itoa(f.it.line)
	// A publish fails only when the connection is closed for good; the attempt then
	// times out like any other.
	if err := d.nc.PublishMsg(m); err != nil {
		d.log.Error().Err(err).Uint64("seq", f.it.seq).Msg("publish dump")
	}
}

// answer records a worker's result, unless it is not one of this port's units (another
// daemon or a send command using the same port name) or the unit already has its
// outcome.
func (d *display) answer(m *nats.Msg) {
	res, err := parseResult(m.Data)
	if err != nil {
		d.warn.Warn(&d.log, "bad result").Err(err).Msg("a message on the results subject is not a result; ignored")
		return
	}
	if !bus.FromOrigin(res.Origin, d.origin) {
		d.warn.Warn(&d.log, "foreign result").Str("origin", res.Origin).Uint64("seq", res.Seq).
			Msg("a result for another publisher of this port's dumps: the port name is used twice on this bus; give each port its own --port-name (name in [[port]])")
		return
	}
	f, ok := d.inFlight[res.Seq]
	if !ok {
		d.log.Debug().Uint64("seq", res.Seq).Msg("late or repeated result ignored")
		return
	}
	delete(d.inFlight, res.Seq)
	seq := res.Seq
	if res.Error != "" {
		// The worker published the error result itself.
		d.warn.Warn(&d.log, "bad unit").Uint64("seq", seq).Dur("elapsed", time.Since(f.it.read)).Str("error", res.Error).Msg("bad unit")
		d.done[seq] = outcome{err: res.Error, line: f.it.line, read: f.it.read}
		return
	}
	if e := d.log.Debug(); e.Enabled() {
		e.Uint64("seq", seq).Dur("elapsed", time.Since(f.it.read)).Msg("unit answered")
	}
	d.done[seq] = outcome{answer: []byte(res.Answer), line: f.it.line, read: f.it.read}
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
		d.publish(f)
	}
}

func (d *display) giveUp(f *flight, why string) {
	delete(d.inFlight, f.it.seq)
	d.log.Error().Uint64("seq", f.it.seq).Int("line", f.it.line).Dur("elapsed", time.Since(f.it.read)).Msg(why)
	d.publishError(f.it.seq, f.it.line, why, "daemon")
	d.done[f.it.seq] = outcome{err: why, line: f.it.line, read: f.it.read}
}

// publishError publishes the error result of a unit no worker answered. It comes back
// to answer, which ignores it: the unit already has its outcome.
func (d *display) publishError(seq uint64, line int, msg, who string) {
	data, err := json.Marshal(bus.Result{
		Problem: d.pc.Problem, Port: d.pc.Name, Seq: seq, Line: line, Error: msg, Origin: d.origin, Worker: who,
	})
	if err == nil {
		// The workers' id for the unit's result: whichever comes first is the one the
		// history keeps, as on the port.
		err = d.nc.PublishMsg(&nats.Msg{Subject: d.result, Data: data, Header: nats.Header{bus.HeaderMsgID: {bus.ResultID(d.origin, seq)}}})
	}
	if err != nil {
		d.log.Error().Err(err).Uint64("seq", seq).Msg("publish error result")
	}
}

// flush hands the outcomes that are next in sequence to the device writer. It never
// waits: when the writer's queue is full, it stops until the writer makes room.
func (d *display) flush() {
	for {
		o, ok := d.done[d.next]
		if !ok {
			return
		}
		text := o.answer
		if o.err != "" {
			text = nil
			if d.pc.ErrorLine {
				text = []byte("error: " + strings.ReplaceAll(o.err, "\n", " ") + "\n")
			}
		}
		if len(text) > 0 {
			select {
			case d.out <- text:
			default:
				if !d.drained {
					// The device writer is behind: keep the outcome, and take no
					// more units until it catches up, so the reader stops reading.
					// A device that does not read at all still lets the queue move:
					// each write gives up after its deadline.
					d.blocked = true
					return
				}
				// Stopping, and the drain bound has passed: no more waiting.
				d.log.Error().Uint64("seq", d.next).Msg("stopping: the port's write queue is full; answer dropped")
			}
		}
		d.cfg.Monitor.outcome(o.err != "")
		delete(d.done, d.next)
		d.next++
	}
}
