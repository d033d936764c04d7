package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
)

func init() {
	register(command{
		name:    "watch",
		summary: "prints results as they are published (--json for the raw messages)",
		run:     runWatch,
	})
}

func runWatch(ctx context.Context, args []string, stdio stdio) error {
	about := "Subscribes to the results (<prefix>.result.>) and prints one line per result as\n" +
		"it is published: port, problem, sequence number, and the answer (its lines\n" +
		"joined by \" | \") or the error. With --json it prints each message as it came.\n" +
		"With --since or --last it first replays the results kept in the history, then\n" +
		"follows the live ones, with no gap and no duplicate between the two."
	fs := newFlagSet("watch", "", about, stdio)
	nf := addNATSFlags(fs, "empty: "+defaultNATSURL+", a local daemon's embedded server")
	raw := fs.Bool("json", false, "print the raw JSON messages, one a line")
	q := addQueryFlags(fs, false)
	count := fs.Int("count", 0, "exit after `N` results; 0: run until interrupted")
	club := addClubFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 0:
		return usageErr(fs, "unexpected argument %q: watch takes only flags (a problem: --problem NAME)", fs.Arg(0))
	case *count < 0:
		return usageErr(fs, "--count %d: want a number of results, or 0 for no end", *count)
	}
	query, err := q.query(time.Now())
	if err != nil {
		return err
	}
	if err := clubScope(*club, nf, &query); err != nil {
		return err
	}
	if *club != "" && query.Since.IsZero() && query.Last == 0 {
		// A hub's units are sourced into LEAGUE, never published there: follow
		// the stream from now.
		query.Since = time.Now()
	}
	nc, err := nf.connect("scoreboard watch", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	n := 0
	show := func(subject string, data []byte) bool {
		if *raw {
			fmt.Fprintf(stdio.out, "%s\n", data)
		} else {
			var r bus.Result
			if err := json.Unmarshal(data, &r); err != nil {
				fmt.Fprintf(stdio.out, "%s: malformed result: %v\n", subject, err)
			} else {
				fmt.Fprintln(stdio.out, history.ResultLine(&r))
			}
		}
		n++
		return *count == 0 || n < *count
	}
	if !query.Since.IsZero() || query.Last > 0 {
		// The history's ordered consumer replays, then delivers the live results.
		js, err := jetstream.New(nc)
		if err != nil {
			return fmt.Errorf("jetstream: %w", err)
		}
		query.Follow = true
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		return history.Read(ctx, js, nf.prefix, query, func(e *history.Entry) error {
			if !show(e.Port, e.Result) {
				stop()
			}
			return nil
		})
	}
	subject := nf.subjects().AllResults()
	if query.Problem != "" || query.Port != "" {
		subject = nf.subjects().Result(orStar(query.Problem), orStar(query.Port))
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
			if !show(m.Subject, m.Data) {
				return nil
			}
		case <-ctx.Done():
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
