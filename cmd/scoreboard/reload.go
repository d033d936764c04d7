package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/daemon"
)

// reloadOnHangup makes run's SIGHUP load its config file at path again (load: with
// the same flags and environment over it, and the same declarations and checks as at
// start) until ctx ends: each good configuration goes out on the channel for the
// ports (daemon.RunReloading); a bad one is logged with every error and nothing
// changes. The settings the ports do not own need a restart, and the log names each
// that changed since loaded by its key (config.Changed). Without a config file, SIGHUP is logged and ignored.
func reloadOnHangup(ctx context.Context, path string, loaded config.Config, load func() (config.Config, error), log zerolog.Logger) <-chan daemon.Config {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	out := make(chan daemon.Config)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			if path == "" {
				log.Warn().Msg("SIGHUP: no --config file to reload; the running configuration is kept")
				continue
			}
			log.Info().Str("config", path).Msg("SIGHUP: reloading the configuration")
			c, err := load()
			if err != nil {
				errs := []error{err}
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					errs = j.Unwrap()
				}
				for _, e := range errs {
					log.Error().Err(e).Msg("reload: bad configuration")
				}
				log.Error().Int("errors", len(errs)).Msg("reload: the configuration has errors; the running configuration is kept")
				continue
			}
			for _, s := range config.Changed(loaded, c) {
				log.Warn().Str("setting", s).Msg("reload: changed, but applied only at the next restart")
			}
			select {
			case out <- c.DaemonConfig():
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
