// Package club is the club daemon as a type: what `scoreboard run` is, for a test or
// another program to start without the command line. Start brings up, in order, the
// page's listener, the bus (the embedded nats-server, or a connection to an existing
// one), the history, the workers and the ports; Shutdown stops them in the order
// that loses nothing: the ports drain, the workers answer what is left, the history
// stores the last units, and only then does the embedded server stop.
package club

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/worker"
)

// How often the daemon repeats its ports' states for subscribers that came later
// (a change is published at once).
const portStateEvery = 5 * time.Second

// Config is a club daemon's configuration.
type Config struct {
	// Settings are every setting, as config.Load gives them.
	Settings config.Config
	// Ports are the ports' part of Settings (Settings.DaemonConfig()), with Stdin and
	// Stdout for the port "-"; validated.
	Ports daemon.Config
	// Reloads, when not nil, carries each configuration a reload read: the ports
	// follow it, and the daemon serves the ports' subjects even while it has none.
	Reloads <-chan daemon.Config
	// Version is the build's, for the logs and the workers' $SRV.INFO.
	Version string
	// Metrics is the registry the actors count into and the page serves; nil, a new
	// one.
	Metrics *metrics.Metrics
	// NoHold has the display writers answer without waiting for the history to
	// store each unit's result: only to measure what the hold costs.
	NoHold bool
	Log    zerolog.Logger
}

// Daemon is a running club daemon.
type Daemon struct {
	cfg Config
	log zerolog.Logger
	url string

	stop     context.CancelFunc // ends the actors' context: the stop begins
	stopping stopClock
	done     chan struct{} // closed when every actor has ended
	err      error         // the actors' error, once done is closed

	workers     *worker.Workers
	wnc         *nats.Conn
	stopWorkers sync.Once
	// stored is the embedded server when it keeps the history, and conns the
	// connections to it: what they published is stored before it stops (settle).
	stored *bus.Server
	conns  []*nats.Conn

	closers  []func() // what Start opened, closed in reverse by Shutdown
	shutdown sync.Once
}

// Start starts a club daemon. ctx bounds the start only (a bus that is not up
// yet is waited for until it ends); the daemon runs until Shutdown, or until
// its ports end by themselves (Done: stdin ended).
func Start(ctx context.Context, cfg Config) (*Daemon, error) {
	d := &Daemon{cfg: cfg, log: cfg.Log, done: make(chan struct{})}
	if err := d.start(ctx); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// Done is closed when the daemon's actors have ended: every port ended (stdin
// did), or Shutdown began. Shutdown is still to be called.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// ClientURL is the bus the daemon is on, for other processes: the embedded
// server's listener, or the server it joined.
func (d *Daemon) ClientURL() string { return d.url }

// Shutdown stops the daemon: reading stops, the units read are answered within
// daemon.drain or get their error, the history stores what it can within what is
// left of the drain and a second, and everything Start opened is closed. It
// returns the first error of the actors, or ctx's if ctx ends first (the daemon
// then stops on its own, unwatched). Calling it again returns the same.
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.stop()
	select {
	case <-d.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	d.shutdown.Do(func() {
		d.stopTheWorkers()
		if d.stored != nil {
			// What is left of the drain, and a second: a stop takes daemon.drain, and
			// what the history has not stored by then is logged as lost rather than
			// waited for.
			settle(d.stored, d.conns, max(d.cfg.Settings.Daemon.Drain-d.stopping.since(), 0)+time.Second, d.log)
		}
		d.log.Info().Msg("stopped")
		d.close()
	})
	return d.err
}

// close closes what Start opened, the last first.
func (d *Daemon) close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
	d.closers = nil
}

func (d *Daemon) onClose(f func()) { d.closers = append(d.closers, f) }

// stopTheWorkers stops the workers once, with what is left of the drain: the
// ports have drained when they stop, and they get what is left of the same bound
// for the dumps they took from others, so that a stop takes daemon.drain, not
// twice.
func (d *Daemon) stopTheWorkers() {
	d.stopWorkers.Do(func() {
		if d.workers == nil {
			return
		}
		if err := d.workers.StopWithin(d.cfg.Settings.Daemon.Drain - d.stopping.since()); err != nil {
			d.log.Warn().Err(err).Msg("stop workers")
		}
		// Results already published must leave before the connection closes.
		if err := d.wnc.FlushTimeout(2 * time.Second); err != nil {
			d.log.Warn().Err(err).Msg("flush nats connection")
		}
	})
}
