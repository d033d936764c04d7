package follow

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/result"
)

// Watch is what 'scoreboard watch' does.
type Watch struct {
	Subjects bus.Subjects
	// Query filters the results; with Since or Last, the history's are replayed
	// first, then the live ones follow with no gap and no duplicate.
	Query history.Query
	Raw   bool // each message as it came, not ordered
	Count int  // stop after this many results; 0: until ctx ends
	Out   io.Writer
}

// Run prints the results on nc until ctx ends or Count are printed.
func (o Watch) Run(ctx context.Context, nc *nats.Conn) error {
	// Results are printed per port in unit order, with a time column; Raw prints
	// each message as it came.
	pr := New(o.Out, DefaultHold)
	pr.Limit(o.Count)
	n := 0
	enough := func(printed int) bool { return o.Count > 0 && printed >= o.Count }
	show := func(subject string, data []byte, at time.Time) bool {
		if o.Raw {
			fmt.Fprintf(o.Out, "%s\n", data)
			n++
			return !enough(n)
		}
		r, err := result.Decode(data)
		if err != nil {
			fmt.Fprintf(o.Out, "%s: malformed result: %v\n", subject, err)
			return true
		}
		return !enough(pr.Add(&r, at, time.Now()))
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	query := o.Query
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
					if !o.Raw && enough(pr.Flush(now, false)) {
						stop()
					}
				}
			}
		}()
		err = history.Read(ctx, js, o.Subjects.Prefix, query, func(e *history.Entry) error {
			var more bool
			if e.Unanswered && !o.Raw {
				more = !enough(pr.AddLine(e.Port, e.Seq, e.Time.Local().Format(TimeFormat)+" "+e.Line(), time.Now()))
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
	subject := o.Subjects.AllResults()
	if query.Problem != "" || query.Port != "" {
		subject = o.Subjects.Result(orStar(query.Problem), orStar(query.Port))
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
			if !o.Raw && enough(pr.Flush(now, false)) {
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
