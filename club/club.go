// Package club is the club daemon as a type: what `scoreboard run` is, for a test or
// another program to start without the command line. Start brings up, in order, the
// page's listener, the bus (the embedded nats-server, or a connection to an existing
// one), the history, the workers and the ports; Shutdown stops them in the order
// that loses nothing: the ports drain, the workers answer what is left, the history
// stores the last units, and only then does the embedded server stop.
package club

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/systemd"
	"github.com/goclub/scoreboard/web"
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

// start opens the daemon's parts, each with its closer, and starts the actors.
func (d *Daemon) start(ctx context.Context) error {
	c, cfg, log := &d.cfg.Settings, d.cfg.Ports, d.log
	reloading := d.cfg.Reloads != nil
	notify, err := systemd.FromEnv()
	if err != nil {
		return err
	}
	// The page's listener first: an address the user gave that is taken fails the
	// start, with its fix, as a taken NATS port does. The default one taken (a second
	// daemon on a machine, a test's) is a warning with the same fix: the scoreboards
	// do not need the page.
	var pageLn net.Listener
	if c.HTTP.Listen != config.HTTPOff {
		pageLn, err = web.Listen(c.HTTP.Listen)
		switch {
		case err != nil && c.HTTP.Listen == config.DefaultHTTP && errors.Is(err, web.ErrListenInUse):
			log.Warn().Err(err).Msg("the page is not served; the daemon goes on without it")
		case err != nil:
			return fmt.Errorf("--http-listen: %w", err)
		default:
			d.onClose(func() { pageLn.Close() })
		}
	}

	// /metrics on a listener of its own: a taken address fails the start, naming
	// the setting.
	var metricsLn net.Listener
	if m := c.HTTP.Metrics; m != web.MetricsBeside && m != web.MetricsOff {
		if metricsLn, err = web.ListenMetrics(m, "http.metrics"); err != nil {
			return err
		}
		d.onClose(func() { metricsLn.Close() })
	}

	// The actors' context: Shutdown ends it, not the start's ctx.
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = stop
	d.onClose(stop)

	b, err := d.openBus(ctx)
	if err != nil {
		return err
	}
	d.url = b.url
	// The history: set up before the first dump, so the stream keeps it.
	var (
		updater *history.Updater
		keeper  *history.Keeper
		damaged string // what recovering the store dropped, for the status
	)
	if c.History.Enabled {
		hnc, err := b.connect("scoreboard run history")
		if err != nil {
			return err
		}
		start := history.Start{
			Config: c.HistoryConfig(b.fitted), Store: b.store, Held: b.held, SyncAsked: c.History.Sync,
			RequestTimeout: c.Daemon.RequestTimeout, Attempts: daemon.DefaultAttempts,
		}
		if updater, damaged, err = start.Run(ctx, hnc, log); err != nil {
			return err
		}
		if updater != nil {
			cfg.Recent = daemon.NewRecent()
			updater.LookUpFirst(cfg.Recent.Unit)
			if r := updater.Recorder(); r != nil {
				cfg.Record = r.Record
			}
			if b.store != nil && b.embedded != nil {
				keeper = history.NewKeeper(b.embedded, b.store, history.MinBytes, cfg.Recent.Units, log)
			}
			// An answer reaches its port once its result is stored: not while the
			// history is not storing (a full disk, a replicated stream without a
			// leader), and never past daemon.DefaultStoreWait.
			if !d.cfg.NoHold {
				k, u := keeper, updater
				cfg.Stored = daemon.NewStored(func() bool { return (k == nil || k.OK()) && u.Storing() })
				updater.NoteStored(cfg.Stored.Note)
			}
		}
	}
	wnc, err := b.connect("scoreboard run workers")
	if err != nil {
		return err
	}
	d.wnc = wnc
	if err := bus.GuardLink(runCtx, wnc, b.hub, c.NATS.Prefix, log); err != nil {
		return err
	}
	// The ports' connection also carries the health check's ping to this process's
	// workers, so without ports the workers' own connection does.
	pnc := wnc
	if len(cfg.Ports) > 0 || reloading {
		if pnc, err = b.connect("scoreboard run ports"); err != nil {
			return err
		}
	}

	met := d.cfg.Metrics
	if met == nil {
		met = metrics.New()
	}
	registerMetrics(met, updater, keeper, b.hubLinked, wnc, pnc)
	cfg.Metrics = met
	// The workers: solve the dumps of every port, and requests from anyone. They stop
	// after the ports, so that the units the ports have in flight are still answered.
	// Without them the health check pings any worker of the service.
	ping := "$SRV.PING." + bus.ServiceName
	if c.Daemon.Workers {
		o := worker.Options{Prefix: c.NATS.Prefix, Version: d.cfg.Version, Drain: cfg.Drain, Metrics: met}
		if d.workers, err = worker.Start(wnc, o, log); err != nil {
			return err
		}
		ping += "." + d.workers.ID()
		d.onClose(d.stopTheWorkers)
	}
	// The page: a tool on the bus like any other, on its own connection.
	var wbnc *nats.Conn
	if pageLn != nil {
		if wbnc, err = b.connect("scoreboard run web"); err != nil {
			return err
		}
	}
	log.Info().Str("nats_url", bus.RedactURL(d.url)).Str("version", d.cfg.Version).Int("ports", len(cfg.Ports)).Bool("workers", d.workers != nil).Msg("scoreboard running")

	mon := daemon.NewMonitor()
	cfg.Monitor = mon
	var g errgroup.Group
	// The history's bucket takes the results of the units the ports drain: it stops
	// after them, not with them.
	histCtx, stopHistory := context.WithCancel(context.WithoutCancel(ctx))
	d.onClose(stopHistory)

	// The ports: a reader, a display writer and a device writer each. When they all
	// end (only stdin ends), so does the daemon.
	g.Go(func() error {
		defer stop()
		defer stopHistory()
		// The ports have drained: the workers stop now, beside the history's bucket
		// (which takes their last results as it can), each with what is left of the
		// drain, so that a stop under load takes daemon.drain, not more.
		defer g.Go(func() error { d.stopTheWorkers(); return nil })
		if len(cfg.Ports) == 0 && !reloading {
			<-runCtx.Done()
			return nil
		}
		err := daemon.RunReloading(runCtx, pnc, cfg, d.cfg.Reloads, log)
		// The error results the ports published must leave before the connection
		// closes.
		if ferr := pnc.FlushTimeout(2 * time.Second); ferr != nil {
			log.Warn().Err(ferr).Msg("flush nats connection")
		}
		return err
	})

	// The history's bucket: each port's latest board. It stops after the ports.
	if updater != nil {
		// Its stop (the stream read to its end, the last boards put) takes what is
		// left of daemon.drain, so the history does not lengthen a stop.
		updater.StopWithin(func() time.Duration { return c.Daemon.Drain - d.stopping.since() })
		g.Go(func() error { return updater.Run(histCtx) })
	}
	if keeper != nil {
		g.Go(func() error { keeper.Run(runCtx); return nil })
	}
	// The link to the league hub: its changes are logged.
	if b.hubLinked != nil {
		g.Go(func() error { watchHubLink(runCtx, b.hubLinked, b.hub, log); return nil })
	}

	// Readiness: READY=1 once the bus is up (it is by now) and every port has tried
	// its device; a device still unplugged then shows in the status, not as a start-up
	// that never ends.
	g.Go(func() error {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for !mon.Started(len(cfg.Ports)) {
			select {
			case <-runCtx.Done():
				return nil
			case <-tick.C:
			}
		}
		log.Info().Str("status", mon.Status()).Msg("ready")
		return notify.Ready()
	})

	// Status: STATUS= with the counts, whenever they change.
	g.Go(func() error {
		notify.RunStatus(runCtx, time.Second, status(mon.Status, keeper, damaged), log)
		return nil
	})

	// Watchdog: WATCHDOG=1 only while the health check passes, so that systemd
	// restarts a daemon that is alive but stuck.
	g.Go(func() error {
		return notify.Watch(runCtx, healthCheck(wnc, pnc, ping, mon), log)
	})

	// The ports' device states, for the page and any tool.
	if len(cfg.Ports) > 0 || reloading {
		g.Go(func() error {
			daemon.PublishPortStates(runCtx, pnc, c.NATS.Prefix, mon, portStateEvery, log)
			return nil
		})
	}

	// The page: not what the scoreboards need, so a page that fails once served is
	// logged and the daemon goes on without it.
	if pageLn != nil {
		beside := met
		if c.HTTP.Metrics != web.MetricsBeside {
			beside = nil
		}
		g.Go(func() error {
			if err := web.ServePage(runCtx, pageLn, func() (*web.Server, error) {
				s, err := web.New(wbnc, c.NATS.Prefix, log)
				if err != nil {
					return nil, err
				}
				if keeper != nil {
					s.WithHistoryStatus(keeper.OK)
				}
				return s, SetUpPage(s, c, met)
			}, beside, log); err != nil {
				log.Error().Err(err).Str("component", "web").Msg("the page is not served; the daemon goes on without it")
			}
			return nil
		})
	}

	if metricsLn != nil {
		g.Go(func() error {
			if err := web.ServeMetrics(runCtx, metricsLn, met, log); err != nil {
				log.Error().Err(err).Str("component", "metrics").Msg("/metrics is not served; the daemon goes on without it")
			}
			return nil
		})
	}

	// Stopping: STOPPING=1 as soon as the stop begins.
	g.Go(func() error {
		<-runCtx.Done()
		d.stopping.mark()
		log.Info().Msg("stopping")
		return notify.Stopping()
	})

	go func() {
		d.err = g.Wait()
		close(d.done)
	}()
	return nil
}

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
