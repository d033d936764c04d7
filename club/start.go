package club

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/prune"
	"github.com/goclub/scoreboard/systemd"
	"github.com/goclub/scoreboard/web"
	"github.com/goclub/scoreboard/worker"
)

// parts are what start opened, handed from one step of the start to the next.
type parts struct {
	ports  daemon.Config // the ports' configuration, with the history's hooks
	notify *systemd.Notifier
	mon    *daemon.Monitor
	bus    *clubBus

	pageLn, metricsLn net.Listener // nil: not served

	updater  *history.Updater // nil: no history bucket
	pairings *pairings        // nil: no history, so no pairings bucket
	keeper   *history.Keeper  // nil: no store of its own to watch
	pruner   *prune.Keeper    // nil: no history
	damaged  string           // what recovering the store dropped, for the status

	pnc, wbnc *nats.Conn // the ports' and the page's connections (the workers' is d.wnc)
	met       *metrics.Metrics
	ping      string // the health check's request to the workers
}

// start opens the daemon's parts, each with its closer, and starts the actors:
// the listeners, the bus, the history, the workers and the page's connection, in
// that order; then the actors, in an error group whose end is Done.
func (d *Daemon) start(ctx context.Context) error {
	p := &parts{ports: d.cfg.Ports, mon: daemon.NewMonitor()}
	var err error
	if p.notify, err = systemd.FromEnv(); err != nil {
		return err
	}
	if err := d.listen(p); err != nil {
		return err
	}
	// The actors' context: Shutdown ends it, not the start's ctx.
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = stop
	d.onClose(stop)

	if p.bus, err = d.openBus(ctx); err != nil {
		return err
	}
	d.url = p.bus.url
	if err := d.startHistory(ctx, p); err != nil {
		return err
	}
	if err := d.guardLink(runCtx, p); err != nil {
		return err
	}
	if err := d.startWorkers(p); err != nil {
		return err
	}
	log := d.log
	log.Info().Str("nats_url", bus.RedactURL(d.url)).Str("version", d.cfg.Version).Int("ports", len(p.ports.Ports)).Bool("workers", d.workers != nil).Msg("scoreboard running")

	p.ports.Monitor = p.mon
	var g errgroup.Group
	// The history's bucket takes the results of the units the ports drain: it stops
	// after them, not with them.
	histCtx, stopHistory := context.WithCancel(context.WithoutCancel(ctx))
	d.onClose(stopHistory)
	d.goPorts(&g, runCtx, p, stopHistory)
	d.goHistory(&g, runCtx, histCtx, p)
	d.goSystemd(&g, runCtx, p)
	d.goPage(&g, runCtx, p)
	go func() {
		d.err = g.Wait()
		close(d.done)
	}()
	return nil
}

// listen opens the page's listener and /metrics' own, if any.
func (d *Daemon) listen(p *parts) error {
	c, log := &d.cfg.Settings, d.log
	// The page's listener first: an address the user gave that is taken fails the
	// start, with its fix, as a taken NATS port does. The default one taken (a second
	// daemon on a machine, a test's) is a warning with the same fix: the scoreboards
	// do not need the page.
	if c.HTTP.Listen != config.HTTPOff {
		ln, err := web.Listen(c.HTTP.Listen)
		switch {
		case err != nil && c.HTTP.Listen == config.DefaultHTTP && errors.Is(err, web.ErrListenInUse):
			log.Warn().Err(err).Msg("the page is not served; the daemon goes on without it")
		case err != nil:
			return fmt.Errorf("--http-listen: %w", err)
		default:
			p.pageLn = ln
			d.onClose(func() { ln.Close() })
		}
	}
	// /metrics on a listener of its own: a taken address fails the start, naming
	// the setting.
	if m := c.HTTP.Metrics; m != web.MetricsBeside && m != web.MetricsOff {
		ln, err := web.ListenMetrics(m, "http.metrics")
		if err != nil {
			return err
		}
		p.metricsLn = ln
		d.onClose(func() { ln.Close() })
	}
	return nil
}

// startHistory sets up the history before the first dump, so that the stream
// keeps it, and gives the ports its hooks: their recent units, the recorder, and
// the hold of each answer until its result is stored.
func (d *Daemon) startHistory(ctx context.Context, p *parts) error {
	c, b := &d.cfg.Settings, p.bus
	if !c.History.Enabled {
		return nil
	}
	hnc, err := b.connect("scoreboard run history")
	if err != nil {
		return err
	}
	start := history.Start{
		Config: c.HistoryConfig(b.fitted), Store: b.store, Held: b.held, SyncAsked: c.History.Sync,
		RequestTimeout: c.Daemon.RequestTimeout, Attempts: daemon.DefaultAttempts,
	}
	if p.updater, p.damaged, err = start.Run(ctx, hnc, d.log); err != nil {
		return err
	}
	if p.updater == nil {
		return nil
	}
	cfg := &p.ports
	cfg.Recent = daemon.NewRecent()
	p.updater.LookUpFirst(cfg.Recent.Unit)
	// The stream's only writer: what the ports read, and the outcomes they took.
	r := p.updater.Recorder()
	cfg.Record = r.Record
	if err := d.startPairings(ctx, p, hnc); err != nil {
		return err
	}
	stream := bus.Subjects{Prefix: c.NATS.Prefix}.Stream()
	if p.pruner, err = newPruner(hnc, stream, d.log); err != nil {
		return err
	}
	if b.store != nil && b.embedded != nil {
		p.keeper = history.NewKeeper(b.embedded, b.store, history.MinBytes, cfg.Recent.Units, d.log)
	}
	// An answer reaches its port once its result is stored: not while the
	// history is not storing (a full disk, a replicated stream without a
	// leader), and never past daemon.DefaultStoreWait. The stream's ack of the
	// recorder's copy says so, whatever else the stream holds or its readers do.
	if !d.cfg.NoHold {
		k, u := p.keeper, p.updater
		cfg.Stored = daemon.NewStored(func() bool { return (k == nil || k.OK()) && u.Storing() })
		r.NoteStored(cfg.Stored.Note)
	}
	return nil
}

// guardLink watches what a league hub asks of the club's JetStream through the
// link, before the workers take anything: on a connection of the daemon's own,
// since the workers' role may neither read JetStream's audit nor delete a consumer.
func (d *Daemon) guardLink(runCtx context.Context, p *parts) error {
	if p.bus.hub == nil {
		return nil
	}
	nc, err := p.bus.connect("scoreboard run hub link guard")
	if err != nil {
		return err
	}
	return bus.GuardLink(runCtx, nc, p.bus.hub, d.cfg.Settings.NATS.Prefix, d.log)
}

// startWorkers connects the workers, the ports and the page, registers the
// metrics, and starts the workers.
func (d *Daemon) startWorkers(p *parts) error {
	c, b := &d.cfg.Settings, p.bus
	wnc, err := b.connectWorkers("scoreboard run workers")
	if err != nil {
		return err
	}
	d.wnc = wnc
	// The ports' connection also carries the health check's ping to this process's
	// workers, so without ports the workers' own connection does.
	p.pnc = wnc
	if len(p.ports.Ports) > 0 || d.cfg.Reloads != nil {
		if p.pnc, err = b.connect("scoreboard run ports"); err != nil {
			return err
		}
	}
	p.met = d.cfg.Metrics
	if p.met == nil {
		p.met = metrics.New()
	}
	registerMetrics(p.met, p.updater, p.keeper, p.pruner, b.hubLinked, wnc, p.pnc)
	if p.pairings != nil {
		p.met.Counter("scoreboard_pairings_loads_refused_total", "Pairings loads neither applied nor answered: a reply subject that is no requester's inbox, or a message JetStream delivered (a tool's pull or push consumer aimed at the load subject).",
			func() float64 { return float64(p.pairings.refused.Load()) })
	}
	p.ports.Metrics = p.met
	// The workers: solve the dumps of every port, and requests from anyone. They stop
	// after the ports, so that the units the ports have in flight are still answered.
	// Without them the health check pings any worker of the service.
	p.ping = "$SRV.PING." + bus.ServiceName
	if c.Daemon.Workers {
		o := worker.Options{Prefix: c.NATS.Prefix, Version: d.cfg.Version, Drain: p.ports.Drain, Metrics: p.met}
		if d.workers, err = worker.Start(wnc, o, d.log); err != nil {
			return err
		}
		p.ping += "." + d.workers.ID()
		// A unit's last attempt is this process's workers' (review F13).
		p.ports.Own = d.workers.TakeOwn
		d.onClose(d.stopTheWorkers)
	}
	// The page: a tool on the bus like any other, on its own connection.
	if p.pageLn != nil {
		if p.wbnc, err = b.connect("scoreboard run web"); err != nil {
			return err
		}
	}
	return nil
}

// goPorts runs the ports: a reader, a display writer and a device writer each.
// When they all end (only stdin ends), so does the daemon; then the history and
// the workers stop.
func (d *Daemon) goPorts(g *errgroup.Group, runCtx context.Context, p *parts, stopHistory context.CancelFunc) {
	reloading := d.cfg.Reloads != nil
	g.Go(func() error {
		defer d.stop()
		defer stopHistory()
		// The ports have drained: the workers stop now, beside the history's bucket
		// (which takes their last results as it can), each with what is left of the
		// drain, so that a stop under load takes daemon.drain, not more.
		defer g.Go(func() error { d.stopTheWorkers(); return nil })
		if len(p.ports.Ports) == 0 && !reloading {
			<-runCtx.Done()
			return nil
		}
		err := daemon.RunReloading(runCtx, p.pnc, p.ports, p.teeReloads(runCtx, d.cfg.Reloads), d.log)
		// The error results the ports published must leave before the connection
		// closes.
		if ferr := p.pnc.FlushTimeout(2 * time.Second); ferr != nil {
			d.log.Warn().Err(ferr).Msg("flush nats connection")
		}
		return err
	})
	// The ports' device states, for the page and any tool.
	if len(p.ports.Ports) > 0 || reloading {
		g.Go(func() error {
			daemon.PublishPortStates(runCtx, p.pnc, d.cfg.Settings.NATS.Prefix, p.mon, portStateEvery, d.log)
			return nil
		})
	}
}

// goHistory runs the history's bucket (each port's latest board), which stops
// after the ports, the keeper of its store, and the watch of the league hub's
// link.
func (d *Daemon) goHistory(g *errgroup.Group, runCtx, histCtx context.Context, p *parts) {
	if u := p.updater; u != nil {
		// Its stop (the stream read to its end, the last boards put) takes what is
		// left of daemon.drain, so the history does not lengthen a stop.
		u.StopWithin(func() time.Duration { return d.cfg.Settings.Daemon.Drain - d.stopping.since() })
		g.Go(func() error { return u.Run(histCtx) })
	}
	if k := p.keeper; k != nil {
		g.Go(func() error { k.Run(runCtx); return nil })
	}
	// The history's oldest units dropped a chunk at a time before its max_bytes
	// and max_age (prune).
	if k := p.pruner; k != nil {
		g.Go(func() error { k.Run(runCtx, prune.DefaultEvery); return nil })
	}
	// The link to the league hub: its changes are logged.
	if b := p.bus; b.hubLinked != nil {
		g.Go(func() error { watchHubLink(runCtx, b.hubLinked, b.hub, d.log); return nil })
	}
}

// newPruner is the keeper of the history stream's max_bytes and max_age (package prune).
func newPruner(nc *nats.Conn, stream string, log zerolog.Logger) (*prune.Keeper, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("history: prune: %w", err)
	}
	return prune.New(js, func(s string) bool { return s == stream }, log), nil
}

// goSystemd tells systemd the daemon's readiness, status, health and stop.
func (d *Daemon) goSystemd(g *errgroup.Group, runCtx context.Context, p *parts) {
	log, notify, mon := d.log, p.notify, p.mon
	// Readiness: READY=1 once the bus is up (it is by now) and every port has tried
	// its device; a device still unplugged then shows in the status, not as a start-up
	// that never ends.
	g.Go(func() error {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for !mon.Started(len(p.ports.Ports)) {
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
		notify.RunStatus(runCtx, time.Second, status(mon.Status, p.keeper, p.damaged), log)
		return nil
	})
	// Watchdog: WATCHDOG=1 only while the health check passes, so that systemd
	// restarts a daemon that is alive but stuck.
	g.Go(func() error {
		return notify.Watch(runCtx, healthCheck(d.wnc, p.pnc, p.ping, mon), log)
	})
	// Stopping: STOPPING=1 as soon as the stop begins.
	g.Go(func() error {
		<-runCtx.Done()
		d.stopping.mark()
		log.Info().Msg("stopping")
		return notify.Stopping()
	})
}

// goPage serves the page and /metrics: not what the scoreboards need, so one that
// fails once served is logged and the daemon goes on without it.
func (d *Daemon) goPage(g *errgroup.Group, runCtx context.Context, p *parts) {
	c, log, met := &d.cfg.Settings, d.log, p.met
	if p.pageLn != nil {
		beside := met
		if c.HTTP.Metrics != web.MetricsBeside {
			beside = nil
		}
		g.Go(func() error {
			if err := web.ServePage(runCtx, p.pageLn, func() (*web.Server, error) {
				s, err := web.New(p.wbnc, c.NATS.Prefix, log)
				if err != nil {
					return nil, err
				}
				if p.keeper != nil {
					s.WithHistoryStatus(p.keeper.OK)
				}
				s.WithPortStatus(p.mon.NoLineEnds)
				return s, SetUpPage(s, c, met)
			}, beside, log); err != nil {
				log.Error().Err(err).Str("component", "web").Msg("the page is not served; the daemon goes on without it")
			}
			return nil
		})
	}
	if p.metricsLn != nil {
		g.Go(func() error {
			if err := web.ServeMetrics(runCtx, p.metricsLn, met, log); err != nil {
				log.Error().Err(err).Str("component", "metrics").Msg("/metrics is not served; the daemon goes on without it")
			}
			return nil
		})
	}
}
