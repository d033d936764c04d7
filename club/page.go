package club

import (
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

// SetUpPage gives a club's page what its [http] settings say (run's and web's):
// its delay, who may frame it and how many it streams to; met counts the
// streams, when not nil.
func SetUpPage(s *web.Server, c *config.Config, met *metrics.Metrics) error {
	h := c.HTTP
	if h.Delay > 0 {
		s.WithDelays(web.NewDelays(h.Delay, nil))
	}
	s.WithPairings()
	return s.WithGuard(web.Guard{Table: "http", EmbedOrigins: h.EmbedOrigins, TrustedProxies: h.TrustedProxies,
		MaxViewers: h.MaxViewers, MaxViewersPerAddress: h.MaxViewersPerAddress, Metrics: met})
}
