package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/club"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/daemon"
)

// reloadOnHangup makes run's SIGHUP load its config file at path again until ctx
// ends (club.Reloads).
func reloadOnHangup(ctx context.Context, path string, loaded config.Config, load func() (config.Config, error), log zerolog.Logger) <-chan daemon.Config {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	context.AfterFunc(ctx, func() { signal.Stop(hup) })
	return club.Reloads(ctx, hup, path, loaded, load, log)
}
