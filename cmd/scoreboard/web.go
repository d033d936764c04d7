package main

import (
	"context"
	"fmt"
	"net"
	"slices"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

func init() { register(webCommand) }

func webCommand(stdio stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "web",
		Short: "serves the live page of every board (for the club's TV) from a NATS server",
		Long: "Serves the scoreboard page on --http-listen: one tile per port with its latest\n" +
			"board drawn, its answer and its state, updated live. It reads the daemon's board\n" +
			"bucket and the ports' states from the NATS server (read-only, as any tool), so\n" +
			"it can run on the computer attached to the TV. The page needs no internet.",
		Example: "  scoreboard web --nats-url nats://club-server:4222 --http-listen 0.0.0.0:8080",
		Args:    noArgs("takes only flags"),
	}
	load := addSettings(cmd, slices.Concat(config.NATSClientKeys, []string{"http.listen"}, config.LogKeys)...)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := load("")
		if err != nil {
			return err
		}
		if c.HTTP.Listen == config.HTTPOff {
			return usagef("--http-listen off: the page needs a listener, HOST:PORT such as 127.0.0.1:8080")
		}
		log, err := c.Logger(stdio.err)
		if err != nil {
			return err
		}
		nc, err := c.Connect("scoreboard web", log)
		if err != nil {
			return err
		}
		defer nc.Close()
		ln, err := web.Listen(c.HTTP.Listen)
		if err != nil {
			return fmt.Errorf("--http-listen: %w", err)
		}
		defer ln.Close()
		return servePage(cmd.Context(), ln, func() (*web.Server, error) {
			return web.New(nc, c.NATS.Prefix, log)
		}, nil, log)
	}
	return cmd
}

// servePage runs a page server on ln until ctx ends, with met's /metrics beside it
// unless met is nil.
func servePage(ctx context.Context, ln net.Listener, newServer func() (*web.Server, error), met *metrics.Metrics, log zerolog.Logger) error {
	srv, err := newServer()
	if err != nil {
		return err
	}
	web.Announce(ln, log)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(gctx) })
	g.Go(func() error { return web.Serve(gctx, ln, met.Beside(srv.Handler())) })
	return g.Wait()
}
