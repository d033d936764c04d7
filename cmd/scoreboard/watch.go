package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/follow"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/result"
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
	// Results are printed per port in unit order, with a time column (follow); --json
	// prints each message as it came.
	pr := follow.New(stdio.out, follow.DefaultHold)
	pr.Limit(count)
	n := 0
	enough := func(printed int) bool { return count > 0 && printed >= count }
	show := func(subject string, data []byte, at time.Time) bool {
		if raw {
			fmt.Fprintf(stdio.out, "%s\n", data)
			n++
			return !enough(n)
		}
		r, err := result.Decode(data)
		if err != nil {
			fmt.Fprintf(stdio.out, "%s: malformed result: %v\n", subject, err)
			return true
		}
		return !enough(pr.Add(&r, at, time.Now()))
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	if !query.Since.IsZero() || query.Last > 0 {
		// The history's ordered consumer replays, then delivers the live results.
		js, err := jetstream.New(nc)
		if err != nil {
			return fmt.Errorf("jetstream: %w", err)
		}
		query.Follow = true
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-tick.C:
					if !raw && enough(pr.Flush(now, false)) {
						stop()
					}
				}
			}
		}()
		err = history.Read(ctx, js, c.NATS.Prefix, query, func(e *history.Entry) error {
			var more bool
			if e.Unanswered && !raw {
				more = !enough(pr.AddLine(e.Port, e.Seq, e.Time.Local().Format(follow.TimeFormat)+" "+e.Line(), time.Now()))
			} else {
				more = show(e.Port, e.Result, e.Time)
			}
			if !more {
				stop()
			}
			return nil
		})
		pr.Flush(time.Now(), true)
		return err
	}
	subject := c.Subjects().AllResults()
	if query.Problem != "" || query.Port != "" {
		subject = c.Subjects().Result(orStar(query.Problem), orStar(query.Port))
	}
	msgs := make(chan *nats.Msg, 1024)
	sub, err := nc.ChanSubscribe(subject, msgs)
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", subject, err)
	}
	defer sub.Unsubscribe()
	// A watcher that cannot keep up is told so by the bus's slow-consumer warning.
	if err := nc.Flush(); err != nil {
		return fmt.Errorf("subscribe to %s: %w", subject, err)
	}
	for {
		select {
		case m := <-msgs:
			if !show(m.Subject, m.Data, time.Now()) {
				return nil
			}
		case now := <-tick.C:
			if !raw && enough(pr.Flush(now, false)) {
				return nil
			}
		case <-ctx.Done():
			pr.Flush(time.Now(), true)
			return nil
		}
	}
}

func orStar(token string) string {
	if token == "" {
		return "*"
	}
	return token
}
