package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{
		name:    "send",
		summary: "publishes units as dumps by hand (--port-name), prints their answers",
		run:     runSend,
	})
}

// sendEvent is what the reading side of send tells the printing side.
type sendEvent struct {
	seq  uint64 // a unit published with this sequence number
	bad  error  // a unit that could not be framed or published
	done bool   // the input ended
	err  error  // reading the input failed
}

func runSend(ctx context.Context, args []string, stdio stdio) error {
	about := "Cuts FILE (or stdin) into units of PROBLEM and publishes each as a dump on\n" +
		"<prefix>.dump.PROBLEM.<port-name>, numbered from 1, as a port reader would; then\n" +
		"prints their answers on stdout in order as the results come back. A unit that\n" +
		"cannot be framed, or whose result is an error, is reported on stderr; the exit\n" +
		"status is 1 if any unit failed or a result did not come within --timeout.\n\n" +
		"problems: " + strings.Join(engine.Names(), ", ")
	fs := newFlagSet("send", "PROBLEM [FILE]", about, stdio)
	nf := addNATSFlags(fs, "empty: "+defaultNATSURL+", a local daemon's embedded server")
	port := fs.String("port-name", "manual", "the port `name` in the dumps' subjects")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for a missing result")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 || *timeout <= 0 {
		fs.Usage()
		return errUsage
	}
	p, ok := engine.Lookup(fs.Arg(0))
	if !ok {
		return fmt.Errorf("unknown problem %q (problems: %s)", fs.Arg(0), strings.Join(engine.Names(), ", "))
	}
	if !bus.ValidToken(*port) {
		return fmt.Errorf("--port-name %q: want lowercase letters, digits, '-' and '_'", *port)
	}
	in := stdio.in
	if fs.NArg() == 2 && fs.Arg(1) != "-" {
		f, err := os.Open(fs.Arg(1))
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}

	nc, err := nf.connect("scoreboard send", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	subj := nf.subjects()
	// Subscribe before publishing, or the first results could be missed.
	results := make(chan *nats.Msg, 256)
	sub, err := nc.Subscribe(subj.Result(p.Name(), *port), func(m *nats.Msg) { results <- m })
	if err != nil {
		return fmt.Errorf("subscribe to results: %w", err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		return fmt.Errorf("subscribe to results: %w", err)
	}
	events := make(chan sendEvent, 64)
	// The results subject is the port's: a daemon serving a port of that name publishes
	// its own results there too. The origin tells ours.
	origin := bus.NewOrigin()
	go publishUnits(ctx, nc, subj.Dump(p.Name(), *port), *port, origin, p, in, events)
	return printResults(ctx, results, events, origin, *timeout, stdio)
}

// publishUnits frames the input and publishes each unit as a dump, telling events.
func publishUnits(ctx context.Context, nc *nats.Conn, subject, port, origin string, p engine.Problem, in io.Reader, events chan<- sendEvent) {
	send := func(ev sendEvent) bool {
		select {
		case events <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	lr := engine.NewLineReader(in, p.Limits().MaxLine)
	fr := p.NewFramer()
	var (
		frames []engine.Frame
		seq    uint64
		lineNo int
	)
	publish := func(frames []engine.Frame) bool {
		for _, f := range frames {
			if f.Err != nil {
				if !send(sendEvent{bad: f.Err}) {
					return false
				}
				continue
			}
			msg := nats.NewMsg(subject)
			msg.Header.Set(bus.HeaderPort, port)
			msg.Header.Set(bus.HeaderSeq, strconv.FormatUint(seq+1, 10))
			msg.Header.Set(bus.HeaderLine, strconv.Itoa(f.Line))
			msg.Header.Set(bus.HeaderOrigin, origin)
			msg.Data = f.Unit // PublishMsg copies it before the framer reuses it
			if err := nc.PublishMsg(msg); err != nil {
				if !send(sendEvent{bad: fmt.Errorf("line %d: publish: %w", f.Line, err)}) {
					return false
				}
				continue
			}
			seq++
			if !send(sendEvent{seq: seq}) {
				return false
			}
		}
		return true
	}
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		lineNo++
		if errors.Is(err, engine.ErrLineTooLong) {
			if !send(sendEvent{bad: engine.Errorf(p.Name(), lineNo, "%v", err)}) {
				return
			}
			line = nil
		} else if err != nil {
			send(sendEvent{err: fmt.Errorf("read line %d: %w", lineNo, err)})
			return
		}
		if !publish(fr.Feed(frames[:0], line)) {
			return
		}
	}
	if publish(fr.End(frames[:0])) {
		send(sendEvent{done: true})
	}
}

// printResults prints the answers in sequence order as their results come in, until
// every published unit is answered.
func printResults(ctx context.Context, results <-chan *nats.Msg, events <-chan sendEvent, origin string, timeout time.Duration, stdio stdio) error {
	malformed := logging.NewSampler(10, time.Second, 100)
	var (
		published uint64 // the highest sequence number published
		next      uint64 = 1
		waiting          = map[uint64]*bus.Result{}
		bad       int
		inputDone bool
	)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for !inputDone || next <= published {
		select {
		case ev := <-events:
			switch {
			case ev.err != nil:
				return ev.err
			case ev.bad != nil:
				bad++
				fmt.Fprintln(stdio.err, "scoreboard send:", ev.bad)
			case ev.done:
				inputDone = true
			default:
				published = ev.seq
			}
		case m := <-results:
			var r bus.Result
			if err := json.Unmarshal(m.Data, &r); err != nil {
				// Anyone may publish junk on the results subject: sampled, as the
				// daemon's warnings are.
				if ok, left := malformed.Allow(m.Subject); ok {
					fmt.Fprintf(stdio.err, "scoreboard send: malformed result on %s: %v (%d more left out)\n", m.Subject, err, left)
				}
				continue
			}
			// Another publisher's result on this port name is not ours. A result can
			// overtake the news that its unit was published; one from before next is
			// a duplicate.
			if !bus.FromOrigin(r.Origin, origin) || r.Seq < next {
				continue
			}
			waiting[r.Seq] = &r
			for waiting[next] != nil {
				r := waiting[next]
				delete(waiting, next)
				next++
				if r.Error != "" {
					bad++
					fmt.Fprintf(stdio.err, "scoreboard send: unit %d: %s\n", r.Seq, r.Error)
					continue
				}
				if _, err := io.WriteString(stdio.out, r.Answer); err != nil {
					return err
				}
			}
		case <-timer.C:
			if next > published {
				break // nothing outstanding: waiting for the input, which may be a user
			}
			var missing []uint64
			for s := next; s <= published && len(missing) < 10; s++ {
				if waiting[s] == nil {
					missing = append(missing, s)
				}
			}
			return fmt.Errorf("no result within %v for unit(s) %s of %d (is a worker running?)", timeout, joinSeqs(missing), published)
		case <-ctx.Done():
			return ctx.Err()
		}
		timer.Reset(timeout) // progress: the wait for a missing result starts again
	}
	if bad > 0 {
		fmt.Fprintf(stdio.err, "scoreboard send: %d bad unit(s)\n", bad)
		return errExitQuiet
	}
	return nil
}

func joinSeqs(seqs []uint64) string {
	s := make([]string, len(seqs))
	for i, n := range slices.Sorted(slices.Values(seqs)) {
		s[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(s, ", ")
}
