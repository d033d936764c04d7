package club

import (
	"context"
	"os"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/daemon"
)

// Reloads loads the config file at path again at each signal on hup (load: with
// the same flags and environment over it, and the same declarations and checks as at
// start) until ctx ends: each good configuration goes out on the channel for the
// ports (Config.Reloads, daemon.RunReloading); a bad one is logged with every error
// and nothing changes. The settings the ports do not own need a restart, and the log
// names each that changed since loaded by its key (config.Changed). Without a config
// file, a signal is logged and ignored.
func Reloads(ctx context.Context, hup <-chan os.Signal, path string, loaded config.Config, load func() (config.Config, error), log zerolog.Logger) <-chan daemon.Config {
	out := make(chan daemon.Config)
	go func() {
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
