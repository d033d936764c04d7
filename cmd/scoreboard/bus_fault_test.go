package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/serialio"
)

// faultPatience bounds each wait of the port fault tests for the daemon to make
// progress: generous, for a 2-core machine running twice as many busy loops as it
// has cores (.ci/run's load stage), and still short of `go test`'s own timeout, so
// that a test that cannot finish fails with its counts.
const faultPatience = 2 * time.Minute

// faultFlow plays a scoreboard that keeps dumping goscore boards (each with its own
// answer) on a pseudo-terminal, one every gap, and collects what comes back. With
// --error-line every unit gets exactly one line back, its answer or an error line,
// so the lines received count the units done.
type faultFlow struct {
	pt   *serialio.PTY
	gap  time.Duration
	stop chan struct{}
	done chan struct{} // the sender has stopped
	read chan struct{} // the reader has stopped: the daemon closed the port
	sent atomic.Int64

	mu    sync.Mutex
	want  []string
	got   strings.Builder
	lines int
}

func startFaultFlow(t *testing.T, pt *serialio.PTY, gap time.Duration) *faultFlow {
	f := &faultFlow{pt: pt, gap: gap, stop: make(chan struct{}), done: make(chan struct{}), read: make(chan struct{})}
	go func() {
		defer close(f.done)
		for k := 0; ; k++ {
			select {
			case <-f.stop:
				return
			case <-time.After(gap):
			}
			u, a := faulttest.GoscoreBoard(k)
			f.mu.Lock()
			f.want = append(f.want, a)
			f.mu.Unlock()
			if _, err := pt.Master.Write([]byte(u)); err != nil {
				select {
				case <-f.stop: // the port went away as the test stopped the flow
				default:
					t.Errorf("write unit %d: %v", k, err)
				}
				return
			}
			f.sent.Add(1)
		}
	}()
	go func() {
		defer close(f.read)
		b := make([]byte, 4096)
		for {
			n, err := pt.Master.Read(b)
			f.mu.Lock()
			f.got.Write(b[:n])
			f.lines += bytes.Count(b[:n], []byte("\n"))
			f.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return f
}

// text is what came back so far.
func (f *faultFlow) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got.String()
}

// answered is how many units have their line back.
func (f *faultFlow) answered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lines
}

// counts tallies what came back so far.
func (f *faultFlow) counts(scenario string) faulttest.Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return faulttest.Tally(scenario, f.want, f.got.String())
}

// waitAnswered waits until n units have their line back. Past faultPatience without
// one more line, it fails the test with the counts so far.
func (f *faultFlow) waitAnswered(t *testing.T, scenario string, n int, p *proctest.Process) {
	t.Helper()
	last, since := f.answered(), time.Now()
	for have := last; have < n; have = f.answered() {
		if have > last {
			last, since = have, time.Now()
		}
		if time.Since(since) > faultPatience {
			t.Fatalf("%d of %d units answered, none more for %v: %s; daemon output:\n%s",
				have, n, faultPatience, f.counts(scenario), p.Output())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// drain stops sending and waits for a line back for every unit sent.
func (f *faultFlow) drain(t *testing.T, scenario string, p *proctest.Process) {
	t.Helper()
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
	f.waitAnswered(t, scenario, int(f.sent.Load()), p)
}

// finish stops sending, waits for a line back for every unit sent, stops the daemon
// (so that anything it would write twice is written by then: it closes the port as
// it exits) and returns the counts of everything the port got.
func (f *faultFlow) finish(t *testing.T, scenario string, p *proctest.Process) faulttest.Counts {
	t.Helper()
	f.drain(t, scenario, p)
	if err := p.Stop(); err != nil {
		t.Errorf("run after SIGTERM: %v", err)
	}
	select {
	case <-f.read:
	case <-time.After(faultPatience):
		t.Errorf("the port is still open %v after the daemon exited", faultPatience)
	}
	return f.counts(scenario)
}

// faultRun starts `scoreboard run` on an external server and a pseudo-terminal,
// answering with error lines for units that get no answer.
func faultRun(t *testing.T, url string, pt *serialio.PTY) *proctest.Process {
	t.Helper()
	p := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", url, "--port", pt.Path,
		"--problem", "goscore", "--baud", "115200", "--error-line")
	runWaitOpened(t, pt, p)
	p.WaitOutput("scoreboard running", faultPatience)
	return p
}

// The external nats-server is killed (SIGKILL) and started again 10 times while
// units flow from a scoreboard through `scoreboard run --nats-url` to `scoreboard
// work` processes: every unit is answered right, in order, once. Each kill waits
// for 20 more units answered since the last restart, so that units are flowing at
// every kill however slow the machine.
func TestFaultNATSServerKilled10(t *testing.T) {
	const scenario = "nats-server-killed-10"
	s := proctest.StartNATS(t, proctest.NATSOptions{})
	nc := busConnect(t, s.URL())
	busStartWork(t, nc, "--nats-url", s.URL())
	busStartWork(t, nc, "--nats-url", s.URL())
	nc.Close()
	pt := runPTY(t)
	run := faultRun(t, s.URL(), pt)
	flow := startFaultFlow(t, pt, 2*time.Millisecond)
	for i := range 10 {
		flow.waitAnswered(t, scenario, flow.answered()+20, run)
		before, answered := flow.sent.Load(), flow.answered()
		s.Kill()
		// The outage itself: what the clients go through, not an ordering of events.
		time.Sleep(100 * time.Millisecond)
		s.Start()
		t.Logf("restart %d after unit %d sent, %d answered", i+1, before, answered)
	}
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	c := flow.finish(t, scenario, run)
	c.Check(t)
	if c.Errors != 0 {
		t.Errorf("%d units given up", c.Errors)
	}
	if n := strings.Count(run.Output(), `"message":"nats reconnected"`); n < 10 {
		t.Errorf("the daemon reconnected %d times, want 10 or more:\n%s", n, run.Output())
	}
	t.Logf("the daemon published the dumps in flight again at %d reconnections",
		strings.Count(run.Output(), "reconnected: publishing the dumps in flight again"))
}

// A `scoreboard work` process hangs (SIGSTOP) and is then killed (SIGKILL) in the
// middle of its work while another one runs: the units it had are published again after the request timeout
// and answered by the others; every unit is answered right, in order, once.
func TestFaultWorkerKilled(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{})
	nc := busConnect(t, s.URL())
	victim := busStartWork(t, nc, "--nats-url", s.URL())
	busStartWork(t, nc, "--nats-url", s.URL())
	pt := runPTY(t)
	run := faultRun(t, s.URL(), pt)
	// The results name the worker that solved each unit.
	id := regexp.MustCompile(`"worker":"(\w+)","version"`).FindStringSubmatch(victim.Output())
	if id == nil {
		t.Fatalf("no worker id in the output:\n%s", victim.Output())
	}
	var served atomic.Int64
	sub, err := nc.Subscribe("scoreboard.result.>", func(m *nats.Msg) {
		var r result.Record
		if json.Unmarshal(m.Data, &r) == nil && r.Worker == id[1] {
			served.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	flow := startFaultFlow(t, pt, time.Millisecond)
	bustest.Wait(t, "dumps served by the worker to kill", func() (bool, string) {
		n := served.Load()
		return n >= 50, fmt.Sprintf("%d of 50 served", n)
	})
	// Frozen first, so that it dies with dumps taken and unanswered (the queue group
	// keeps giving it some while 20 more units are sent): killed as it is, it would
	// seldom be in the middle of one.
	victim.Freeze()
	frozenAt := flow.sent.Load()
	bustest.Wait(t, "units sent to the frozen worker's queue group", func() (bool, string) {
		n := flow.sent.Load()
		return n >= frozenAt+20, fmt.Sprintf("%d sent, %d when frozen", n, frozenAt)
	})
	victim.Kill()
	flow.waitAnswered(t, "work-killed", flow.answered()+50, run)
	c := flow.finish(t, "work-killed", run)
	c.Check(t)
	again := strings.Count(run.Output(), "publishing the dump again")
	t.Logf("the killed worker had served %d dumps; the daemon published %d dumps again", served.Load(), again)
	if again == 0 {
		t.Errorf("no dump was published again: the killed worker had none in hand, and the test proved nothing")
	}
}
