package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

// newMetrics is the registry of run and work: the actors count into it, and the
// gauges below are read from their owners at each scrape. updater is nil without the
// history; keeper is nil without the embedded server's history.
func newMetrics(updater *history.Updater, keeper *history.Keeper, conns ...*nats.Conn) *metrics.Metrics {
	met := metrics.New()
	met.Info("scoreboard_build_info", "The build: its version (as in the logs and $SRV.INFO), commit and Go version; always 1.",
		map[string]string{"version": versionString(), "commit": commitString(), "goversion": runtime.Version()})
	met.Gauge("scoreboard_nats_connected", "1 while every bus connection of this process is connected, 0 while one is reconnecting.",
		func() float64 {
			for _, nc := range conns {
				if !nc.IsConnected() {
					return 0
				}
			}
			return 1
		})
	if updater != nil {
		met.Gauge("scoreboard_history_pending", "Results the history's board bucket has not taken yet: queued for its updater, or put and not acked.",
			func() float64 { return float64(updater.Pending()) })
		met.Gauge("scoreboard_history_ok", "1 while the history stores the units, 0 while it cannot (the embedded server turned JetStream off: a full disk); the ports answer either way.",
			func() float64 {
				if keeper != nil && !keeper.OK() {
					return 0
				}
				return 1
			})
		met.Counter("scoreboard_history_units_not_stored_total", "Units the ports read while the history was not storing (a full disk); they were answered.",
			func() float64 {
				if keeper == nil {
					return 0
				}
				return float64(keeper.NotStored())
			})
		met.Counter("scoreboard_history_values_without_unit_total", "Bucket values put without their unit: the unit of the port's latest result was not found in the stream.",
			func() float64 { return float64(updater.LostUnits()) })
	}
	return met
}

// serveMetrics serves met alone on addr until ctx ends (work --http).
func serveMetrics(ctx context.Context, addr string, met *metrics.Metrics, log zerolog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	log.Info().Str("component", "metrics").Str("listen", ln.Addr().String()).
		Str("url", "http://"+ln.Addr().String()+metrics.Path).Msg("serving metrics")
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, met.Handler())
	return web.Serve(ctx, ln, mux)
}
