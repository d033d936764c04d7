package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/demo"
)

func init() { register(demoCommand) }

func demoCommand(io stdio) *cobra.Command {
	var (
		stateDir, httpAddr, natsAddr string
		baud                         int
		pause                        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "the daemon with two simulated scoreboards playing the samples, the page on",
		Long: "Starts the daemon with two simulated scoreboards on pseudo-terminals, a Go board\n" +
			"and an Othello board playing the samples in a loop, and the page on. It prints\n" +
			"the page's address and what to try next. Its history goes to a throwaway\n" +
			"directory, removed when it stops, unless --daemon-state-dir names one.",
		Example: "  scoreboard demo\n  scoreboard demo --http-listen 0.0.0.0:8080   # the page for the club's TV",
		Args:    noArgs("takes only flags"),
	}
	// The names run's settings have (--http-listen, --daemon-state-dir), so what a
	// user tried on run works here; the short former names stay, hidden.
	cmd.Flags().StringVar(&stateDir, "daemon-state-dir", "", "keep the history in `DIR`; empty: a temporary directory, removed at the end")
	cmd.Flags().StringVar(&httpAddr, "http-listen", config.DefaultHTTP, "the page's listener `HOST:PORT`; when the default is taken, any free port")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "")
	cmd.Flags().StringVar(&httpAddr, "http", config.DefaultHTTP, "")
	_ = cmd.Flags().MarkHidden("state-dir")
	_ = cmd.Flags().MarkHidden("http")
	cmd.Flags().StringVar(&natsAddr, "nats-listen", bus.DefaultListen, "the NATS listener `HOST:PORT` for the tools; when the default is taken, any free port")
	cmd.Flags().IntVar(&baud, "baud", 1200, "the boards' line speed: how fast they send (0: at once)")
	cmd.Flags().DurationVar(&pause, "pause", 3*time.Second, "the pause between two rounds of a board's sample")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runDemo(cmd.Context(), stateDir, httpAddr, natsAddr, baud, pause, io)
	}
	return cmd
}

func runDemo(ctx context.Context, stateDir, httpAddr, natsAddr string, baud int, pause time.Duration, io stdio) error {
	d, err := demo.Prepare(demo.Options{StateDir: stateDir, HTTP: httpAddr, NATS: natsAddr,
		AnyHTTP: httpAddr == config.DefaultHTTP, AnyNATS: natsAddr == bus.DefaultListen})
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintln(io.err, d.Next)

	g, gctx := errgroup.WithContext(ctx)
	playCtx, stopPlaying := context.WithCancel(gctx)
	for _, b := range d.Boards {
		g.Go(func() error { return b.Play(playCtx, baud, pause) })
	}
	// Who plays on each board: the demo's round, once the daemon answers.
	g.Go(func() error { return demo.LoadPairings(playCtx, d.NATS, d.StateDir) })
	g.Go(func() error {
		defer stopPlaying()
		run := runCommand(io)
		run.SetArgs([]string{"--config", d.Conf})
		return run.ExecuteContext(gctx)
	})
	return g.Wait()
}
