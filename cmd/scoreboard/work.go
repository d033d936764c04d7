package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/systemd"
	"github.com/goclub/scoreboard/worker"
)

func init() { register(workCommand) }

func workCommand(io stdio) *cobra.Command {
	var (
		path, problems, httpListen string
		concurrency                int
	)
	cmd := &cobra.Command{
		Use:   "work",
		Short: "workers only, joining an existing NATS (--nats-url): scale-out on other machines",
		Long: "Joins a NATS server (a daemon's embedded one, or a cluster) and serves the\n" +
			"'scoreboard' micro service and the dumps there, beside every other worker: each\n" +
			"request or dump goes to one worker of the queue group. It waits for a server\n" +
			"not up yet, and reconnects forever when it goes away. SIGINT or SIGTERM stop it\n" +
			"cleanly: the dumps taken are solved within --daemon-drain; a port's dump left\n" +
			"then is handed back for its next attempt, another's gets an error result.\n" +
			"SIGHUP is logged and ignored.\n\n" +
			"problems: " + strings.Join(engine.Names(), ", "),
		Example: "  SCOREBOARD_NATS_TOKEN=... scoreboard work --nats-url nats://club-server:4222",
		Args:    noArgs("takes only flags (the problems: --problems)"),
	}
	cmd.Flags().StringVar(&path, "config", "", "the configuration `file` (TOML) of run: its [nats], [log] and [daemon] drain apply")
	cmd.Flags().StringVar(&problems, "problems", "", "comma-separated `problems` to serve; empty: all")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "dumps solved at once; 0: one per CPU")
	cmd.Flags().StringVar(&httpListen, "http", config.HTTPOff, "serve /metrics on `HOST:PORT` (port 0: any free one), or \"off\"")
	load := addSettings(cmd, slices.Concat(config.NATSClientKeys, config.LogKeys, []string{"daemon.drain"})...)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if concurrency < 0 {
			return usagef("--concurrency %d: want 0 (one per CPU) or more", concurrency)
		}
		var names []string
		if problems != "" {
			for name := range strings.SplitSeq(problems, ",") {
				name = strings.TrimSpace(name)
				if _, ok := engine.Lookup(name); !ok {
					return usagef("--problems: %v", config.ProblemError(name))
				}
				names = append(names, name)
			}
		}
		c, err := load(path)
		if err != nil {
			return err
		}
		return work(cmd.Context(), c, names, concurrency, httpListen, io)
	}
	return cmd
}

func work(ctx context.Context, c config.Config, names []string, concurrency int, httpListen string, io stdio) error {
	tuneGC()
	log, err := c.Logger(io.err)
	if err != nil {
		return err
	}
	defer keepOnHangup(log)()
	notify, err := systemd.FromEnv()
	if err != nil {
		return err
	}
	nc, err := c.ConnectWait(ctx, "scoreboard work", log)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		log.Info().Err(err).Msg("stopped before the bus was up")
		return nil
	}
	if err != nil {
		return err
	}
	defer nc.Close()
	var met *metrics.Metrics
	if httpListen != config.HTTPOff {
		met = buildMetrics()
		met.BusConnected(nc.IsConnected)
	}
	workers, err := worker.Start(nc, worker.Options{
		Prefix: c.NATS.Prefix, Version: versionString(), Problems: names, Concurrency: concurrency, Drain: c.Daemon.Drain, Metrics: met,
	}, log)
	if err != nil {
		return err
	}
	if err := bus.CheckWorkerRights(nc, 10*time.Second); err != nil {
		_ = workers.Stop()
		return err
	}
	// The metrics stop with the workers: a scrape during the drain still sees them.
	var served errgroup.Group
	metricsCtx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	defer func() { stopMetrics(); _ = served.Wait() }()
	if met != nil {
		served.Go(func() error {
			if err := serveMetrics(metricsCtx, httpListen, met, log); err != nil {
				log.Error().Err(err).Str("component", "metrics").Msg("metrics not served; the workers go on without them")
			}
			return nil
		})
	}
	log.Info().Str("worker", workers.ID()).Str("version", versionString()).Msg("scoreboard worker running")
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
