package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/serialio"
)

// faultFlow plays a scoreboard that keeps dumping goscore boards (each with its own
// answer) on a pseudo-terminal, one every gap, and collects what comes back.
type faultFlow struct {
	pt   *serialio.PTY
	gap  time.Duration
	stop chan struct{}
	done chan struct{}
	read chan struct{} // closed when the port's end is closed and everything read
	sent atomic.Int64

	mu   sync.Mutex
	want []string
	got  strings.Builder
	n    int // bytes of answers due
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
			f.n += len(a)
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

// finish stops sending and waits for the answers, or for as many bytes as the answers
// of every unit would make, and returns the counts.
func (f *faultFlow) finish(t *testing.T, scenario string, p *proctest.Process) faulttest.Counts {
	t.Helper()
	close(f.stop)
	<-f.done
	deadline := time.Now().Add(60 * time.Second)
	for {
		f.mu.Lock()
		have, due := f.got.Len(), f.n
		f.mu.Unlock()
		if have >= due {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d of %d bytes of answers after 60s; daemon output:\n%s", have, due, p.Output())
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A moment for anything answered twice to come.
	time.Sleep(200 * time.Millisecond)
	f.mu.Lock()
	defer f.mu.Unlock()
	return faulttest.Tally(scenario, f.want, f.got.String())
}

// faultRun starts `scoreboard run` on an external server and a pseudo-terminal,
// answering with error lines for units that get no answer.
func faultRun(t *testing.T, url string, pt *serialio.PTY) *proctest.Process {
	t.Helper()
	p := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", url, "--port", pt.Path,
		"--problem", "goscore", "--baud", "115200", "--error-line")
	runWaitOpened(t, pt, p)
	p.WaitOutput("scoreboard running", 30*time.Second)
	return p
}

// The external nats-server is killed (SIGKILL) and started again 10 times while
// units flow from a scoreboard through `scoreboard run --nats-url` to `scoreboard
// work` processes: every unit is answered right, in order, once.
func TestFaultNATSServerKilled10(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{})
	nc := busConnect(t, s.URL())
	busStartWork(t, nc, "--nats-url", s.URL())
	busStartWork(t, nc, "--nats-url", s.URL())
	nc.Close()
	pt := runPTY(t)
	run := faultRun(t, s.URL(), pt)
	flow := startFaultFlow(t, pt, 2*time.Millisecond)
	for i := range 10 {
		time.Sleep(300 * time.Millisecond)
		before := flow.sent.Load()
		s.Kill()
		time.Sleep(100 * time.Millisecond)
		s.Start()
		t.Logf("restart %d after unit %d", i+1, before)
	}
	time.Sleep(500 * time.Millisecond)
	c := flow.finish(t, "nats-server-killed-10", run)
	c.Check(t)
	if c.Errors != 0 {
		t.Errorf("%d units given up", c.Errors)
	}
	if strings.Count(run.Output(), `"message":"nats reconnected"`) < 10 {
		t.Errorf("the daemon did not reconnect 10 times:\n%s", run.Output())
	}
	if err := run.Stop(); err != nil {
		t.Errorf("run after SIGTERM: %v", err)
	}
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
		var r bus.Result
		if json.Unmarshal(m.Data, &r) == nil && r.Worker == id[1] {
			served.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	flow := startFaultFlow(t, pt, time.Millisecond)
	busWait(t, "dumps served by the worker to kill", func() bool { return served.Load() >= 50 })
	// Frozen first, so that it dies with dumps taken and unanswered (the queue group
	// keeps giving it some): killed as it is, it would seldom be in the middle of one.
	victim.Freeze()
	time.Sleep(200 * time.Millisecond)
	victim.Kill()
	time.Sleep(time.Second)
	c := flow.finish(t, "work-killed", run)
	c.Check(t)
	again := strings.Count(run.Output(), "publishing the dump again")
	t.Logf("the killed worker had served %d dumps; the daemon published %d dumps again", served.Load(), again)
	if again == 0 {
		t.Errorf("no dump was published again: the killed worker had none in hand, and the test proved nothing")
	}
	if err := run.Stop(); err != nil {
		t.Errorf("run after SIGTERM: %v", err)
	}
}
