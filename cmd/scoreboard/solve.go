package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/dumpclient"
	"github.com/goclub/scoreboard/engine"
)

func init() { register(solveCommand) }

func solveCommand(io stdio) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "solve PROBLEM",
		Short: "contest filter: contest input on stdin, contest output on stdout",
		Long: "Reads a whole contest input of PROBLEM on stdin and writes the contest output\n" +
			"on stdout, computed in-process, or with --nats-url by the 'scoreboard' service.\n" +
			"A unit that cannot be parsed is reported on stderr with its line, and the units\n" +
			"after it are still answered; the exit status is 1 if any unit failed.\n\n" +
			"problems: " + strings.Join(engine.Names(), ", "),
		Example:           "  scoreboard solve goscore < ../shared/samples/goscore.in",
		Args:              problemArgs(0, "one PROBLEM (the input comes on stdin)"),
		ValidArgsFunction: completeProblems,
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "with --nats-url, how long to wait for the service's answer")
	load := addSettings(cmd, config.NATSClientKeys...)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		p, _ := engine.Lookup(args[0])
		c, err := load("")
		if err != nil {
			return err
		}
		if c.NATS.URL != "" {
			return solveRemote(&c, p.Name(), timeout, io)
		}
		bad, err := engine.Contest(p, io.in, io.out, func(err error) {
			fmt.Fprintln(io.err, "scoreboard solve:", err)
		})
		if err != nil {
			return err
		}
		if bad > 0 {
			fmt.Fprintf(io.err, "scoreboard solve: %d bad unit(s)\n", bad)
			return errExitQuiet
		}
		return nil
	}
	return cmd
}

// solveRemote has the service answer the whole input (dumpclient.Solve).
func solveRemote(c *config.Config, problem string, timeout time.Duration, stdio stdio) error {
	nc, err := c.Connect("scoreboard solve", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	return dumpclient.Solve(nc, c.Subjects().Solve(problem), stdio.in, stdio.out, timeout)
}
