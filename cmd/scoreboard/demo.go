package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/demo"
)

func init() {
	register(command{
		name:    "demo",
		summary: "the daemon with two simulated scoreboards playing the samples, the page on",
		run:     runDemo,
	})
}

func runDemo(ctx context.Context, args []string, io stdio) error {
	about := "Starts the daemon with two simulated scoreboards on pseudo-terminals, a Go board\n" +
		"and an Othello board playing the samples in a loop, and the page on. It prints\n" +
		"the page's address and what to try next. Its history goes to a throwaway\n" +
		"directory, removed when it stops, unless --state-dir names one."
	fs := newFlagSet("demo", "", about, io)
	stateDir := fs.String("state-dir", "", "keep the history in `DIR`; empty: a temporary directory, removed at the end")
	httpAddr := fs.String("http", defaultHTTP, "the page's listener `HOST:PORT`; when the default is taken, any free port")
	natsAddr := fs.String("nats-listen", "127.0.0.1:4222", "the NATS listener `HOST:PORT` for the tools; when the default is taken, any free port")
	baud := fs.Int("baud", 1200, "the boards' line speed: how fast they send (0: at once)")
	pause := fs.Duration("pause", 3*time.Second, "the pause between two rounds of a board's sample")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(fs, "unexpected argument %q: demo takes only flags", fs.Arg(0))
	}
	temporary := *stateDir == ""
	if temporary {
		d, err := os.MkdirTemp("", "scoreboard-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*stateDir = d
	}
	http, err := freeOr(*httpAddr, *httpAddr == defaultHTTP)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	nats, err := freeOr(*natsAddr, *natsAddr == "127.0.0.1:4222")
	if err != nil {
		return fmt.Errorf("--nats-listen: %w", err)
	}
	boards, err := demo.Boards()
	if err != nil {
		return err
	}
	defer demo.Close(boards)
	conf := filepath.Join(*stateDir, "demo.toml")
	if err := os.WriteFile(conf, demo.Config(boards, nats, http, *stateDir), 0o600); err != nil {
		return err
	}
	fmt.Fprintln(io.err, demo.Next("http://"+http+"/", "nats://"+nats, *stateDir, temporary))

	g, gctx := errgroup.WithContext(ctx)
	playCtx, stopPlaying := context.WithCancel(gctx)
	for _, b := range boards {
		g.Go(func() error { return b.Play(playCtx, *baud, *pause) })
	}
	g.Go(func() error {
		defer stopPlaying()
		return runRun(gctx, []string{"--config", conf}, io)
	})
	return g.Wait()
}

// freeOr is addr when it can be listened on; when it is taken and fallback allows,
// a free port on its host.
func freeOr(addr string, fallback bool) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil && fallback {
		host, _, _ := net.SplitHostPort(addr)
		l, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
