package main

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
)

// watchHubLink logs each change of the link to the hub, until ctx ends: the link
// is not what the club's scoreboards need, so a drop is a warning, not an error.
func watchHubLink(ctx context.Context, srv *bus.Server, h *bus.HubLink, log zerolog.Logger) {
	log = log.With().Str("component", "league").Str("club", h.Club).Str("hub", bus.RedactURL(h.URL)).Logger()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	up := false
	log.Info().Msg("joining the league hub; the club's ports, workers and history go on whether the link is up or not")
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if now := srv.HubLinked(); now != up {
			up = now
			if up {
				log.Info().Bool("hub_link_up", true).Msg("league hub link up: the hub catches up on the club's history")
			} else {
				log.Warn().Bool("hub_link_up", false).Msg("league hub link down: the club goes on; the hub will catch up when it is back")
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
