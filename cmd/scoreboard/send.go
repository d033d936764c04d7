package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/dumpclient"
	"github.com/goclub/scoreboard/engine"
	"github.com/spf13/cobra"
)

func init() { register(sendCommand) }

func sendCommand(stdio stdio) *cobra.Command {
	var (
		port    string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "send PROBLEM [FILE]",
		Short: "publishes units as dumps by hand (--port-name), prints their answers",
		Long: "Cuts FILE (or stdin) into units of PROBLEM and publishes each as a dump on\n" +
			"<prefix>.dump.PROBLEM.<port-name>, numbered from 1, as a port reader would; then\n" +
			"prints their answers on stdout in order as the results come back. A unit that\n" +
			"cannot be framed, or whose result is an error, is reported on stderr; the exit\n" +
			"status is 1 if any unit failed or a result did not come within --timeout.\n\n" +
			"problems: " + strings.Join(engine.Names(), ", "),
		Example:           "  scoreboard send goscore boards.txt\n  scoreboard send --port-name desk othello < ../shared/samples/othello.in",
		Args:              problemArgs(1, "PROBLEM and at most one FILE"),
		ValidArgsFunction: completeProblems,
	}
	cmd.Flags().StringVar(&port, "port-name", "manual", "the port `name` in the dumps' subjects")
	cmd.Flags().DurationVar(&timeout, "timeout", dumpclient.DefaultTimeout, "how long to wait for a missing result")
	load := addSettings(cmd, config.NATSClientKeys...)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkPositive("timeout", timeout, "10s"); err != nil {
			return err
		}
		if !bus.ValidToken(port) {
			return usagef("--port-name %q: want lowercase letters, digits, '-' and '_'", port)
		}
		c, err := load("")
		if err != nil {
			return err
		}
		return send(cmd.Context(), &c, args, port, timeout, stdio)
	}
	return cmd
}

func send(ctx context.Context, c *config.Config, args []string, port string, timeout time.Duration, stdio stdio) error {
	p, _ := engine.Lookup(args[0])
	in, err := stdio.input(args, 1)
	if err != nil {
		return err
	}
	defer in.Close()
	nc, err := c.Connect("scoreboard send", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	// A bad unit is told as it comes; their count ends the send (dumpclient.BadUnits,
	// printed by runMain as "scoreboard send: N bad unit(s)", exit 1).
	return dumpclient.Send(ctx, nc, in, stdio.out, dumpclient.Options{
		Subjects: c.Subjects(), Problem: p, Port: port, Timeout: timeout,
		Report: func(err error) { fmt.Fprintln(stdio.err, "scoreboard send:", err) },
	})
}
