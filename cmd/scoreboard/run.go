package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/systemd"
	"github.com/goclub/scoreboard/web"
	"github.com/goclub/scoreboard/worker"
)

// How often the daemon repeats its ports' states for subscribers that came later
// (a change is published at once).
const portStateEvery = 5 * time.Second

// holdForHistory has the display writers hold each answer until the history has
// stored its unit's result (daemon.Stored); BenchmarkHistoryHold turns it off to
// measure what the hold costs.
var holdForHistory = true

func init() { register(runCommand) }

func runCommand(io stdio) *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "the daemon: ports, workers, display writers, embedded NATS",
		Long: "Runs the daemon. By default it embeds a NATS server, listening on --nats-listen\n" +
			"for local tools, and serves every problem on it (the 'scoreboard' micro service\n" +
			"and the dump consumer). With --nats-url it joins an existing NATS server or\n" +
			"cluster instead. With --port-device (or [[port]] tables in --config) it reads the\n" +
			"scoreboards' dumps from serial devices (or stdin, with -), has them solved, and\n" +
			"writes each answer back in order; at the end of stdin it exits once every unit\n" +
			"is answered. SIGINT or SIGTERM stop it cleanly: reading stops, and the units\n" +
			"read are answered within --daemon-drain, or get their error. SIGHUP reads\n" +
			"--config again: ports added start, ports removed stop, ports changed restart, the\n" +
			"others go on untouched; a bad file is logged and the running configuration kept.\n\n" +
			"Every setting is a flag, an environment variable and a key of the config file:\n" +
			"the flag wins over the environment, the environment over the file.",
		Example: "  scoreboard run --port-device /dev/serial/by-id/usb-FTDI_FT232R_A12345-if00-port0 --port-problem goscore --port-name hall\n" +
			"  scoreboard run --config /etc/scoreboard/scoreboard.toml\n" +
			"  scoreboard run        # headless: embedded NATS and workers, no port",
		Args: noArgs("takes only flags (the ports: --port-device, or [[port]] tables in --config)"),
	}
	cmd.Flags().StringVar(&path, "config", "", "the configuration `file` (TOML): every setting below as a key, and one [[port]] table per scoreboard")
	load := addSettings(cmd, config.RunKeys()...)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := load(path)
		if err != nil {
			return err
		}
		cfg := c.DaemonConfig()
		if err := cfg.Validate(); err != nil {
			return err
		}
		cfg.Stdin, cfg.Stdout = io.in, io.out
		tuneGC()
		log, err := c.Logger(io.err)
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		reloadCtx, stopReload := context.WithCancel(ctx)
		defer stopReload()
		reloads := reloadOnHangup(reloadCtx, path, c, func() (config.Config, error) { return load(path) }, log)
		err = serve(ctx, c, path != "", cfg, reloads, log)
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			// Stopped while still waiting for the bus: nothing was read, nothing is lost.
			log.Info().Err(err).Msg("stopped before the bus was up")
			return nil
		}
		return err
	}
	return cmd
}

// serve runs the actors: the embedded NATS server (unless joining one), the workers,
// the ports, and what tells systemd how they are. It returns when ctx ends, or when
// every port has ended (stdin did).
func serve(ctx context.Context, c config.Config, reloading bool, cfg daemon.Config, reloads <-chan daemon.Config, log zerolog.Logger) error {
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
			defer pageLn.Close()
		}
	}

	// The bus: the embedded server, or an existing one. The workers and the ports
	// have a connection each: one connection's single reader and writer would carry
	// every dump and every answer twice, and serialise the pipeline.
	var (
		connect func(name string) (*nats.Conn, error)
		url     string // what other processes connect to, if anything
		store   *history.StateDir
		held    bool // the state dir holds a history from before
		// The embedded server with the history on, and the connections to it: what
		// they published is stored before the server stops (settle).
		stored   *bus.Server
		conns    []*nats.Conn
		embedded *bus.Server
		// hubLinked says whether the link to a league hub is up (nil: no hub).
		hubLinked func() bool
		hub       = c.HubLink()
		// fitted is the history's size fitted to its disk, if less than asked.
		fitted int64
	)
	if c.NATS.URL == "" {
		// The history's store: locked for this process's life, so a second daemon
		// on it fails here, naming it.
		if store, err = c.OpenStore(); err != nil {
			return err
		}
		opts := bus.ServerOptions{
			Listen: c.NATS.Listen, Token: c.NATS.ListenToken, User: c.NATS.ListenUser, Password: c.NATS.ListenPassword, Prefix: c.NATS.Prefix,
		}
		if store != nil {
			defer store.Close()
			var ok bool
			want, _ := history.ParseSize(c.History.MaxBytes)
			if fitted, ok = history.FitStore(store, want, log); ok {
				opts.StoreDir = store.Path
				sync := c.HistoryConfig(fitted).Sync
				opts.SyncAlways, opts.SyncInterval = sync.Always, sync.Interval
				held = store.HasStream(c.Subjects().Stream())
			} else {
				// No room for any history: the daemon runs without one.
				c.History.Enabled = false
			}
		}
		opts.Hub = hub
		srv, err := history.StartServer(opts, store, held, log)
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		embedded = srv
		url = srv.ClientURL()
		if hub != nil {
			hubLinked = srv.HubLinked
			go watchHubLink(ctx, srv, hub, log)
		}
		if store != nil && c.History.Enabled {
			stored = srv
		}
		connect = func(name string) (*nats.Conn, error) {
			nc, err := bus.ConnectWait(ctx, bus.ConnOptions{Server: srv, Name: name}, log)
			if err == nil {
				conns = append(conns, nc)
			}
			return nc, err
		}
	} else {
		url = c.NATS.URL
		connect = func(name string) (*nats.Conn, error) {
			return bus.ConnectWait(ctx, c.ConnOptions(c.NATS.URL, name), log)
		}
	}
	// The history: set up before the first dump, so the stream keeps it.
	var (
		updater *history.Updater
		keeper  *history.Keeper
		damaged string // what recovering the store dropped, for the status
	)
	if c.History.Enabled {
		hnc, err := connect("scoreboard run history")
		if err != nil {
			return err
		}
		defer hnc.Close()
		start := history.Start{
			Config: c.HistoryConfig(fitted), Store: store, Held: held, SyncAsked: c.History.Sync,
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
			if store != nil && embedded != nil {
				keeper = history.NewKeeper(embedded, store, history.MinBytes, cfg.Recent.Units, log)
			}
			// An answer reaches its port once its result is stored: not while the
			// history is not storing (a full disk, a replicated stream without a
			// leader), and never past daemon.DefaultStoreWait.
			if holdForHistory {
				k, u := keeper, updater
				cfg.Stored = daemon.NewStored(func() bool { return (k == nil || k.OK()) && u.Storing() })
				updater.NoteStored(cfg.Stored.Note)
			}
		}
	}
	wnc, err := connect("scoreboard run workers")
	if err != nil {
		return err
	}
	defer wnc.Close()
	// The ports' connection also carries the health check's ping to this process's
	// workers, so without ports the workers' own connection does.
	pnc := wnc
	if len(cfg.Ports) > 0 || reloading {
		if pnc, err = connect("scoreboard run ports"); err != nil {
			return err
		}
		defer pnc.Close()
	}

	// When the stop began: the ports drain first, the workers then get what is left.
	var stopping stopClock
	// The workers: solve the dumps of every port, and requests from anyone. They stop
	// after the ports, so that the units the ports have in flight are still answered.
	met := newMetrics(updater, keeper, wnc, pnc)
	if hubLinked != nil {
		met.Gauge("scoreboard_hub_link_up", "1 while the embedded server's leaf link to the league hub is up, 0 while it is down (the club goes on without it).",
			func() float64 { return b2f(hubLinked()) })
	}
	cfg.Metrics = met
	// Without them the health check pings any worker of the service.
	var workers *worker.Workers
	ping := "$SRV.PING." + bus.ServiceName
	if c.Daemon.Workers {
		o := worker.Options{Prefix: c.NATS.Prefix, Version: versionString(), Drain: cfg.Drain, Metrics: met}
		if workers, err = worker.Start(wnc, o, log); err != nil {
			return err
		}
		ping += "." + workers.ID()
	}
	// The ports have drained when the workers stop: they get what is left of the
	// same bound for the dumps they took from others, so that a stop takes --drain,
	// not twice. Once, before the history settles (it stores their last results), or
	// on the way out of an early return.
	var stopWorkers sync.Once
	stopTheWorkers := func() {
		stopWorkers.Do(func() {
			if workers == nil {
				return
			}
			if err := workers.StopWithin(c.Daemon.Drain - stopping.since()); err != nil {
				log.Warn().Err(err).Msg("stop workers")
			}
			// Results already published must leave before the connection closes.
			if err := wnc.FlushTimeout(2 * time.Second); err != nil {
				log.Warn().Err(err).Msg("flush nats connection")
			}
		})
	}
	defer func() {
		stopTheWorkers()
		log.Info().Msg("stopped")
	}()
	log.Info().Str("nats_url", bus.RedactURL(url)).Str("version", versionString()).Int("ports", len(cfg.Ports)).Bool("workers", workers != nil).Msg("scoreboard running")

	mon := daemon.NewMonitor()
	cfg.Monitor = mon
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var g errgroup.Group
	// The history's bucket takes the results of the units the ports drain: it stops
	// after them, not with them.
	histCtx, stopHistory := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHistory()

	// The ports: a reader, a display writer and a device writer each. When they all
	// end (only stdin ends), so does the daemon.
	g.Go(func() error {
		defer stop()
		defer stopHistory()
		// The ports have drained: the workers stop now, beside the history's bucket
		// (which takes their last results as it can), each with what is left of the
		// drain, so that a stop under load takes --daemon-drain, not more.
		defer g.Go(func() error { stopTheWorkers(); return nil })
		if len(cfg.Ports) == 0 && !reloading {
			<-runCtx.Done()
			return nil
		}
		err := daemon.RunReloading(runCtx, pnc, cfg, reloads, log)
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
		// left of --daemon-drain, so the history does not lengthen a stop.
		updater.StopWithin(func() time.Duration { return c.Daemon.Drain - stopping.since() })
		g.Go(func() error { return updater.Run(histCtx) })
	}
	if keeper != nil {
		g.Go(func() error { keeper.Run(runCtx); return nil })
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
		notify.RunStatus(runCtx, time.Second, historyStatus(mon.Status, keeper, damaged), log)
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

	// The page: a tool on the bus like any other, on its own connection. It is not
	// what the scoreboards need, so a page that fails once served is logged and the
	// daemon goes on without it.
	if pageLn != nil {
		wbnc, err := connect("scoreboard run web")
		if err != nil {
			return err
		}
		defer wbnc.Close()
		g.Go(func() error {
			if err := servePage(runCtx, pageLn, func() (*web.Server, error) {
				s, err := web.New(wbnc, c.NATS.Prefix, log)
				if err == nil && keeper != nil {
					s.WithHistoryStatus(keeper.OK)
				}
				return s, err
			}, met, log); err != nil {
				log.Error().Err(err).Str("component", "web").Msg("the page is not served; the daemon goes on without it")
			}
			return nil
		})
	}

	// Stopping: STOPPING=1 as soon as the shutdown begins.
	g.Go(func() error {
		<-runCtx.Done()
		stopping.mark()
		log.Info().Msg("stopping")
		return notify.Stopping()
	})

	err = g.Wait()
	stopTheWorkers()
	if stored != nil {
		// What is left of --daemon-drain, and a second: a stop takes --daemon-drain,
		// and what the history has not stored by then is logged as lost rather than
		// waited for.
		settle(stored, conns, max(c.Daemon.Drain-stopping.since(), 0)+time.Second, log)
	}
	return err
}

// settle waits, before the embedded server stops, until its history has stored every
// unit and result the daemon's connections published: the stream stores them behind
// the ports at a flood's rate, and a server that stops drops what it has not stored
// yet. Bounded as the units' own drain is (bound): a store that does not catch up
// within it is logged, not waited for, so the history never holds a stop up for
// long (clients of the listener may still be publishing).
func settle(srv *bus.Server, conns []*nats.Conn, bound time.Duration, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	for _, nc := range conns {
		// A round trip: the server has taken in everything nc sent before it.
		_ = nc.FlushWithContext(ctx)
	}
	if !srv.WaitStored(ctx) {
		log.Warn().Str("component", "history").Dur("bound_ms", bound).Msg("stopping: the history has not stored the last units and results within the drain bound; they are lost")
	}
}

// healthCheck is the watchdog's test of a real round trip: both connections are
// connected, a worker answers a ping (subject ping: this process's own, or any
// instance of the service with --no-workers) sent over the ports' connection, and
// every port's display writer still turns over.
func healthCheck(wnc, pnc *nats.Conn, ping string, mon *daemon.Monitor) systemd.Check {
	return systemd.All(
		func(context.Context) error {
			for _, nc := range []*nats.Conn{wnc, pnc} {
				if s := nc.Status(); s != nats.CONNECTED {
					return fmt.Errorf("bus connection %q is %v", nc.Opts.Name, s)
				}
			}
			return nil
		},
		func(ctx context.Context) error {
			if _, err := pnc.RequestWithContext(ctx, ping, nil); err != nil {
				return fmt.Errorf("workers do not answer a ping: %w", err)
			}
			return nil
		},
		func(context.Context) error { return mon.Health() },
	)
}

// stopClock is when a stop began, marked once.
type stopClock struct {
	once sync.Once
	at   atomic.Int64 // unix nanoseconds; 0 before the stop
}

func (c *stopClock) mark() { c.once.Do(func() { c.at.Store(time.Now().UnixNano()) }) }

// since is the time since the stop began, 0 when it has not.
func (c *stopClock) since() time.Duration {
	if at := c.at.Load(); at != 0 {
		return time.Since(time.Unix(0, at))
	}
	return 0
}
