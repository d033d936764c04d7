package daemon

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/goclub/scoreboard/serialio"
)

// Run serves the configured ports through nc, whose workers (in this process or
// others) answer the dumps. It returns when every port has ended (only "-" ends, at
// the end of stdin, once each unit read has its outcome), or, after ctx ends, once the
// units in flight are answered or cfg.Drain has passed. It returns an error only for
// a bad configuration or a connection that cannot subscribe. Without ports it
// returns at once.
func Run(ctx context.Context, nc *nats.Conn, cfg Config, log zerolog.Logger) error {
	return RunReloading(ctx, nc, cfg, nil, log)
}

// RunReloading is Run, and each Config received on reloads replaces the ports (its
// other settings are not applied: the caller tells which need a restart). Ports
// added are started; ports removed are stopped as a stop does it (reading stops, the
// units read get their outcome within Drain); ports whose settings changed are
// stopped so and started again. A port that did not change keeps its actors, its
// open device and its sequence. A Config that does not validate is logged with every
// error and the running ports are kept. With reloads, Run without ports waits for
// some (or for ctx) instead of returning.
func RunReloading(ctx context.Context, nc *nats.Conn, cfg Config, reloads <-chan Config, log zerolog.Logger) error {
	cfg.Ports = append([]PortConfig(nil), cfg.Ports...)
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.setDefaults()
	if cfg.Monitor == nil {
		cfg.Monitor = NewMonitor() // /metrics' counts, with or without systemd's
	}
	cfg.Metrics.Ports(cfg.Monitor.Ports)
	s := &supervisor{ctx: ctx, nc: nc, cfg: &cfg, log: log, ports: map[string]*running{}, ended: make(chan ended)}
	for _, pc := range cfg.Ports {
		s.start(pc)
	}
	if len(s.ports) == 0 && reloads == nil {
		return nil
	}
	return s.run(reloads)
}

// supervisor is RunReloading's actor: it owns the set of running ports.
type supervisor struct {
	ctx   context.Context
	nc    *nats.Conn
	cfg   *Config
	log   zerolog.Logger
	ports map[string]*running // by name: the ports of the configuration in force
	live  int                 // port actors not returned yet, those stopping included
	ended chan ended
}

// running is one port's actors, as started.
type running struct {
	pc      PortConfig
	stop    context.CancelFunc
	done    chan struct{} // closed once its actors have returned
	stopped bool          // stopped by a reload, not ended by itself
}

type ended struct {
	r   *running
	err error
}

// start starts pc's actors, once the ports given have returned: a port changed or
// renamed opens its device only once its former self has let it go.
func (s *supervisor) start(pc PortConfig, after ...*running) {
	ctx, stop := context.WithCancel(s.ctx)
	r := &running{pc: pc, stop: stop, done: make(chan struct{})}
	s.ports[pc.Name] = r
	s.live++
	go func() {
		for _, a := range after {
			<-a.done
		}
		err := runPort(ctx, s.nc, s.cfg, pc, s.log)
		stop()
		s.ended <- ended{r, err}
	}()
}

func (s *supervisor) run(reloads <-chan Config) error {
	var errs []error
	stopping := s.ctx.Done()
	for {
		select {
		case e := <-s.ended:
			s.live--
			close(e.r.done)
			if e.err != nil {
				errs = append(errs, e.err)
			}
			if s.ports[e.r.pc.Name] == e.r {
				delete(s.ports, e.r.pc.Name)
			} else if _, kept := s.ports[e.r.pc.Name]; !kept {
				// Removed: its state and series go with it, or an alert would say
				// forever that it is down.
				s.cfg.Monitor.remove(e.r.pc.Name)
				s.cfg.Metrics.Forget(e.r.pc.Name)
			}
			// Every port has ended by itself (stdin did), or the daemon is stopping.
			if s.live == 0 && (s.ctx.Err() != nil || !e.r.stopped || reloads == nil) {
				return errors.Join(errs...)
			}
		case next, ok := <-reloads:
			if !ok {
				reloads = nil
				continue
			}
			s.reload(next)
		case <-stopping:
			stopping, reloads = nil, nil
			if s.live == 0 {
				return errors.Join(errs...)
			}
		}
	}
}

// samePort says whether a reload leaves a port running as it is: its table is
// the pairings' (read at each load), not the port's.
func samePort(a, b PortConfig) bool {
	a.Table, b.Table = 0, 0
	return a == b
}

// reload makes the running ports next's.
func (s *supervisor) reload(next Config) {
	next.Ports = append([]PortConfig(nil), next.Ports...)
	if err := next.Validate(); err != nil {
		errs := unjoin(err)
		for _, e := range errs {
			s.log.Error().Err(e).Msg("reload: bad configuration")
		}
		s.log.Error().Int("errors", len(errs)).Msg("reload: the configuration has errors; the running configuration is kept")
		return
	}
	next.setDefaults()
	var added, removed, changed, unchanged []string
	want := map[string]PortConfig{}
	for _, pc := range next.Ports {
		want[pc.Name] = pc
	}
	var stopped []*running
	for name, r := range s.ports {
		if pc, ok := want[name]; !ok || !samePort(pc, r.pc) {
			if !ok {
				removed = append(removed, name)
			}
			r.stopped = true
			r.stop()
			delete(s.ports, name)
			stopped = append(stopped, r)
		}
	}
	for _, pc := range next.Ports {
		old := findPort(stopped, pc.Name)
		if r, ok := s.ports[pc.Name]; ok && samePort(r.pc, pc) {
			unchanged = append(unchanged, pc.Name)
			continue
		}
		if old != nil {
			changed = append(changed, pc.Name)
		} else {
			added = append(added, pc.Name)
		}
		// The port waits for its former self and for any port stopping that had
		// its device.
		var after []*running
		for _, r := range stopped {
			if r.pc.Name == pc.Name || r.pc.Device == pc.Device {
				after = append(after, r)
			}
		}
		s.start(pc, after...)
	}
	for _, l := range [][]string{added, removed, changed, unchanged} {
		sort.Strings(l)
	}
	s.log.Info().Strs("added", added).Strs("removed", removed).Strs("changed", changed).Strs("unchanged", unchanged).
		Msg("reload: ports updated")
}

func findPort(rs []*running, name string) *running {
	for _, r := range rs {
		if r.pc.Name == name {
			return r
		}
	}
	return nil
}

// unjoin lists the errors errors.Join put together, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// runPort runs one port's three actors and returns when the display writer and the
// device writer are done.
func runPort(ctx context.Context, nc *nats.Conn, cfg *Config, pc PortConfig, log zerolog.Logger) error {
	p, _ := engine.Lookup(pc.Problem)
	log = log.With().Str("port", pc.Name).Str("problem", pc.Problem).Logger()
	cfg.Monitor.add(pc.Name, pc.Problem)
	defer cfg.Monitor.end(pc.Name)
	met := cfg.Metrics.Port(pc.Name)
	items := make(chan item, readAhead(p.Limits().MaxUnit))
	queue := make(chan answer, cfg.WriteQueue)
	room := make(chan struct{}, 1)
	ln := newLink()
	stats := &serialio.LineStats{}
	defer func() {
		if port := ln.get(); port != nil {
			ln.drop(port)
		}
	}()

	// The reader: opens the device, reopens it when it comes back, numbers the units.
	// It stops at the end of stdin or when ctx ends; a stdin that cannot be
	// interrupted may keep it blocked in a read until the process exits, so it is not
	// waited for then.
	gone := make(chan struct{})
	r := &reader{
		cfg: pc, p: p, link: ln, items: items, gone: gone, mon: cfg.Monitor, met: met,
		open: openFunc(pc, cfg.Stdin, cfg.Stdout), stats: stats, firstLine: cfg.firstLine,
		back: backoff.Policy{Min: cfg.ReopenMin, Max: cfg.ReopenMax},
		log:  log.With().Str("component", "reader").Str("device", pc.Device).Logger(),
	}
	readCtx, stopReader := context.WithCancel(ctx)
	defer stopReader()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		r.run(readCtx)
	}()
	stuck := make(chan struct{}) // closed when the reader's reads cannot be interrupted
	go func() {
		select {
		case <-readerDone:
		case <-readCtx.Done():
			if !ln.stopReading() {
				r.log.Debug().Msg("the port's reads cannot be interrupted; the reader stops at its next line")
				close(stuck)
			}
		}
	}()

	// The device writer: writes answers in the order it is given them.
	w := &deviceWriter{
		link: ln, timeout: cfg.WriteTimeout, queue: queue, room: room, stop: ctx.Done(),
		keep: pc.OnReopen == OnReopenWrite, mon: cfg.Monitor, port: pc.Name,
		log: log.With().Str("component", "writer").Logger(),
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		w.run()
	}()

	// The display writer: dumps out, answers back in sequence order.
	d := newDisplay(cfg, pc, nc, log.With().Str("component", "display").Logger(), items, queue, room)
	d.stuck = stuck
	d.met = met
	d.stats = stats
	err := d.run(ctx)
	close(gone)

	// The queue is closed: the device writer finishes what is queued, each write
	// bounded by its deadline.
	<-writerDone
	stopReader()
	select {
	case <-readerDone:
		if err == nil {
			err = r.err // a device that could never be opened
		}
	case <-time.After(time.Second):
		r.log.Warn().Msg("the reader is blocked in a read that cannot be interrupted; leaving it")
	}
	// Units the reader handed over after the display writer left (only a reader that
	// could not be interrupted in time does) are logged and counted, never silent.
	for {
		select {
		case it, ok := <-items:
			if ok {
				unanswered(d.log, cfg.Monitor, pc.Name, it)
				continue
			}
		default:
		}
		break
	}
	if err != nil {
		return fmt.Errorf("port %s: %w", pc.Name, err)
	}
	return nil
}

// readAhead is how many units the reader may have read that the display writer has
// not taken: 16, or fewer when they are large, so that what waits there is at most
// 4 MB beside the units in flight (MaxInFlightBytes); one at least.
func readAhead(maxUnit int) int { return min(16, max(1, (4<<20)/max(maxUnit, 1))) }
