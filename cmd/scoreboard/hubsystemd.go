package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/systemd"
)

// checkHub is scoreboard hub --check: the file, its settings and the leaf
// listener's certificate, as the hub reads them at start (the clubs and settings
// were read by then), for scoreboard-hub.service's ExecStartPre=, so that
// systemctl start refuses a bad file with the hub's own errors before the running
// hub is stopped.
func checkHub(c config.Config, cfg league.Config, path string, io stdio) error {
	if err := league.CheckLeafTLS(c.League.LeafTLSCert, c.League.LeafTLSKey, c.League.LeafTLSClientCA); err != nil {
		return err
	}
	tls := "no TLS on the leaf listener"
	if c.League.LeafTLSCert != "" {
		tls = "the leaf listener's certificate read"
	}
	_, err := fmt.Fprintf(io.out, "%s: good: %d clubs, %s\n", path, len(cfg.Clubs), tls)
	return err
}

// goHubSystemd tells systemd the hub's readiness (it runs by now), its status
// (clubs linked of the clubs), its health and its stop, as run does for a club
// (club/start.go): WATCHDOG=1 only while the hub's own connection gets a PONG from
// its server, so a hub whose server is stuck is restarted.
func goHubSystemd(g *errgroup.Group, ctx context.Context, notify *systemd.Notifier, hub *league.Hub, clubs *atomic.Int64, log zerolog.Logger) {
	if !notify.Enabled() {
		return
	}
	warn := func(what string, err error) {
		if err != nil {
			log.Warn().Err(err).Msg("tell systemd " + what)
		}
	}
	warn("the hub is ready", notify.Ready())
	g.Go(func() error {
		notify.RunStatus(ctx, time.Second, func() string {
			return fmt.Sprintf("%d of %d clubs linked", hub.LinkedClubs(), clubs.Load())
		}, log)
		return nil
	})
	g.Go(func() error {
		warn("the watchdog", notify.Watch(ctx, func(ctx context.Context) error {
			nc := hub.Conn()
			if s := nc.Status(); s != nats.CONNECTED {
				return fmt.Errorf("the hub's connection to its server is %v", s)
			}
			if err := nc.FlushWithContext(ctx); err != nil {
				return fmt.Errorf("the hub's server does not answer a ping: %w", err)
			}
			return nil
		}, log))
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		warn("the hub is stopping", notify.Stopping())
		return nil
	})
}
