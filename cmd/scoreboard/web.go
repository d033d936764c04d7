package main

import (
	"context"
	"fmt"
	"net"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

func init() {
	register(command{
		name:    "web",
		summary: "serves the live page of every board (for the club's TV) from a NATS server",
		run:     runWeb,
	})
}

// httpOff turns the page's listener off.
const httpOff = "off"

// defaultHTTP is where run and web serve the page.
const defaultHTTP = "127.0.0.1:8080"

func runWeb(ctx context.Context, args []string, stdio stdio) error {
	about := "Serves the scoreboard page on --http: one tile per port with its latest board\n" +
		"drawn, its answer and its state, updated live. It reads the daemon's board\n" +
		"bucket and the ports' states from the NATS server (read-only, as any tool), so\n" +
		"it can run on the computer attached to the TV. The page needs no internet."
	fs := newFlagSet("web", "", about, stdio)
	nf := addNATSFlags(fs, "empty: "+defaultNATSURL+", a local daemon's embedded server")
	addr := fs.String("http", defaultHTTP, "the page's listener, `HOST:PORT` (0.0.0.0:8080 for the whole LAN)")
	lf := addLogFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 0:
		return usageErr(fs, "unexpected argument %q: web takes only flags", fs.Arg(0))
	case *addr == httpOff:
		return usageErr(fs, "--http off: the page needs a listener, HOST:PORT such as 127.0.0.1:8080")
	}
	log, err := lf.logger(stdio.err)
	if err != nil {
		return err
	}
	nc, err := nf.connect("scoreboard web", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	ln, err := web.Listen(*addr)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	defer ln.Close()
	return servePage(ctx, ln, func() (*web.Server, error) {
		return web.New(nc, nf.prefix, log)
	}, nil, log)
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
