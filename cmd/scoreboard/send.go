package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/result"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

func init() { register(sendCommand) }

// sendEvent is what the reading side of send tells the printing side.
type sendEvent struct {
	seq  uint64 // a unit published with this sequence number
	bad  error  // a unit that could not be framed or published
	done bool   // the input ended
	err  error  // reading the input failed
}

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
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for a missing result")
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
	in := stdio.in
	if len(args) == 2 && args[1] != "-" {
		f, err := openInput(args[1])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}

	nc, err := c.Connect("scoreboard send", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	subj := c.Subjects()
	// The answers come on the reply subjects of the dumps, under an inbox of send's
	// own, where only the worker that took a dump can answer it (README, "Trust").
	// Subscribe before publishing, or the first answers could be missed.
	ds := &sentDumps{inbox: nc.NewInbox(), origin: bus.NewOrigin(), maxAnswer: p.Limits().MaxAnswer, digests: map[uint64]string{}}
	results := make(chan *nats.Msg, 256)
	sub, err := nc.Subscribe(ds.inbox+".*", func(m *nats.Msg) { results <- m })
	if err != nil {
		return fmt.Errorf("subscribe to its inbox: %w", err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		return fmt.Errorf("subscribe to its inbox: %w", err)
	}
	events := make(chan sendEvent, 64)
	go publishUnits(ctx, nc, subj.Dump(p.Name(), port), port, ds, p, in, events)
	return printResults(ctx, results, events, ds, timeout, stdio)
}

// sentDumps is what send knows of the dumps it published, to check their answers.
type sentDumps struct {
	inbox, origin string
	maxAnswer     int

	mu      sync.Mutex
	digests map[uint64]string // seq -> unit digest, of the dumps not answered yet
}

func (s *sentDumps) sent(seq uint64, unit []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.digests[seq] = bus.UnitDigest(unit)
}

// check reads a reply on the inbox and says why it is not the answer to a dump
// still waiting for one, if it is not.
func (s *sentDumps) check(m *nats.Msg) (*result.Record, error) {
	seq, err := strconv.ParseUint(strings.TrimPrefix(m.Subject, s.inbox+"."), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("reply subject %s: %w", m.Subject, err)
	}
	r, err := result.Decode(m.Data)
	if err != nil {
		return nil, fmt.Errorf("malformed result for unit %d: %w", seq, err)
	}
	s.mu.Lock()
	digest, ok := s.digests[seq]
	s.mu.Unlock()
	if !ok {
		return nil, nil // a late answer to a unit already answered
	}
	if err := (bus.Dumped{Seq: seq, Origin: s.origin, Digest: digest, MaxAnswer: s.maxAnswer}).Check(r.Seq, r.Origin, r.UnitDigest, len(r.Answer)); err != nil {
		return nil, fmt.Errorf("refused a reply for unit %d: %w", seq, err)
	}
	s.mu.Lock()
	delete(s.digests, seq)
	s.mu.Unlock()
	return &r, nil
}

// publishUnits frames the input and publishes each unit as a dump, telling events.
func publishUnits(ctx context.Context, nc *nats.Conn, subject, port string, ds *sentDumps, p engine.Problem, in io.Reader, events chan<- sendEvent) {
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
			msg.Reply = ds.inbox + "." + strconv.FormatUint(seq+1, 10)
			bus.DumpHeader{Port: port, Seq: seq + 1, Line: f.Line, Origin: ds.origin}.Put(msg.Header)
			msg.Data = f.Unit // PublishMsg copies it before the framer reuses it
			ds.sent(seq+1, f.Unit)
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
func printResults(ctx context.Context, results <-chan *nats.Msg, events <-chan sendEvent, ds *sentDumps, timeout time.Duration, stdio stdio) error {
	refused := logging.NewSampler(10, time.Second, 100)
	var (
		published uint64 // the highest sequence number published
		next      uint64 = 1
		waiting          = map[uint64]*result.Record{}
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
			// A result can overtake the news that its unit was published.
			r, err := ds.check(m)
			if err != nil {
				// Anyone may publish junk on the inbox's subjects: sampled, as the
				// daemon's warnings are.
				if ok, left := refused.Allow("refused"); ok {
					fmt.Fprintf(stdio.err, "scoreboard send: %v (%d more left out)\n", err, left)
				}
				continue
			}
			if r == nil {
				continue
			}
			waiting[r.Seq] = r
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
