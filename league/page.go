package league

import (
	"context"
	"fmt"
	"net"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

// Page is the league page's settings: its listener, its TLS, its /metrics and
// its guard.
type Page struct {
	// Listen is league.http: HOST:PORT, or "off".
	Listen string
	// TLSCert and TLSKey, PEM files, serve the page in HTTPS only.
	TLSCert, TLSKey string
	// Metrics is league.metrics: "page", "off", or HOST:PORT of its own listener.
	Metrics string
	Guard   web.Guard
}

// PageOf is the league page's settings from the hub's [league].
func PageOf(c *config.Config) Page {
	l := c.League
	return Page{Listen: l.HTTP, TLSCert: l.HTTPTLSCert, TLSKey: l.HTTPTLSKey, Metrics: l.Metrics,
		Guard: web.Guard{Table: "league", EmbedOrigins: l.EmbedOrigins, TrustedProxies: l.TrustedProxies,
			MaxViewers: l.MaxViewers, MaxViewersPerAddress: l.MaxViewersPerAddress}}
}

// PageServer is the league page and the hub's /metrics, listening.
type PageServer struct {
	p             Page
	page, metrics net.Listener // nil when off
	met           *metrics.Metrics
	log           zerolog.Logger
}

// OpenPage opens the page's listener and the metrics' own, as p says: a taken
// address is an error naming its setting. Close closes them; Serve serves them.
func (h *Hub) OpenPage(p Page, log zerolog.Logger) (*PageServer, error) {
	ps := &PageServer{p: p, log: log}
	if p.Metrics != web.MetricsOff {
		ps.met = h.newMetrics()
	}
	if p.Listen != config.HTTPOff {
		ln, err := web.Listen(p.Listen)
		if err != nil {
			return nil, fmt.Errorf("league.http: %w", err)
		}
		ps.page = ln
		if p.TLSCert != "" {
			if ps.page, err = web.ListenTLS(ln, p.TLSCert, p.TLSKey); err != nil {
				ln.Close()
				return nil, fmt.Errorf("league.http_tls_cert: %w", err)
			}
		}
	}
	if p.Metrics != web.MetricsBeside && p.Metrics != web.MetricsOff {
		ln, err := web.ListenMetrics(p.Metrics, "league.metrics")
		if err != nil {
			ps.Close()
			return nil, err
		}
		ps.metrics = ln
	}
	return ps, nil
}

// PageAddr is the page's listener's address, "" when it is off.
func (ps *PageServer) PageAddr() string { return addr(ps.page) }

// MetricsAddr is the metrics' own listener's address, "" when they have none.
func (ps *PageServer) MetricsAddr() string { return addr(ps.metrics) }

func addr(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// Close closes the listeners.
func (ps *PageServer) Close() {
	for _, ln := range []net.Listener{ps.page, ps.metrics} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// Serve serves the page (newServer makes it) and the metrics until ctx ends. A
// page or metrics that fail once served are logged: the hub goes on without.
func (ps *PageServer) Serve(ctx context.Context, newServer func() (*web.Server, error)) error {
	var g errgroup.Group
	if ps.page != nil {
		beside := ps.met
		if ps.p.Metrics != web.MetricsBeside {
			beside = nil
		}
		guard := ps.p.Guard
		guard.Metrics = ps.met
		g.Go(func() error {
			if err := web.ServePage(ctx, ps.page, func() (*web.Server, error) {
				s, err := newServer()
				if err != nil {
					return nil, err
				}
				return s, s.WithGuard(guard)
			}, beside, ps.log); err != nil {
				ps.log.Error().Err(err).Str("component", "web").Msg("the league page is not served; the hub goes on without it")
			}
			return nil
		})
	}
	if ps.metrics != nil {
		g.Go(func() error {
			if err := web.ServeMetrics(ctx, ps.metrics, ps.met, ps.log); err != nil {
				ps.log.Error().Err(err).Str("component", "metrics").Msg("/metrics is not served; the hub goes on without it")
			}
			return nil
		})
	}
	return g.Wait()
}

// Metrics is the hub's registry, for the hub's other actors' metrics; nil with
// /metrics off.
func (ps *PageServer) Metrics() *metrics.Metrics { return ps.met }

// newMetrics is the hub's registry: its clubs' links and what it refused.
func (h *Hub) newMetrics() *metrics.Metrics {
	met := metrics.New()
	met.Gauge("scoreboard_league_clubs_linked", "How many of the league's clubs have their link to the hub up.",
		func() float64 { return float64(h.LinkedClubs()) })
	met.Counters("scoreboard_league_junk_total", "What a club's stream held that is no valid result of a known problem, not shown on the page, by club and reason.",
		[]string{"club", "reason"}, func() []metrics.Labeled {
			var out []metrics.Labeled
			for k, n := range h.Junk() {
				out = append(out, metrics.Labeled{Values: []string{k.Club, k.Reason}, Value: float64(n)})
			}
			return out
		})
	met.Gauge("scoreboard_league_intakes_waiting", "Clubs catching up that wait for their turn at their intake's whole room, the memory budget having no room for all at once (docs/league.md, \"Clubs catching up at once\").",
		func() float64 { return float64(h.gate.waitingNow()) })
	met.Counter("scoreboard_league_pairings_loads_refused_total", "Pairings loads the hub neither applied nor answered: a reply subject that is no requester's inbox, or a message JetStream delivered.",
		func() float64 { return float64(h.pairings.refused.Load()) })
	return met
}
