// Package dumpclient is the client side of the dump protocol, as `scoreboard send`
// uses it: it cuts a stream into a problem's units, publishes each as a dump the way
// a port's display writer does (bus.DumpHeader: port, seq from 1, line, origin,
// Nats-Msg-Id), takes the replies on an inbox of its own, refuses any that is not
// the answer to one of its dumps (bus.Dumped), and writes the answers in unit order.
//
// Unlike the daemon's display writer it publishes each dump once, with no attempt
// header: a bus where nothing takes the dumps ends the send at once with
// NoWorkerError, and a unit with no result within the timeout with NoResultError;
// each names what to check (a worker), rather than being published again.
package dumpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/result"
)

// DefaultTimeout is how long Send waits for a missing result by default: far more
// than a worker takes for any unit, short enough that a bus without workers is told
// soon.
const DefaultTimeout = 10 * time.Second

// Options say what Send publishes and how long it waits.
type Options struct {
	// Subjects are the bus's subjects; the dumps go on Subjects.Dump(problem, Port).
	Subjects bus.Subjects
	// Problem frames the input and bounds the answers (its Limits).
	Problem engine.Problem
	// Port is the port name of the dumps' subject and headers: a bus.ValidToken.
	Port string
	// Timeout is how long Send waits for a missing result, counted again at each
	// unit published or answered; DefaultTimeout when 0.
	Timeout time.Duration
	// Report is told, as it happens, of each unit that fails (one the framer
	// rejects, one that could not be published, one whose result is an error) and
	// of the replies refused (sampled: anyone may publish junk on the inbox's
	// subjects). Nil: nothing is told, and the failed units are still counted
	// (BadUnits).
	Report func(error)
}

// BadUnits is Send's error when every unit got its outcome but n of them failed,
// each already told to Options.Report: the answers of the others were written.
type BadUnits int

func (n BadUnits) Error() string { return fmt.Sprintf("%d bad unit(s)", int(n)) }

// NoResultError is Send's error when a published unit got no result within the
// timeout: most often, no worker is running on the bus.
type NoResultError struct {
	Within    time.Duration // the timeout
	Missing   []uint64      // the first of the units without a result (at most 10), in order
	Published uint64        // how many units were published
}

// NoWorkerError is Send's error when the bus said at once that nothing takes the
// dumps' subject (a no-responders notice): no worker serves the problem there.
type NoWorkerError struct {
	Subject string
}

func (e *NoWorkerError) Error() string {
	return fmt.Sprintf("%s: no worker serves it (is 'scoreboard run' or 'scoreboard work' running there, with the same --nats-prefix?)", e.Subject)
}

func (e *NoResultError) Error() string {
	s := make([]string, len(e.Missing))
	for i, n := range e.Missing {
		s[i] = strconv.FormatUint(n, 10)
	}
	return fmt.Sprintf("no result within %v for unit(s) %s of %d (is a worker running?)", e.Within, strings.Join(s, ", "), e.Published)
}

// Send publishes the units of in as dumps on nc, numbered from 1, and writes their
// answers to out in unit order as the results come back, until every unit has its
// outcome. It returns nil when every unit was answered, BadUnits when some failed,
// *NoWorkerError when the bus has nothing that takes the dumps, *NoResultError
// when a result did not come within the timeout, or the error that
// stopped it (reading in, writing out, ctx).
//
// The answers come on the dumps' reply subjects, under an inbox of Send's own,
// where only the worker that took a dump can answer it (README, "Trust"). Send
// returns without waiting for a read of in that is still blocked.
func Send(ctx context.Context, nc *nats.Conn, in io.Reader, out io.Writer, o Options) error {
	if o.Problem == nil {
		return errors.New("dumpclient: no problem")
	}
	if !bus.ValidToken(o.Port) {
		return fmt.Errorf("dumpclient: port name %q: want lowercase letters, digits, '-' and '_'", o.Port)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Report == nil {
		o.Report = func(error) {}
	}
	// Ended when Send returns, so that neither the publisher nor the subscription's
	// callback is left blocked on a channel nobody reads.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ds := &sentDumps{inbox: nc.NewInbox(), origin: bus.NewOrigin(), problem: o.Problem.Name(), port: o.Port,
		maxAnswer: o.Problem.Limits().MaxAnswer, digests: map[uint64]string{}}
	// Subscribe before publishing, or the first answers could be missed.
	results := make(chan *nats.Msg, 256)
	sub, err := nc.Subscribe(ds.inbox+".*", func(m *nats.Msg) {
		select {
		case results <- m:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return fmt.Errorf("subscribe to its inbox: %w", err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		return fmt.Errorf("subscribe to its inbox: %w", err)
	}
	events := make(chan event, 64)
	go publishUnits(ctx, nc, o.Subjects.Dump(o.Problem.Name(), o.Port), o.Port, ds, o.Problem, in, events)
	return writeAnswers(ctx, results, events, ds, out, o)
}

// event is what the publishing side of Send tells the answering side.
type event struct {
	seq  uint64 // a unit published with this sequence number
	bad  error  // a unit that could not be framed or published
	done bool   // the input ended
	err  error  // reading the input failed
}

// sentDumps is what Send knows of the dumps it published, to check their answers.
type sentDumps struct {
	inbox, origin string
	problem, port string // the dumps' subject's: an answer must echo them
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
	if m.Header.Get("Status") == noResponders && len(m.Data) == 0 {
		return nil, errNoResponders
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
	// The answer to a copy of the dump published on another problem's or port's
	// subject (its origin, seq and unit copied) is refused, as the display's is.
	d := bus.Dumped{Problem: s.problem, Port: s.port, Seq: seq, Origin: s.origin, Digest: digest, MaxAnswer: s.maxAnswer}
	if err := d.Check(r.Seq, r.Origin, r.UnitDigest, len(r.Answer)); err != nil {
		return nil, fmt.Errorf("refused a reply for unit %d: %w", seq, err)
	}
	if err := d.CheckSubject(r.Problem, r.Port); err != nil {
		return nil, fmt.Errorf("refused a reply for unit %d: %w", seq, err)
	}
	s.mu.Lock()
	delete(s.digests, seq)
	s.mu.Unlock()
	return &r, nil
}

// noResponders is the status of the server's notice on a reply subject that no
// subscriber took the message (nats.go keeps its own constant unexported).
const noResponders = "503"

var errNoResponders = errors.New("no responders")

// publishUnits frames the input and publishes each unit as a dump, telling events.
func publishUnits(ctx context.Context, nc *nats.Conn, subject, port string, ds *sentDumps, p engine.Problem, in io.Reader, events chan<- event) {
	tell := func(ev event) bool {
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
				if !tell(event{bad: f.Err}) {
					return false
				}
				continue
			}
			msg := nats.NewMsg(subject)
			msg.Reply = ds.inbox + "." + strconv.FormatUint(seq+1, 10)
			bus.DumpHeader{Port: port, Seq: seq + 1, Line: int64(f.Line), Origin: ds.origin}.Put(msg.Header)
			msg.Data = f.Unit // PublishMsg copies it before the framer reuses it
			ds.sent(seq+1, f.Unit)
			if err := nc.PublishMsg(msg); err != nil {
				if !tell(event{bad: fmt.Errorf("line %d: publish: %w", f.Line, err)}) {
					return false
				}
				continue
			}
			seq++
			if !tell(event{seq: seq}) {
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
			if !tell(event{bad: engine.Errorf(p.Name(), lineNo, "%v", err)}) {
				return
			}
			line = nil
		} else if err != nil {
			tell(event{err: fmt.Errorf("read line %d: %w", lineNo, err)})
			return
		}
		if !publish(fr.Feed(frames[:0], line)) {
			return
		}
	}
	if publish(fr.End(frames[:0])) {
		tell(event{done: true})
	}
}

// writeAnswers writes the answers in sequence order as their results come in, until
// every published unit is answered.
func writeAnswers(ctx context.Context, results <-chan *nats.Msg, events <-chan event, ds *sentDumps, out io.Writer, o Options) error {
	refused := logging.NewSampler(10, time.Second, 100)
	var (
		published uint64 // the highest sequence number published
		next      uint64 = 1
		waiting          = map[uint64]*result.Record{}
		bad       int
		inputDone bool
	)
	timer := time.NewTimer(o.Timeout)
	defer timer.Stop()
	for !inputDone || next <= published {
		select {
		case ev := <-events:
			switch {
			case ev.err != nil:
				return ev.err
			case ev.bad != nil:
				bad++
				o.Report(ev.bad)
			case ev.done:
				inputDone = true
			default:
				published = ev.seq
			}
		case m := <-results:
			// A result can overtake the news that its unit was published.
			r, err := ds.check(m)
			if errors.Is(err, errNoResponders) {
				return &NoWorkerError{Subject: o.Subjects.Dump(o.Problem.Name(), o.Port)}
			}
			if err != nil {
				// Anyone may publish junk on the inbox's subjects: sampled, as the
				// daemon's warnings are.
				if ok, left := refused.Allow("refused"); ok {
					o.Report(fmt.Errorf("%w (%d more left out)", err, left))
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
					o.Report(fmt.Errorf("unit %d: %s", r.Seq, r.Error))
					continue
				}
				if _, err := io.WriteString(out, r.Answer); err != nil {
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
			return &NoResultError{Within: o.Timeout, Missing: missing, Published: published}
		case <-ctx.Done():
			return ctx.Err()
		}
		timer.Reset(o.Timeout) // progress: the wait for a missing result starts again
	}
	if bad > 0 {
		return BadUnits(bad)
	}
	return nil
}
