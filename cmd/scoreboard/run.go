package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/sdnotify"
	"github.com/goclub/scoreboard/web"
)

// How often the daemon looks at its ports' states, and how often it repeats them all
// for subscribers that came later.
const (
	portStatePoll  = 250 * time.Millisecond
	portStateEvery = 5 * time.Second
)

func init() {
	register(command{
		name:    "run",
		summary: "the daemon: ports, workers, display writers, embedded NATS",
		run:     runRun,
	})
}

// runFlags are every flag of run, bound in one place. The settings they share with
// the config file (--config) are merged by loadConfig: a flag given on the command
// line wins over the file.
type runFlags struct {
	config string
	nats   *natsFlags
	listen string
	log    *logFlags
	port   daemon.PortConfig
	// The embedded listener's credentials (secrets also from the environment).
	listenToken, listenUser, listenPassword string
	// The daemon's timing.
	requestTimeout, drain time.Duration
	history               *historyFlags
	// httpListen is the page's listener (web.go), or "off".
	httpListen string
	// loaded is the configuration load merged, for a reload to compare with.
	loaded config
	// noWorkers leaves the solving to `scoreboard work` processes elsewhere.
	noWorkers bool
}

func addRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{}
	fs.StringVar(&f.config, "config", "", "the configuration `file` (TOML): NATS, logging, and one [[port]] table per scoreboard")
	f.nats = addNATSFlags(fs, "empty: embed a NATS server")
	fs.StringVar(&f.listen, "nats-listen", bus.DefaultListen, "the embedded NATS server's listener, `HOST:PORT` (port 0: any free one), or \"off\"")
	fs.StringVar(&f.listenToken, "nats-listen-token", "", "the `token` clients of the embedded listener must present (or $SCOREBOARD_NATS_LISTEN_TOKEN); needed beyond loopback, or a user")
	fs.StringVar(&f.listenUser, "nats-listen-user", "", "the user `name` clients of the embedded listener must present, with --nats-listen-password")
	fs.StringVar(&f.listenPassword, "nats-listen-password", "", "the `password` of --nats-listen-user (or $SCOREBOARD_NATS_LISTEN_PASSWORD)")
	f.log = addLogFlags(fs)
	fs.StringVar(&f.port.Device, "port", "", "the scoreboard's serial device `PATH`, or - for stdin and stdout; none: workers only")
	fs.StringVar(&f.port.Problem, "problem", "", "the `problem` the port's dumps are: "+strings.Join(engine.Names(), ", "))
	fs.StringVar(&f.port.Name, "port-name", defaultPortName, "the port's `name` in subjects")
	fs.IntVar(&f.port.Line.Baud, "baud", 9600, "the serial line's speed, in bits per second")
	fs.IntVar(&f.port.Line.DataBits, "data-bits", 8, "the serial line's data bits, 5 to 8")
	fs.StringVar(&f.port.Line.Parity, "parity", "none", "the serial line's parity: none, odd, even, mark or space")
	fs.StringVar(&f.port.Line.StopBits, "stop-bits", "1", "the serial line's stop bits: 1, 1.5 or 2")
	fs.BoolVar(&f.port.ErrorLine, "error-line", false, "write a one-line error to the port for a unit that gets no answer (the contest protocol has none)")
	fs.DurationVar(&f.requestTimeout, "request-timeout", defaultRequestTimeout, "how long a unit waits for a worker before it is sent again (3 attempts)")
	fs.BoolVar(&f.noWorkers, "no-workers", false, "solve nothing here: serve the ports and leave the units to `scoreboard work` processes on the bus")
	fs.DurationVar(&f.drain, "drain", defaultDrain, "on SIGINT or SIGTERM, how long units in flight may still be answered")
	f.history = addHistoryFlags(fs)
	fs.StringVar(&f.httpListen, "http", defaultHTTP, "the live page's listener, `HOST:PORT` (0.0.0.0:8080 for the whole LAN), or \"off\"")
	return f
}

// load merges the config file, the environment and the flags given into f, and
// returns the daemon's configuration.
func (f *runFlags) load(fs *flag.FlagSet) (daemon.Config, error) {
	c, err := loadConfig(f.config, fs)
	if err != nil {
		return daemon.Config{}, err
	}
	f.nats.set(c.NATS)
	f.log.set(c.Log)
	f.listen = c.NATS.Listen
	f.listenToken, f.listenUser, f.listenPassword = c.NATS.ListenToken, c.NATS.ListenUser, c.NATS.ListenPassword
	// Both were checked by loadConfig.
	f.requestTimeout, _ = time.ParseDuration(c.Daemon.RequestTimeout)
	f.drain, _ = time.ParseDuration(c.Daemon.Drain)
	f.history.set(c)
	f.httpListen = c.HTTP.Listen
	f.noWorkers = !c.Daemon.Workers
	f.loaded = c
	cfg := daemonConfig(c)
	return cfg, cfg.Validate()
}

// daemonConfig is the daemon's part of c, checked by loadConfig.
func daemonConfig(c config) daemon.Config {
	cfg := daemon.Config{Prefix: c.NATS.Prefix}
	cfg.RequestTimeout, _ = time.ParseDuration(c.Daemon.RequestTimeout)
	cfg.Drain, _ = time.ParseDuration(c.Daemon.Drain)
	for _, p := range c.Ports {
		cfg.Ports = append(cfg.Ports, daemon.PortConfig{
			Name: p.Name, Device: p.Device, Problem: p.Problem, Line: p.LineSettings, ErrorLine: p.ErrorLine,
		})
	}
	return cfg
}

func runRun(ctx context.Context, args []string, io stdio) error {
	about := "Runs the daemon. By default it embeds a NATS server, listening on --nats-listen\n" +
		"for local tools, and serves every problem on it (the 'scoreboard' micro service\n" +
		"and the dump consumer). With --nats-url it joins an existing NATS server or\n" +
		"cluster instead. With --port (or [[port]] tables in --config) it reads the\n" +
		"scoreboards' dumps from serial devices (or stdin, with -), has them solved, and\n" +
		"writes each answer back in order; at the end of stdin it exits once every unit\n" +
		"is answered. SIGINT or SIGTERM stop it cleanly: reading stops, and the units\n" +
		"read are answered within --drain, or get their error. SIGHUP reads --config\n" +
		"again: ports added start, ports removed stop, ports changed restart, the others\n" +
		"go on untouched; a bad file is logged and the running configuration kept."
	fs := newFlagSet("run", "", about, io)
	f := addRunFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(fs, "unexpected argument %q: run takes only flags (the ports: --port, or [[port]] tables in --config)", fs.Arg(0))
	}
	cfg, err := f.load(fs)
	if err != nil {
		return err
	}
	cfg.Stdin, cfg.Stdout = io.in, io.out
	tuneGC()
	log, err := f.log.logger(io.err)
	if err != nil {
		return err
	}
	reloadCtx, stopReload := context.WithCancel(ctx)
	defer stopReload()
	err = serve(ctx, f, cfg, reloadOnHangup(reloadCtx, f, fs, log), log)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// Stopped while still waiting for the bus: nothing was read, nothing is lost.
		log.Info().Err(err).Msg("stopped before the bus was up")
		return nil
	}
	return err
}

// serve runs the actors: the embedded NATS server (unless joining one), the workers,
// the ports, and what tells systemd how they are. It returns when ctx ends, or when
// every port has ended (stdin did).
func serve(ctx context.Context, f *runFlags, cfg daemon.Config, reloads <-chan daemon.Config, log zerolog.Logger) error {
	notify, err := sdnotify.FromEnv()
	if err != nil {
		return err
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
	)
	if f.nats.url == "" {
		// The history's store: locked for this process's life, so a second daemon
		// on it fails here, naming it.
		if store, err = f.history.openStore(); err != nil {
			return err
		}
		opts := bus.ServerOptions{
			Listen: f.listen, Token: f.listenToken, User: f.listenUser, Password: f.listenPassword, Prefix: f.nats.prefix,
		}
		if store != nil {
			defer store.Close()
			if f.history.fit(store, log) {
				opts.StoreDir = store.Path
				sync := f.history.config(f.nats.prefix).Sync
				opts.SyncAlways, opts.SyncInterval = sync.Always, sync.Interval
				held = store.HasStream(bus.Subjects{Prefix: f.nats.prefix}.Stream())
			}
		}
		srv, err := startStore(opts, store, held, log)
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		embedded = srv
		url = srv.ClientURL()
		if store != nil && f.history.on {
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
		url = f.nats.url
		connect = func(name string) (*nats.Conn, error) {
			return bus.ConnectWait(ctx, f.nats.options(f.nats.url, name), log)
		}
	}
	// The history: set up before the first dump, so the stream keeps it.
	var (
		updater *history.Updater
		keeper  *history.Keeper
		damaged string // what recovering the store dropped, for the status
	)
	if f.history.on {
		hnc, err := connect("scoreboard run history")
		if err != nil {
			return err
		}
		defer hnc.Close()
		if updater, damaged, err = startHistory(ctx, hnc, f.history, f.nats.prefix, f.requestTimeout, store, held, log); err != nil {
			return err
		}
		if updater != nil {
			cfg.Recent = daemon.NewRecent()
			updater.LookUpFirst(cfg.Recent.Unit)
			if store != nil && embedded != nil {
				keeper = history.NewKeeper(embedded, store, history.MinBytes, cfg.Recent.Units, log)
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
	if len(cfg.Ports) > 0 || f.config != "" {
		if pnc, err = connect("scoreboard run ports"); err != nil {
			return err
		}
		defer pnc.Close()
	}

	// The workers: solve the dumps of every port, and requests from anyone. They stop
	// after the ports, so that the units the ports have in flight are still answered.
	met := newMetrics(updater, keeper, wnc, pnc)
	cfg.Metrics = met
	// Without them the health check pings any worker of the service.
	var workers *bus.Workers
	ping := "$SRV.PING." + bus.ServiceName
	if !f.noWorkers {
		o := bus.WorkerOptions{Prefix: f.nats.prefix, Version: version, Drain: cfg.Drain, Metrics: met}
		if f.nats.url != "" {
			// On a server of its own, the workers' connection may have the worker
			// role: the dumps' instance of the service answers on a connection of
			// its own (see bus.WorkerOptions.StatsConn). The embedded server's
			// in-process connections have every right.
			if o.StatsConn, err = connect("scoreboard run stats"); err != nil {
				return err
			}
			defer o.StatsConn.Close()
		}
		if workers, err = bus.StartWorkers(wnc, o, log); err != nil {
			return err
		}
		ping += "." + workers.ID()
	}
	defer func() {
		if workers == nil {
			log.Info().Msg("stopped")
			return
		}
		if err := workers.Stop(); err != nil {
			log.Warn().Err(err).Msg("stop workers")
		}
		// Results already published must leave before the connection closes.
		if err := wnc.FlushTimeout(2 * time.Second); err != nil {
			log.Warn().Err(err).Msg("flush nats connection")
		}
		log.Info().Msg("stopped")
	}()
	log.Info().Str("nats_url", bus.RedactURL(url)).Str("version", bus.SemVer(version)).Int("ports", len(cfg.Ports)).Bool("workers", workers != nil).Msg("scoreboard running")

	mon := daemon.NewMonitor()
	cfg.Monitor = mon
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var g errgroup.Group

	// The ports: a reader, a display writer and a device writer each. When they all
	// end (only stdin ends), so does the daemon.
	g.Go(func() error {
		defer stop()
		if len(cfg.Ports) == 0 && f.config == "" {
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
		g.Go(func() error { return updater.Run(runCtx) })
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
	if len(cfg.Ports) > 0 || f.config != "" {
		g.Go(func() error {
			daemon.PublishPortStates(runCtx, pnc, f.nats.prefix, mon, portStatePoll, portStateEvery, log)
			return nil
		})
	}

	// The page: a tool on the bus like any other, on its own connection. It is not
	// what the scoreboards need, so a listener that cannot open is logged and the
	// daemon goes on without it.
	if f.httpListen != httpOff {
		wbnc, err := connect("scoreboard run web")
		if err != nil {
			return err
		}
		defer wbnc.Close()
		g.Go(func() error {
			if err := servePage(runCtx, "web", f.httpListen, func() (*web.Server, error) {
				s, err := web.New(wbnc, f.nats.prefix, log)
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
		log.Info().Msg("stopping")
		return notify.Stopping()
	})

	err = g.Wait()
	if stored != nil {
		settle(stored, conns, max(f.drain, time.Second), log)
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
func healthCheck(wnc, pnc *nats.Conn, ping string, mon *daemon.Monitor) sdnotify.Check {
	return sdnotify.All(
		func(context.Context) error {
			for _, nc := range []*nats.Conn{wnc, pnc} {
				if s := nc.Status(); s != nats.CONNECTED {
					return fmt.Errorf("bus connection %q is %v", nc.Opts.Name, s)
				}
			}
			return nil
		},
		func(ctx context.Context) error {
			if err := bus.PingSolver(ctx, pnc, ping); err != nil {
				return fmt.Errorf("workers do not answer a ping: %w", err)
			}
			return nil
		},
		func(context.Context) error { return mon.Health() },
	)
}
