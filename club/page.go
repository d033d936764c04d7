package club

import (
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

// PageGuard is a club's page's guard from its [http] settings (run's and web's):
// who may frame it and how many it streams to; met counts the streams, when not
// nil.
func PageGuard(c *config.Config, met *metrics.Metrics) web.Guard {
	h := c.HTTP
	return web.Guard{Table: "http", EmbedOrigins: h.EmbedOrigins, TrustedProxies: h.TrustedProxies,
		MaxViewers: h.MaxViewers, MaxViewersPerAddress: h.MaxViewersPerAddress, Metrics: met}
}
