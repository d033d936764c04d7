package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/club"
	"github.com/goclub/scoreboard/config"
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
	load := addSettings(cmd, slices.Concat(config.NATSClientKeys, []string{"http.listen", "http.delay", "http.embed_origins", "http.max_viewers", "http.max_viewers_per_address", "http.trusted_proxies"}, config.LogKeys)...)
	// The setting's own words name /metrics and "off", which are run's: web serves
	// the page alone, and a page needs a listener.
	cmd.Flags().Lookup("http-listen").Usage = "the page's listener, `HOST:PORT` (0.0.0.0:8080 for the whole LAN); no /metrics here [$" + config.ByKey("http.listen").Env() + "]"
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
		return web.ServePage(cmd.Context(), ln, func() (*web.Server, error) {
			s, err := web.New(nc, c.NATS.Prefix, log)
			if err != nil {
				return nil, err
			}
			return s, club.SetUpPage(s, &c, nil)
		}, nil, log)
	}
	return cmd
}
