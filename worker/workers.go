package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/result"
)

// Options configures the workers of one process.
type Options struct {
	// Prefix is the first token(s) of every subject; bus.DefaultPrefix when empty.
	Prefix string
	// Version is the build's version. The micro service wants semantic versioning,
	// so one that is not ("dev", "v1.2.3") is made into one ("0.0.0-dev", "1.2.3").
	Version string
	// Problems lists the problems served; every registered problem when empty.
	Problems []string
	// Concurrency is how many dumps are solved at once; GOMAXPROCS when 0.
	Concurrency int
	// Drain bounds how long Stop lets the dumps already taken be solved; those still
	// queued then get an error result. 5s when 0.
	Drain time.Duration
	// Metrics, when set, gets each dump's solve time (scoreboard_solve_seconds).
	Metrics *metrics.Metrics
}

// Workers are one process's instance of the scoreboard micro service (an endpoint
// per problem on <prefix>.solve.<problem>) and its consumer of the dumps on
// <prefix>.dump.<problem>.<port>, both in bus.QueueGroup. Each problem's endpoint reports
// that problem's dumps in its stats' data (dumpstats.go).
type Workers struct {
	nc   *nats.Conn
	svc  micro.Service
	subj bus.Subjects
	log  zerolog.Logger
	id   string

	dumps   []*nats.Subscription // one a problem
	queue   *dumpQueue
	keys    *originKeys
	drain   time.Duration
	wg      sync.WaitGroup
	stopped sync.Once
	stopErr error
	// counts are the dumps' counts by problem, and "" for a dump of none (written
	// once at start, then only read).
	counts map[string]*dumpCounts
	solve  metrics.Solve // nil without metrics

	contests sync.Map // problem name -> *sync.Pool of *contest

	// warn thins out floods of bad units, per port: ten a second are logged, then
	// one in a hundred, each with the count of those left out.
	warn *logging.Sampler
}

// Start adds the workers to nc. Stop them with Stop; closing nc stops them too.
func Start(nc *nats.Conn, o Options, log zerolog.Logger) (*Workers, error) {
	if o.Prefix == "" {
		o.Prefix = bus.DefaultPrefix
	}
	if !bus.ValidPrefix(o.Prefix) {
		return nil, fmt.Errorf("subject prefix %q: want dot-separated tokens of lowercase letters, digits, '-' and '_'", o.Prefix)
	}
	if len(o.Problems) == 0 {
		o.Problems = engine.Names()
	}
	if o.Concurrency <= 0 {
		o.Concurrency = runtime.GOMAXPROCS(0)
	}
	w := &Workers{
		nc:    nc,
		subj:  bus.Subjects{Prefix: o.Prefix},
		log:   log.With().Str("component", "workers").Logger(),
		queue: newDumpQueue(),
		keys:  newOriginKeys(),
		drain: o.Drain,
		warn:  logging.NewSampler(10, time.Second, 100),
		solve: o.Metrics.Solve(engine.Names()),
	}
	if w.drain <= 0 {
		w.drain = 5 * time.Second
	}
	for _, name := range o.Problems {
		if _, err := engine.Find(name); err != nil {
			return nil, fmt.Errorf("workers: %w", err)
		}
	}
	w.counts = map[string]*dumpCounts{"": {}}
	for _, name := range o.Problems {
		w.counts[name] = &dumpCounts{}
	}
	svc, err := micro.AddService(nc, micro.Config{
		Name:         bus.ServiceName,
		Version:      bus.SemVer(o.Version),
		Description:  "Go club scoreboard: contest input in, contest output out",
		StatsHandler: w.endpointStats,
		QueueGroup:   bus.QueueGroup,
		ErrorHandler: func(_ micro.Service, err *micro.NATSError) {
			w.log.Error().Err(err).Msg("service error")
		},
	})
	if err != nil {
		return nil, fmt.Errorf("workers: add service: %w", err)
	}
	w.svc = svc
	w.id = svc.Info().ID
	w.log = w.log.With().Str("worker", w.id).Logger()
	for _, name := range o.Problems {
		p, _ := engine.Lookup(name)
		if err := svc.AddEndpoint(name, w.solveHandler(p), micro.WithEndpointSubject(w.subj.Solve(name))); err != nil {
			_ = svc.Stop()
			return nil, fmt.Errorf("workers: endpoint %s: %w", name, err)
		}
	}
	// The subscription's callback never waits: it answers at once a dump that cannot
	// be solved (unknown problem, larger than its problem's largest unit, the workers
	// stopping) and queues the others per subject, within bounds; a bounded pool
	// solves them, giving each subject its share of the solvers' time (dumpQueue), so
	// that a flood on one subject delays another port's dumps by one dump a solver at
	// most, and its excess gets error results.
	for range o.Concurrency {
		w.wg.Go(func() {
			var buf []byte // each solver's own, for the results' JSON
			for {
				p, ok := w.queue.pop()
				if !ok {
					return
				}
				start := time.Now()
				buf = w.handleDump(p.msg, buf[:0])
				w.queue.done(p, time.Since(start))
			}
		})
	}
	if err := w.subscribeDumps(o.Problems); err != nil {
		_ = svc.Stop()
		w.unsubscribeDumps()
		w.queue.close()
		w.wg.Wait()
		return nil, err
	}
	// Subscriptions leave in the connection's write buffer: without a round trip, a
	// request from another connection made just after start can find no responders
	// yet. A connection that is reconnecting resends them when it is back, so a
	// failed round trip is worth a warning, not a failed start.
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		w.log.Warn().Err(err).Msg("the server has not confirmed the workers' subscriptions yet")
	}
	w.log.Info().Str("version", bus.SemVer(o.Version)).Strs("problems", o.Problems).Str("prefix", o.Prefix).Msg("workers started")
	return w, nil
}

// subscribeDumps takes the dumps of the problems served.
func (w *Workers) subscribeDumps(problems []string) error {
	// One subscription a problem served, each with its own pending list: a flood of
	// one problem's dumps (large capture units, say) that outruns the callback makes
	// nats.go drop that problem's dumps only, never another problem's ports'. A dump
	// of a problem no worker serves is not taken (a request for it gets NATS's "no
	// responders" at once), nor is a copy of a port's dumps published under it.
	for _, name := range problems {
		sub, err := w.nc.QueueSubscribe(w.subj.Dump(name, "*"), bus.QueueGroup, w.takeDump)
		if err != nil {
			return fmt.Errorf("workers: subscribe to the dumps of %s: %w", name, err)
		}
		// What the subscription holds before the callback takes it is memory too:
		// nats.go's default lets half a million messages wait. The callback never
		// waits, so a list this long is only reached by a flood faster than it, whose
		// excess nats.go then drops (and reports as a slow consumer).
		if err := sub.SetPendingLimits(pendingDumps, pendingDumpBytes); err != nil {
			w.log.Warn().Err(err).Msg("set the dumps subscription's limits")
		}
		w.dumps = append(w.dumps, sub)
	}
	return nil
}

// ID is the micro service instance id of these workers, as in results' worker field.
func (w *Workers) ID() string { return w.id }

// Stop stops taking requests and dumps, solves those already taken within the drain
// bound (Options.Drain), gives each one still queued then an error result, and
// returns once the dumps being solved are done. No dump taken goes without a result.
// It is safe to call more than once.
func (w *Workers) Stop() error { return w.StopWithin(w.drain) }

// StopWithin is Stop with the drain bound given: what is left of a stop's own bound
// once the ports it drained first are done. A bound of 0 or less gives the dumps
// queued their error results at once.
func (w *Workers) StopWithin(bound time.Duration) error {
	w.stopped.Do(func() {
		var errs []error
		deadline := time.Now().Add(max(bound, 0))
		if err := w.svc.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop service: %w", err))
		}
		// The dumps the subscriptions hold are taken in, if only for their error
		// results, however little is left of the bound.
		if err := w.drainDumps(max(time.Until(deadline), 100*time.Millisecond)); err != nil {
			errs = append(errs, err)
		}
		// Whatever the callback takes from now on is answered at once with an error.
		if !w.queue.waitEmpty(deadline) {
			w.log.Warn().Dur("bound_ms", bound).Msg("stopping: dumps not solved within the drain bound get an error result")
		}
		var buf []byte
		for _, msg := range w.queue.close() {
			if w.handBack(msg) {
				continue
			}
			buf = w.reject(msg, buf[:0], dumpStopping, "worker stopping: not solved within the drain bound")
		}
		w.wg.Wait()
		w.stopErr = errors.Join(errs...)
		c := w.Counts()
		w.log.Info().Int64("dumps", c.Taken).Int64("solved", c.Solved).Int64("bad", c.Bad).
			Int64("oversize", c.Oversize).Int64("shed", c.Shed).Int64("stopping", c.Stopping).
			Int64("handed_back", c.HandedBack).
			Msg("workers stopped")
	})
	return w.stopErr
}

// takeDump is the dumps subscription's callback. It never waits, so the
// subscription never holds a dump the workers have not seen, and a stop never finds
// it blocked.
func (w *Workers) takeDump(msg *nats.Msg) {
	problem, _, err := w.subj.ParseDump(msg.Subject)
	if err != nil {
		w.refuseSubject(msg, err)
		return
	}
	w.countsOf(problem).n[dumpTaken].Add(1)
	if p, ok := engine.Lookup(problem); ok && len(msg.Data) > p.Limits().MaxUnit {
		// Checked before anything copies it: such a dump is no unit of the problem.
		w.reject(msg, nil, dumpOversize, fmt.Sprintf("%s: dump of %d bytes: larger than the problem's largest unit (%d bytes)",
			problem, len(msg.Data), p.Limits().MaxUnit))
		return
	}
	// Queued by subject and origin: a flood on a port's own subject from another
	// publisher (anyone with the tool role may publish dumps) waits, and is shed,
	// apart from the port's own dumps.
	shed, ok := w.queue.push(w.queueKey(msg, time.Now()), msg)
	for _, m := range shed {
		w.shed(m)
	}
	if !ok {
		if !w.handBack(msg) {
			w.reject(msg, nil, dumpStopping, "worker stopping: dump not taken")
		}
	}
}

// queueKey is the key a dump is queued under (dumpQueue): its subject and origin,
// among the few origins of the subject that publish again (originKeys).
func (w *Workers) queueKey(msg *nats.Msg, now time.Time) string {
	o := msg.Header.Get(bus.HeaderOrigin)
	return w.keys.key(msg.Subject, o[:min(len(o), bus.MaxOrigin)], now)
}

// shed drops a dump its port's queue has no room for, counted and logged (sampled);
// one whose publisher publishes it again is handed back.
// Only a dump sent as a request gets its error result, as the reply: publishing one
// for each would double a flood's load on the bus just when it is too much, and the
// only other publisher waiting for a result, a daemon's port, never queues that many
// and publishes a dump again when its result does not come.
func (w *Workers) shed(msg *nats.Msg) {
	const why = "workers overloaded: this port's dumps come faster than they are solved; dump dropped"
	if w.handBack(msg) {
		return
	}
	if msg.Reply != "" {
		w.reject(msg, nil, dumpShed, why)
		return
	}
	w.countsOfDump(msg).failed(dumpShed, why)
	if e := w.warn.Warn(&w.log, "shed"); e != nil {
		problem, port, _ := w.subj.ParseDump(msg.Subject)
		e.Str("problem", problem).Str("port", port).Int("bytes", len(msg.Data)).Str("error", why).Msg("dump not solved")
	}
}

// handBack leaves a dump whose publisher publishes it again (bus.HeaderAttempt)
// unanswered, counted, for another worker to answer its next attempt; it reports
// false for any other dump, which gets its error result.
func (w *Workers) handBack(msg *nats.Msg) bool {
	if msg.Reply == "" || msg.Header.Get(bus.HeaderAttempt) == "" {
		return false
	}
	w.countsOfDump(msg).n[dumpHandedBack].Add(1)
	return true
}

// reject publishes (and replies with) the error result of a dump that is not solved,
// counts it as o, and logs it, sampled per port. It returns buf, as handleDump.
func (w *Workers) reject(msg *nats.Msg, buf []byte, o outcome, why string) []byte {
	res := w.describe(msg)
	w.countsOf(res.Problem).failed(o, why)
	res.Error = why
	w.warn.Warn(&w.log, res.Port).Str("problem", res.Problem).Str("port", res.Port).Uint64("seq", res.Seq).
		Int("bytes", len(msg.Data)).Str("error", why).Msg("dump not solved")
	return w.publish(msg, res, buf)
}

// unsubscribeDumps ends the dump subscriptions at once.
func (w *Workers) unsubscribeDumps() error {
	var errs []error
	for _, sub := range w.dumps {
		if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrBadSubscription) {
			errs = append(errs, fmt.Errorf("unsubscribe dumps: %w", err))
		}
	}
	return errors.Join(errs...)
}

// drainDumps lets the dump subscriptions hand on the dumps they already hold, within
// a bound, and then unsubscribes.
func (w *Workers) drainDumps(bound time.Duration) error {
	if !w.nc.IsConnected() {
		// A drain needs the server; the dumps held are lost either way.
		return w.unsubscribeDumps()
	}
	var closed []<-chan nats.SubStatus
	for _, sub := range w.dumps {
		done := sub.StatusChanged(nats.SubscriptionClosed)
		if err := sub.Drain(); err != nil {
			if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrBadSubscription) {
				continue
			}
			_ = w.unsubscribeDumps()
			return fmt.Errorf("drain dumps: %w", err)
		}
		closed = append(closed, done)
	}
	timeout := time.After(bound)
	for _, done := range closed {
		select {
		case <-done:
		case <-timeout:
			_ = w.unsubscribeDumps()
			return fmt.Errorf("drain dumps: not done after %v", bound)
		}
	}
	return nil
}

// solveHandler answers a whole contest input of p with its whole contest output. Bad
// units make it an error reply (code 400, the first error as description) whose
// body is still the output of the good units.
func (w *Workers) solveHandler(p engine.Problem) micro.HandlerFunc {
	return func(req micro.Request) {
		if !w.replyOK(p.Name(), "", req.Reply()) {
			return // not solved either: nobody may read its answer
		}
		c := w.contest(p)
		defer w.release(c)
		if err := c.run(req.Data()); err != nil {
			w.log.Error().Err(err).Str("problem", p.Name()).Msg("solve request failed")
			_ = req.Error("500", headerSafe(err.Error()), nil)
			return
		}
		var err error
		if c.bad > 0 {
			desc := c.first.Error()
			if c.bad > 1 {
				desc += fmt.Sprintf(" (and %d more bad units)", c.bad-1)
			}
			err = req.Error("400", headerSafe(desc), c.out)
		} else {
			err = req.Respond(c.out)
		}
		if err != nil {
			w.log.Warn().Err(err).Str("problem", p.Name()).Msg("solve reply failed")
		}
	}
}

func (w *Workers) contest(p engine.Problem) *contest {
	pool, _ := w.contests.LoadOrStore(p.Name(), &sync.Pool{})
	if c, ok := pool.(*sync.Pool).Get().(*contest); ok {
		return c
	}
	return &contest{p: p, fr: p.NewFramer()}
}

func (w *Workers) release(c *contest) {
	if cap(c.out) > 1<<20 {
		return // let one huge request's buffer go
	}
	pool, _ := w.contests.Load(c.p.Name())
	pool.(*sync.Pool).Put(c)
}

// handleDump solves one dump, publishes its result, and replies with the same result
// when the dump was sent as a request. A dump without headers (published by hand)
// still gets a result, with seq 0. It encodes the result in buf and returns it, for
// the next dump: publishing copies the message.
func (w *Workers) handleDump(msg *nats.Msg, buf []byte) []byte {
	start := time.Now()
	res := w.solveDump(msg)
	took := time.Since(start)
	res.SolveMicros = float64(took.Nanoseconds()) / 1e3
	w.solve.Observe(res.Problem, took.Seconds())
	c := w.countsOf(res.Problem)
	c.solveNanos.Add(took.Nanoseconds())
	// The unit's fields go on each event rather than on a child logger: building one
	// per dump would allocate on the hot path even when nothing is logged.
	if res.Error != "" {
		c.failed(dumpBad, res.Error)
		// The port's display warns of it, with its line: the daemon's log says it
		// once. A debug line here, for a worker on another machine.
		if e := w.log.Debug(); e.Enabled() {
			e.Str("problem", res.Problem).Str("port", res.Port).Uint64("seq", res.Seq).
				Str("error", res.Error).Msg("bad unit")
		}
	} else {
		c.n[dumpSolved].Add(1)
		if e := w.log.Debug(); e.Enabled() {
			e.Str("problem", res.Problem).Str("port", res.Port).Uint64("seq", res.Seq).
				Float64("solve_us", res.SolveMicros).Msg("unit solved")
		}
	}
	return w.publish(msg, res, buf)
}

// publish publishes a dump's result, and replies with it when the dump was sent as a
// request. It encodes the result in buf and returns it.
func (w *Workers) publish(msg *nats.Msg, res result.Record, buf []byte) []byte {
	data := res.AppendJSON(buf)
	unit := func(e *zerolog.Event) *zerolog.Event {
		return e.Str("problem", res.Problem).Str("port", res.Port).Uint64("seq", res.Seq)
	}
	// The reply first: it is what a port waits for; the public record can follow.
	if msg.Reply != "" && w.replyOK(res.Problem, res.Port, msg.Reply) {
		if err := msg.Respond(data); err != nil {
			unit(w.log.Error()).Err(err).Msg("reply to dump")
		}
	}
	// The history keeps one result per unit: the stream drops a second one with the
	// same id (a dump published again and answered twice).
	out := &nats.Msg{Subject: w.subj.Result(res.Problem, res.Port), Data: data,
		Header: nats.Header{bus.HeaderTime: {bus.FormatTime(time.Now())}}}
	if id := bus.ResultID(res.Origin, res.Seq); id != "" {
		out.Header[bus.HeaderMsgID] = []string{id}
	}
	if err := w.nc.PublishMsg(out); err != nil {
		unit(w.log.Error()).Err(err).Msg("publish result")
	}
	return data
}

// describe is the result of a dump before it is solved: which unit it is.
func (w *Workers) describe(msg *nats.Msg) result.Record {
	problem, port, err := w.subj.ParseDump(msg.Subject)
	if err != nil { // the subscription's wildcard only lets dump subjects in
		problem, port = "unknown", "unknown"
	}
	h, badSeq := bus.ReadDump(msg.Header)
	if badSeq != "" {
		w.warn.Warn(&w.log, port).Str("port", port).Str("seq", badSeq).Msg("dump with a bad sequence header; using 0")
	}
	return result.Record{Problem: problem, Port: port, Worker: w.id, Seq: h.Seq, Line: h.Line, Origin: h.Origin,
		UnitDigest: bus.UnitDigest(msg.Data), Players: result.ParsePlayers(msg.Header.Get(bus.HeaderPlayers))}
}

func (w *Workers) solveDump(msg *nats.Msg) (res result.Record) {
	res = w.describe(msg)
	problem := res.Problem
	p, err := engine.Find(problem)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer func() {
		if v := recover(); v != nil {
			w.log.Error().Str("problem", problem).Str("panic", fmt.Sprint(v)).Bytes("stack", debug.Stack()).Msg("solver panicked")
			res.Answer, res.Result = "", nil
			res.Error = fmt.Sprintf("%s: internal error: %v", problem, v)
		}
	}()
	unit := msg.Data
	if len(unit) == 0 || unit[len(unit)-1] != '\n' {
		// By hand, a unit often comes without its last newline.
		unit = append(unit[:len(unit):len(unit)], '\n')
	}
	ans, err := p.Solve(unit)
	if err != nil {
		res.Error = engine.Rebase(err, res.Line).Error()
		return res
	}
	res.Answer = string(ans.AppendText(nil))
	if res.Result, err = json.Marshal(ans); err != nil {
		res.Error = fmt.Sprintf("%s: marshal answer: %v", problem, err)
		res.Answer, res.Result = "", nil
	}
	return res
}

// headerSafe makes an error message fit in a header value: one line, and short, since
// a message may quote the input.
func headerSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxErrorHeader {
		s = strings.ToValidUTF8(s[:maxErrorHeader], "") + "..."
	}
	return s
}

const maxErrorHeader = 1024
