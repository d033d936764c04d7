package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/history"
)

func init() { register(historyCommand) }

func historyCommand(stdio stdio) *cobra.Command {
	var raw, sgf bool
	cmd := &cobra.Command{
		Use:   "history",
		Short: "lists the units kept in the history, oldest first (--json for records)",
		Long: "Reads the history the daemon keeps in JetStream (the stream " + bus.Subjects{Prefix: bus.DefaultPrefix}.Stream() + ")\n" +
			"and prints one line per unit, oldest first, as watch prints results: port,\n" +
			"problem, sequence number, and the answer or the error; a unit that was read and\n" +
			"never answered shows as unanswered. With --json, one record a line: the result\n" +
			"JSON with \"unit\" (the unit's text) and \"time\" (when the result came). With\n" +
			"--sgf, one SGF collection of the Go games among them (replay, goscore,\n" +
			"territory units that were answered).\n\n" +
			"--since and --until take " + history.TimeForms + ".",
		Example: "  scoreboard history --since 1d --port hall\n  scoreboard history --json --problem othello --last 20 | jq .board",
		Args:    noArgs("takes only flags (filters: --port, --problem, --since, --until, --last)"),
	}
	cmd.Flags().BoolVar(&raw, "json", false, "print one JSON record a line")
	cmd.Flags().BoolVar(&sgf, "sgf", false, "print the answered Go games (replay, goscore, territory) as one SGF collection")
	q := addQueryFlags(cmd, true)
	load := addSettings(cmd, config.NATSClientKeys...)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if raw && sgf {
			return usagef("--json and --sgf: give one of them")
		}
		c, query, err := q.settings(load)
		if err != nil {
			return err
		}
		return printHistory(cmd.Context(), &c, query, raw, sgf, stdio)
	}
	return cmd
}

func printHistory(ctx context.Context, c *config.Config, query history.Query, raw, sgf bool, stdio stdio) error {
	nc, err := c.Connect("scoreboard history", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	f := history.Lines
	if raw {
		f = history.JSON
	} else if sgf {
		f = history.SGF
	}
	return history.Print(ctx, js, c.NATS.Prefix, query, f, stdio.out)
}

// queryFlags are the filters of history, and of watch's replay.
type queryFlags struct {
	port, problem, since, until *string
	last                        *int
	club                        *string // --club: a club's units at a league hub
	cmd                         *cobra.Command
}

// addQueryFlags binds --port, --problem, --since, --last, --club, and with until
// --until. --port-name, watch's name for --port before both had one, is a hidden
// alias of it.
func addQueryFlags(cmd *cobra.Command, until bool) *queryFlags {
	fs := cmd.Flags()
	_ = cmd.RegisterFlagCompletionFunc("problem", completeProblems)
	q := &queryFlags{port: new(string), cmd: cmd}
	fs.StringVar(q.port, "port", "", "only this port's units (its `name`)")
	fs.StringVar(q.port, "port-name", "", "")
	_ = fs.MarkHidden("port-name")
	if until {
		q.until = fs.String("until", "", "only units until this `time` (or this duration before this machine's clock now), compared with when the NATS server stored each unit")
	} else {
		q.until = new(string)
	}
	q.problem = fs.String("problem", "", "only this `problem`'s units")
	q.since = fs.String("since", "", "from this `time`, or this duration before this machine's clock now (90m, 7d, 2026-11-22T18:00), compared with when the NATS server stored each unit, by its clock")
	q.last = fs.Int("last", 0, "only the last `N` units")
	q.club = addClubFlag(cmd)
	return q
}

// settings are the tool's settings (load's, with no file) and its query, both
// pointed at --club's units at a hub.
func (q *queryFlags) settings(load func(path string) (config.Config, error)) (config.Config, history.Query, error) {
	query, err := q.query(time.Now())
	if err != nil {
		return config.Config{}, query, err
	}
	c, err := load("")
	if err != nil {
		return c, query, err
	}
	return c, query, clubScope(*q.club, &c, &query)
}

// query checks the filters and makes them a history.Query.
func (q *queryFlags) query(now time.Time) (history.Query, error) {
	r, err := history.Filters{Port: *q.port, Problem: *q.problem, Since: *q.since, Until: *q.until, Last: *q.last}.Query(now)
	var fe *history.FilterError
	if errors.As(err, &fe) {
		if fe.Filter == "port" && q.cmd.Flags().Changed("port-name") {
			fe.Filter = "port-name"
		}
		return r, usagef("--%s%s", fe.Filter, fe.Text)
	}
	// An unknown problem would match nothing, and watch would wait forever.
	if _, ok := engine.Lookup(r.Problem); r.Problem != "" && !ok {
		return r, usagef("--problem: %v", config.ProblemError(r.Problem))
	}
	return r, err
}
