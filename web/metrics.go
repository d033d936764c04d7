package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/metrics"
)

// The words of the metrics settings (http.metrics, league.metrics), beside a
// HOST:PORT of their own listener.
const (
	// MetricsBeside serves /metrics on the page's listener.
	MetricsBeside = "page"
	// MetricsOff serves no /metrics.
	MetricsOff = "off"
)

// CheckMetrics checks a metrics setting's value.
func CheckMetrics(v string) error {
	if v == MetricsBeside || v == MetricsOff {
		return nil
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return fmt.Errorf("%q: want \"page\" (beside the page, on its listener), \"off\", or HOST:PORT of a listener of its own such as 127.0.0.1:9090", v)
	}
	return nil
}

// ListenMetrics opens the metrics' own listener on addr, which the setting named
// setting gave; a taken address is an error that names the setting.
func ListenMetrics(addr, setting string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s: the metrics' address %s is taken (%w: another scoreboard, or a Prometheus exporter, there?); "+
			"give %s another HOST:PORT such as 127.0.0.1:9091, \"page\" to serve /metrics beside the page, or \"off\"",
			setting, addr, ErrListenInUse, setting)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the metrics' listener %s: %w", setting, addr, err)
	}
	return ln, nil
}

// ServeMetrics serves met's /metrics alone on ln until ctx ends.
func ServeMetrics(ctx context.Context, ln net.Listener, met *metrics.Metrics, log zerolog.Logger) error {
	log.Info().Str("component", "metrics").Str("listen", ln.Addr().String()).
		Str("url", "http://"+ln.Addr().String()+metrics.Path).Msg("serving metrics")
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, met.Handler())
	return Serve(ctx, ln, mux)
}
