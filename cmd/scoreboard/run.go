package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/club"
	"github.com/goclub/scoreboard/config"
)

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
		_, logBudget := applyBudget(c, false, log)
		ctx := cmd.Context()
		reloadCtx, stopReload := context.WithCancel(ctx)
		defer stopReload()
		reloads := reloadOnHangup(reloadCtx, path, c, func() (config.Config, error) { return load(path) }, log)
		if path == "" {
			reloads = nil // nothing to reload: SIGHUP is logged and ignored
		}
		d, err := club.Start(ctx, club.Config{
			Settings: c, Ports: cfg, Reloads: reloads, Version: versionString(),
			Metrics: buildMetrics(), NoHold: !holdForHistory, Log: log,
		})
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			// Stopped while still waiting for the bus: nothing was read, nothing is lost.
			log.Info().Err(err).Msg("stopped before the bus was up")
			return nil
		}
		if err != nil {
			return err
		}
		logBudget()
		// Until a signal, or until every port has ended (stdin did).
		select {
		case <-ctx.Done():
		case <-d.Done():
		}
		return d.Shutdown(context.Background())
	}
	return cmd
}
