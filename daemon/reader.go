package daemon

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/serialio"
)

// link holds a port's open device, shared by its reader (which opens, loses and
// reopens it) and its device writer (which writes to whatever is open now).
type link struct {
	mu      sync.Mutex
	port    serialio.Port // nil while the device is away
	stopped bool          // reading must stop: set a past read deadline on every port
	// epoch counts the devices opened: an answer is for the device of its unit's.
	epoch uint64
	// changed is closed, and replaced, whenever port is: the device writer waits
	// on it for a device to come back.
	changed chan struct{}
}

func newLink() *link { return &link{changed: make(chan struct{})} }

// set makes p the open device and returns its epoch.
func (l *link) set(p serialio.Port) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.port = p
	l.epoch++
	l.signal()
	if l.stopped {
		_ = p.SetReadDeadline(time.Unix(1, 0))
	}
	return l.epoch
}

func (l *link) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// current is the open device (nil while away), its epoch, and a channel closed at
// its next change.
func (l *link) current() (serialio.Port, uint64, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.port, l.epoch, l.changed
}

func (l *link) get() serialio.Port {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.port
}

// drop closes p, the device that went away.
func (l *link) drop(p serialio.Port) {
	l.mu.Lock()
	if l.port == p {
		l.port = nil
		l.signal()
	}
	l.mu.Unlock()
	_ = p.Close()
}

// stopReading makes a blocked Read return, where the port allows it. It reports
// false for a port that cannot be interrupted (stdin as a plain file or blocking
// pipe), whose reader may then stay blocked until the process exits.
func (l *link) stopReading() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.port == nil {
		return true
	}
	return l.port.SetReadDeadline(time.Unix(1, 0)) == nil
}

// item is one unit read from a port, or an error for input that was skipped.
type item struct {
	seq   uint64
	line  int64
	epoch uint64 // the device it was read from (link.epoch)
	unit  []byte // a copy, owned by the item
	// digest is bus.UnitDigest of unit, which its answer must carry: computed here,
	// beside the display writer rather than in its loop.
	digest string
	err    error // an *engine.InputError: the input was skipped
	read   time.Time
	// players is the port's game when the unit was taken (Config.Players), the
	// dump's and its result's players: a round loaded later does not rename it.
	players string
}

// reader is a port's reader actor: it opens the device (and reopens it when it goes
// away), cuts its stream into units and hands them, numbered from 1, to the display
// writer. It closes items when it stops: at the end of stdin, or when ctx ends.
type reader struct {
	cfg   PortConfig
	p     engine.Problem
	link  *link
	open  func() (serialio.Port, error)
	back  backoff.Policy
	log   zerolog.Logger
	items chan<- item
	gone  <-chan struct{} // closed once the display writer takes no more items
	mon   *Monitor
	met   *metrics.Port
	// err is why the port could never be opened (a permanent error of
	// serialio.Diagnose), once run has returned.
	err error
	// stats are the stream's line ends, which the display writer watches.
	stats *serialio.LineStats
	// firstLine is where the line count starts: 0 but in a test.
	firstLine int64
}

func (r *reader) run(ctx context.Context) {
	defer close(r.items)
	warn := newWarnSampler()
	sc := serialio.NewScanner(r.p, func(err error) {
		warn.Warn(&r.log, "line dropped").Err(err).Msg("line dropped")
	})
	sc.Stats = r.stats
	sc.CountFrom(r.firstLine)
	if r.log.GetLevel() <= zerolog.TraceLevel {
		sc.Trace = func(n int64, line []byte) {
			r.log.Trace().Int64("line", n).Int("bytes", len(line)).Msg("line read")
		}
	}
	var seq uint64
	for opened := 0; ; opened++ {
		open := func() (serialio.Port, error) {
			p, err := r.open()
			if err != nil && r.cfg.Device != serialio.Stdio {
				err = serialio.Diagnose(r.cfg.Device, err, opened > 0)
			}
			return p, err
		}
		port, err := serialio.OpenRetry(ctx, open, r.back, func(err error, attempt int, wait time.Duration) {
			r.mon.tried(r.cfg.Name)
			if backoff.Logged(attempt) {
				r.log.Warn().Err(err).Int("attempt", attempt).Dur("retry_in_ms", wait).Msg("port not available")
			}
		})
		if serialio.Permanent(err) {
			// Never opened, and nothing but the user can change that: one error with
			// the fix, and the port ends, rather than an attempt every few seconds.
			r.mon.tried(r.cfg.Name)
			r.log.Error().Err(err).Msg("port cannot be opened")
			r.err = err
			return
		}
		if err != nil {
			return // ctx ended
		}
		epoch := r.link.set(port)
		r.mon.opened(r.cfg.Name)
		if opened == 0 {
			r.log.Info().Msg("port opened")
		} else {
			r.log.Info().Msg("port reopened")
		}
		sc.Reset(port)
		err = r.readUnits(ctx, sc, &seq, epoch)
		switch {
		case ctx.Err() != nil:
			if n := sc.Reset(nil); n > 0 {
				r.log.Warn().Int("lines", n).Msg("stopping: partial unit dropped: the rest of it was never read")
			}
			return
		case errors.Is(err, io.EOF):
			r.log.Info().Uint64("units", seq).Msg("end of input")
			return
		case r.cfg.Device == serialio.Stdio:
			r.log.Error().Err(err).Msg("reading stdin; stopping")
			return
		}
		// The device went away (unplugged, hung up): what was read of a unit is
		// dropped, never answered, and the same path is opened again.
		r.link.drop(port)
		r.mon.lost(r.cfg.Name)
		r.log.Warn().Err(err).Msg("port lost")
		if n := sc.Reset(nil); n > 0 {
			r.log.Warn().Int("lines", n).Msg("partial unit dropped: the port was lost in the middle of it")
		}
	}
}

// readUnits reads units from sc until it fails, handing each to the display writer.
func (r *reader) readUnits(ctx context.Context, sc *serialio.Scanner, seq *uint64, epoch uint64) error {
	for {
		u, err := sc.Next()
		if err != nil {
			return err
		}
		it := item{seq: *seq + 1, line: u.Line, epoch: epoch, err: u.Err, read: time.Now()}
		if u.Err == nil {
			it.unit = append([]byte(nil), u.Data...)
			it.digest = bus.UnitDigest(it.unit)
		}
		// Once stopping, the display writer still takes every unit read, to answer it
		// within the drain bound or give it its outcome; it leaves only after the
		// bound, when a reader blocked in a read that cannot be interrupted never
		// closes items.
		select {
		case r.items <- it:
			*seq = it.seq
		case <-r.gone:
			*seq = it.seq
			unanswered(r.log, r.mon, r.cfg.Name, it)
			return errDisplayGone
		}
		// Stopping: the unit completed is handed over. A port whose reads are
		// interrupted goes on only with the units its scanner already holds (read
		// from the device: they are units read), until the read that fails. One whose
		// reads cannot be interrupted (stdin) stops here: it would go on reading a
		// fast stream until the display writer left, and every unit read meanwhile
		// would be more to answer within the drain bound.
		if err := ctx.Err(); err != nil && !r.link.stopReading() {
			return err
		}
	}
}

var errDisplayGone = errors.New("the display writer has stopped")

// unanswered logs and counts a unit read after the display writer stopped: it gets
// no answer, nor any error result: it counts as stopped.
func unanswered(log zerolog.Logger, mon *Monitor, port string, it item) {
	log.Error().Uint64("seq", it.seq).Int64("line", it.line).
		Msg("stopping: unit read after the drain bound, when the display writer had stopped; no answer")
	mon.outcome(port, true, true)
}

// openFunc returns how to open a port's device.
func openFunc(pc PortConfig, stdin io.Reader, stdout io.Writer) func() (serialio.Port, error) {
	if pc.Device == serialio.Stdio {
		var once bool
		return func() (serialio.Port, error) {
			if once {
				return nil, errors.New("stdin ended") // not reached: stdin is never reopened
			}
			once = true
			if stdin == nil {
				stdin = os.Stdin
			}
			if stdout == nil {
				stdout = os.Stdout
			}
			return serialio.NewStdio(stdin, stdout), nil
		}
	}
	return func() (serialio.Port, error) { return serialio.Open(pc.Device, pc.Line) }
}
