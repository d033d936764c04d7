package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/follow"
	"github.com/goclub/scoreboard/history"
)

func init() { register(watchCommand) }

func watchCommand(stdio stdio) *cobra.Command {
	var (
		raw   bool
		count int
	)
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "prints results as they are published (--json for the raw messages)",
		Long: "Subscribes to the results (<prefix>.result.>) and prints each port's results in\n" +
			"unit order: time, port, problem, sequence number, and the answer (as its lines)\n" +
			"or the error. With --json it prints each message as it came.\n" +
			"With --since or --last it first replays the results kept in the history, then\n" +
			"follows the live ones, with no gap and no duplicate between the two.",
		Example: "  scoreboard watch --json --problem goscore --port hall\n  scoreboard watch --since 2h",
		Args:    noArgs("takes only flags (a problem: --problem NAME)"),
	}
	cmd.Flags().BoolVar(&raw, "json", false, "print the raw JSON messages, one a line")
	q := addQueryFlags(cmd, false)
	cmd.Flags().IntVar(&count, "count", 0, "exit after `N` results; 0: run until interrupted")
	load := addSettings(cmd, config.NATSClientKeys...)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if count < 0 {
			return usagef("--count %d: want a number of results, or 0 for no end", count)
		}
		c, query, err := q.settings(load)
		if err != nil {
			return err
		}
		if *q.club != "" && query.Since.IsZero() && query.Last == 0 {
			// A hub's units are sourced into LEAGUE, never published there: follow
			// the stream from now.
			query.Since = time.Now()
		}
		return watch(cmd.Context(), &c, query, raw, count, stdio)
	}
	return cmd
}

func watch(ctx context.Context, c *config.Config, query history.Query, raw bool, count int, stdio stdio) error {
	nc, err := c.Connect("scoreboard watch", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	return follow.Watch{Subjects: c.Subjects(), Query: query, Raw: raw, Count: count, Out: stdio.out}.Run(ctx, nc)
}
