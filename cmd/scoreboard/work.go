package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/sdnotify"
)

func init() {
	register(command{
		name:    "work",
		summary: "workers only, joining an existing NATS (--nats-url): scale-out on other machines",
		run:     runWork,
	})
}

func runWork(ctx context.Context, args []string, io stdio) error {
	about := "Joins a NATS server (a daemon's embedded one, or a cluster) and serves the\n" +
		"'scoreboard' micro service and the dumps there, beside every other worker: each\n" +
		"request or dump goes to one worker of the queue group. It waits for a server\n" +
		"not up yet, and reconnects forever when it goes away. SIGINT or SIGTERM stop it cleanly: the dumps taken are\n" +
		"solved within --drain, or get an error result. SIGHUP is logged and ignored.\n\n" +
		"problems: " + strings.Join(engine.Names(), ", ")
	fs := newFlagSet("work", "", about, io)
	configFile := fs.String("config", "", "the configuration `file` (TOML) of run: its [nats] and [log] tables apply")
	nf := addNATSFlags(fs, "empty: "+defaultNATSURL+", a local daemon's embedded server")
	lf := addLogFlags(fs)
	problems := fs.String("problems", "", "comma-separated `problems` to serve; empty: all")
	concurrency := fs.Int("concurrency", 0, "dumps solved at once; 0: one per CPU")
	httpListen := fs.String("http", httpOff, "serve /metrics on `HOST:PORT` (port 0: any free one), or \"off\"")
	drain := fs.Duration("drain", defaultDrain, "on SIGINT or SIGTERM, how long the dumps already taken may still be solved; the rest get an error result")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 0:
		return usageErr(fs, "unexpected argument %q: work takes only flags (the problems: --problems)", fs.Arg(0))
	case *concurrency < 0:
		return usageErr(fs, "--concurrency %d: want 0 (one per CPU) or more", *concurrency)
	case *drain <= 0:
		return usageErr(fs, "--drain %v: want a positive duration such as 5s", *drain)
	}
	var names []string
	if *problems != "" {
		for name := range strings.SplitSeq(*problems, ",") {
			name = strings.TrimSpace(name)
			if _, err := lookupProblem(name); err != nil {
				return fmt.Errorf("--problems: %w", err)
			}
			names = append(names, name)
		}
	}
	c, err := loadConfig(*configFile, fs)
	if err != nil {
		return err
	}
	nf.set(c.NATS)
	lf.set(c.Log)
	tuneGC()
	log, err := lf.logger(io.err)
	if err != nil {
		return err
	}
	defer keepOnHangup(log)()
	notify, err := sdnotify.FromEnv()
	if err != nil {
		return err
	}
	nc, err := nf.connectWait(ctx, "scoreboard work", log)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		log.Info().Err(err).Msg("stopped before the bus was up")
		return nil
	}
	if err != nil {
		return err
	}
	defer nc.Close()
	var met *metrics.Metrics
	if *httpListen != httpOff {
		met = newMetrics(nil, nil, nc)
	}
	// The dumps' instance of the service answers on a connection of its own (see
	// bus.WorkerOptions.StatsConn).
	snc, err := nf.connectWait(ctx, "scoreboard work stats", log)
	if err != nil {
		return err
	}
	defer snc.Close()
	workers, err := bus.StartWorkers(nc, bus.WorkerOptions{
		Prefix: nf.prefix, Version: version, Problems: names, Concurrency: *concurrency, Drain: *drain, Metrics: met,
		StatsConn: snc,
	}, log)
	if err != nil {
		return err
	}
	// The metrics stop with the workers: a scrape during the drain still sees them.
	var served errgroup.Group
	metricsCtx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	defer func() { stopMetrics(); _ = served.Wait() }()
	if met != nil {
		served.Go(func() error {
			if err := serveMetrics(metricsCtx, *httpListen, met, log); err != nil {
				log.Error().Err(err).Str("component", "metrics").Msg("metrics not served; the workers go on without them")
			}
			return nil
		})
	}
	log.Info().Str("worker", workers.ID()).Str("version", bus.SemVer(version)).Msg("scoreboard worker running")
	if err := notify.Ready(); err != nil {
		log.Warn().Err(err).Msg("tell systemd we are ready")
	}
	<-ctx.Done()
	log.Info().Msg("stopping")
	if err := workers.Stop(); err != nil {
		log.Warn().Err(err).Msg("stop workers")
	}
	// Results already published must leave before the connection closes.
	if err := nc.FlushTimeout(2 * time.Second); err != nil {
		log.Warn().Err(err).Msg("flush nats connection")
	}
	log.Info().Msg("stopped")
	return nil
}
