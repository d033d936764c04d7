package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/goclub/scoreboard/bus"
	"github.com/nats-io/nats.go"
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
		"joined by \" | \") or the error. With --json it prints each message as it came."
	fs := newFlagSet("watch", "", about, stdio)
	nf := addNATSFlags(fs, "empty: "+defaultNATSURL+", a local daemon's embedded server")
	raw := fs.Bool("json", false, "print the raw JSON messages, one a line")
	problem := fs.String("problem", "", "only this `problem`'s results")
	port := fs.String("port-name", "", "only this `port`'s results")
	count := fs.Int("count", 0, "exit after `N` results; 0: run until interrupted")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *count < 0 {
		fs.Usage()
		return errUsage
	}
	for _, f := range []struct{ flag, v string }{{"problem", *problem}, {"port-name", *port}} {
		if f.v != "" && !bus.ValidToken(f.v) {
			return fmt.Errorf("--%s %q: want lowercase letters, digits, '-' and '_'", f.flag, f.v)
		}
	}
	subject := nf.subjects().AllResults()
	if *problem != "" || *port != "" {
		subject = nf.subjects().Result(orStar(*problem), orStar(*port))
	}
	nc, err := nf.connect("scoreboard watch", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
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
	for n := 0; *count == 0 || n < *count; n++ {
		var m *nats.Msg
		select {
		case m = <-msgs:
		case <-ctx.Done():
			return nil
		}
		if *raw {
			fmt.Fprintf(stdio.out, "%s\n", m.Data)
			continue
		}
		var r bus.Result
		if err := json.Unmarshal(m.Data, &r); err != nil {
			fmt.Fprintf(stdio.out, "%s: malformed result: %v\n", m.Subject, err)
			continue
		}
		if r.Error != "" {
			fmt.Fprintf(stdio.out, "%s %s #%d error: %s\n", r.Port, r.Problem, r.Seq, r.Error)
			continue
		}
		answer := strings.ReplaceAll(strings.TrimSuffix(r.Answer, "\n"), "\n", " | ")
		fmt.Fprintf(stdio.out, "%s %s #%d %s\n", r.Port, r.Problem, r.Seq, answer)
	}
	return nil
}

func orStar(token string) string {
	if token == "" {
		return "*"
	}
	return token
}
