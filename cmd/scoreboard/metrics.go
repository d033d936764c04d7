package main

import (
	"context"
	"fmt"
	"net"
	"runtime"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

// buildMetrics is a registry with the build's info: run and work add what
// their actors count.
func buildMetrics() *metrics.Metrics {
	met := metrics.New()
	met.Info("scoreboard_build_info", "The build: its version (as in the logs and $SRV.INFO), commit and Go version; always 1.",
		map[string]string{"version": versionString(), "commit": commitString(), "goversion": runtime.Version()})
	return met
}

// serveMetrics serves met alone on addr until ctx ends (work --http).
func serveMetrics(ctx context.Context, addr string, met *metrics.Metrics, log zerolog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	return web.ServeMetrics(ctx, ln, met, log)
}
