package club

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/systemd"
)

// settle waits, before the embedded server stops, until its history has stored every
// unit and result the daemon's connections published: the stream stores them behind
// the ports at a flood's rate, and a server that stops drops what it has not stored
// yet. Bounded as the units' own drain is (bound): a store that does not catch up
// within it is logged, not waited for, so the history never holds a stop up for
// long (clients of the listener may still be publishing).
func settle(srv *bus.Server, conns []*nats.Conn, bound time.Duration, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	for _, nc := range conns {
		// A round trip: the server has taken in everything nc sent before it.
		_ = nc.FlushWithContext(ctx)
	}
	if !srv.WaitStored(ctx) {
		log.Warn().Str("component", "history").Dur("bound_ms", bound).Msg("stopping: the history has not stored the last units and results within the drain bound; they are lost")
	}
}

// healthCheck is the watchdog's test of a real round trip: both connections are
// connected, a worker answers a ping (subject ping: this process's own, or any
// instance of the service without workers here) sent over the ports' connection,
// and every port's display writer still turns over.
func healthCheck(wnc, pnc *nats.Conn, ping string, mon *daemon.Monitor) systemd.Check {
	return systemd.All(
		func(context.Context) error {
			for _, nc := range []*nats.Conn{wnc, pnc} {
				if s := nc.Status(); s != nats.CONNECTED {
					return fmt.Errorf("bus connection %q is %v", nc.Opts.Name, s)
				}
			}
			return nil
		},
		func(ctx context.Context) error {
			if _, err := pnc.RequestWithContext(ctx, ping, nil); err != nil {
				return fmt.Errorf("workers do not answer a ping: %w", err)
			}
			return nil
		},
		func(context.Context) error { return mon.Health() },
	)
}

// status is the systemd status: the ports', with what the history dropped at
// start-up, and whether it is storing.
func status(ports func() string, keeper *history.Keeper, damaged string) func() string {
	return func() string {
		s := ports()
		if damaged != "" {
			s += "; " + damaged
		}
		if keeper != nil && !keeper.OK() {
			s += fmt.Sprintf("; history NOT storing (full disk): %d units not stored", keeper.NotStored())
		}
		return s
	}
}

// watchHubLink logs each change of the link to the hub, until ctx ends: the link
// is not what the club's scoreboards need, so a drop is a warning, not an error.
func watchHubLink(ctx context.Context, linked func() bool, h *bus.HubLink, log zerolog.Logger) {
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
		if now := linked(); now != up {
			up = now
			if up {
				log.Info().Bool("hub_link_up", true).Msg("league hub link up: the hub catches up on the club's history")
			} else {
				log.Warn().Bool("hub_link_up", false).Msg("league hub link down: the club goes on; the hub will catch up when it is back")
			}
		}
	}
}

// stopClock is when a stop began, marked once.
type stopClock struct {
	once sync.Once
	at   atomic.Int64 // unix nanoseconds; 0 before the stop
}

func (c *stopClock) mark() { c.once.Do(func() { c.at.Store(time.Now().UnixNano()) }) }

// since is the time since the stop began, 0 when it has not.
func (c *stopClock) since() time.Duration {
	if at := c.at.Load(); at != 0 {
		return time.Since(time.Unix(0, at))
	}
	return 0
}
