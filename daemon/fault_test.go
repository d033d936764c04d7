package daemon_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/promtest"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/worker"
)

// slowWorker joins the workers' queue group on the dumps and answers each after a
// delay, as a worker on an overloaded machine would. It returns how many it served.
func slowWorker(t *testing.T, nc *nats.Conn, delay func(seq int) time.Duration) *atomic.Int64 {
	t.Helper()
	return fakeWorker(t, nc, delay, true)
}

// fakeWorker is slowWorker: it publishes each result and answers on the dump's
// reply subject, as a worker does. Without echoOrigin its results have no origin and
// no unit digest, as those of a worker older than them.
func fakeWorker(t *testing.T, nc *nats.Conn, delay func(seq int) time.Duration, echoOrigin bool) *atomic.Int64 {
	t.Helper()
	var served atomic.Int64
	sub, err := nc.QueueSubscribe(bus.Subjects{Prefix: bus.DefaultPrefix}.AllDumps(), bus.QueueGroup, func(m *nats.Msg) {
		seq, _ := strconv.Atoi(m.Header.Get(bus.HeaderSeq))
		go func() {
			time.Sleep(delay(seq))
			p, _ := engine.Lookup("goscore")
			out, err := p.Append(nil, m.Data)
			port := m.Header.Get(bus.HeaderPort)
			res := result.Record{Problem: "goscore", Port: port, Seq: uint64(seq), Answer: string(out), Worker: "slow"}
			if echoOrigin {
				res.Origin = m.Header.Get(bus.HeaderOrigin)
				res.UnitDigest = bus.UnitDigest(m.Data)
			}
			if err != nil {
				res.Answer, res.Error = "", err.Error()
			}
			data, _ := json.Marshal(res)
			served.Add(1)
			_ = nc.Publish(bus.Subjects{Prefix: bus.DefaultPrefix}.Result("goscore", port), data)
			if m.Reply != "" {
				_ = m.Respond(data)
			}
		}()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return &served
}

// Two workers, one slowed down: the answers still come in order, each once.
func TestSlowWorkerKeepsOrder(t *testing.T) {
	bb, nc := startBus(t, true)
	// The slow worker holds the early units longest, so they finish last.
	served := slowWorker(t, bb.Daemon(), func(seq int) time.Duration {
		return time.Duration(40-seq) * 2 * time.Millisecond
	})
	pt := newPTY(t)
	d := startDaemon(t, nc, daemon.Config{Ports: []daemon.PortConfig{{Device: pt.Path, Problem: "goscore"}}})
	waitOpened(t, pt)
	var in, want strings.Builder
	for i := range 40 {
		b := board(i)
		in.WriteString(b)
		want.WriteString(goscoreAnswer(t, b))
	}
	if _, err := pt.Master.Write([]byte(in.String())); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, pt.Master, want.Len()); string(got) != want.String() {
		t.Fatalf("answers\n got %q\nwant %q", got, want.String())
	}
	if served.Load() == 0 {
		t.Fatal("the slow worker served no unit: the test proved nothing")
	}
	d.stop(t)
	// Nothing more came after the last answer: nothing was answered twice.
	pt.Master.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, _ := pt.Master.Read(make([]byte, 100)); n > 0 {
		t.Fatalf("%d bytes more after every answer", n)
	}
}

// A unit no worker answers ends as an error result after its attempts, and does not
// hold back the units after it, which a worker started meanwhile answers.
func TestNoWorkerGivesUp(t *testing.T) {
	bb, nc := startBus(t, false)
	res := results(t, nc)
	pt := newPTY(t)
	met := metrics.New()
	scrape := httptest.NewServer(met.Handler())
	t.Cleanup(scrape.Close)
	d := startDaemon(t, nc, daemon.Config{
		Ports:          []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", Name: "lonely", ErrorLine: true}},
		RequestTimeout: 50 * time.Millisecond,
		Attempts:       2,
		Metrics:        met,
	})
	waitOpened(t, pt)
	if _, err := pt.Master.Write([]byte(board(1))); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-res:
		if r.Seq != 1 || r.Worker != "daemon" || !strings.Contains(r.Error, "no worker answered") {
			t.Fatalf("result %+v, want the daemon's error for seq 1", r)
		}
	case <-time.After(long):
		t.Fatalf("no error result; logs:\n%s", d.logs.String())
	}
	line := readN(t, pt.Master, len("error: no worker answered"))
	if string(line) != "error: no worker answered" {
		t.Fatalf("port got %q, want the error line", line)
	}
	// Two attempts: one retry, then the unit given up as an error (/metrics). The
	// outcome is counted once the line is handed to the device's writer: it may
	// trail the line a little.
	var retries, errs float64
	bustest.Wait(t, "the unit given up counted in /metrics", func() (bool, string) {
		fams, _ := promtest.Scrape(t, scrape.URL)
		retries, _ = promtest.Value(fams, "scoreboard_retries_total", map[string]string{"port": "lonely"})
		errs, _ = promtest.Value(fams, "scoreboard_units_total", map[string]string{"port": "lonely", "problem": "goscore", "outcome": "error"})
		return errs >= 1, fmt.Sprintf("scoreboard_retries_total %v, units_total{outcome=error} %v", retries, errs)
	})
	if retries != 1 || errs != 1 {
		t.Errorf("scoreboard_retries_total %v, units_total{outcome=error} %v; want 1 and 1", retries, errs)
	}

	bb.Workers(worker.Options{Version: "0.0.0-test"})
	b := board(2)
	if _, err := pt.Master.Write([]byte(b)); err != nil {
		t.Fatal(err)
	}
	// The rest of the error line, then the answer.
	rest := readN(t, pt.Master, len(" within 50ms (2 attempts)\n"))
	want := goscoreAnswer(t, b)
	if got := readN(t, pt.Master, len(want)); string(got) != want {
		t.Fatalf("after %q: answer %q, want %q", rest, got, want)
	}
	d.stop(t)
}

// Unplug and replug: the pseudo-terminal behind a stable path is closed between
// units and in the middle of one, and a new one is linked at the same path. The
// daemon reopens the path and answers what comes next; the half unit is dropped.
func TestUnplugReplug(t *testing.T) {
	_, nc := startBus(t, true)
	link := filepath.Join(t.TempDir(), "usb-scoreboard")
	// The daemon starts before the device is there, as at boot.
	d := startDaemon(t, nc, daemon.Config{
		Ports:     []daemon.PortConfig{{Device: link, Problem: "goscore"}},
		ReopenMin: 5 * time.Millisecond, ReopenMax: 20 * time.Millisecond,
	})
	d.logs.wait(t, 1, map[string]any{"message": "port not available"})
	master := plug(t, link).Master
	send := func(m *os.File, k int) {
		t.Helper()
		b := board(k)
		if _, err := m.Write([]byte(b)); err != nil {
			t.Fatal(err)
		}
		want := goscoreAnswer(t, b)
		if got := readN(t, m, len(want)); string(got) != want {
			t.Fatalf("answer %q, want %q", got, want)
		}
	}
	send(master, 1)

	// Unplugged between units.
	unplug(t, link, master)
	d.logs.wait(t, 1, map[string]any{"message": "port lost"})
	master = plug(t, link).Master
	d.logs.wait(t, 1, map[string]any{"message": "port reopened"})
	send(master, 2)

	// Unplugged in the middle of a unit: its first rows are dropped with a warning.
	half := strings.Join(strings.SplitAfter(board(3), "\n")[:10], "")
	if _, err := master.Write([]byte(half + " + + +")); err != nil {
		t.Fatal(err)
	}
	// Wait until the daemon has read the half unit's lines: closing the master hangs
	// up the device and loses what it has not read, and the test would prove nothing.
	d.logs.wait(t, 1, map[string]any{"message": "line read", "line": float64(30)})
	unplug(t, link, master)
	d.logs.wait(t, 1, map[string]any{"message": "partial unit dropped: the port was lost in the middle of it", "lines": float64(10)})
	master = plug(t, link).Master
	send(master, 4)
	d.stop(t)
	if n := d.logs.count(map[string]any{"message": "port reopened"}); n != 2 {
		t.Fatalf("%d reopenings, want 2", n)
	}
}

// A device that never reads its answers: the daemon holds them, keeps serving another
// port, and stops cleanly, giving the deaf port's answers up.
func TestDeviceNeverReads(t *testing.T) {
	_, nc := startBus(t, true)
	deaf, good := newPTY(t), newPTY(t)
	d := startDaemon(t, nc, daemon.Config{
		Ports: []daemon.PortConfig{
			{Device: deaf.Path, Problem: "goscore", Name: "deaf", ErrorLine: true},
			{Device: good.Path, Problem: "goscore", Name: "good"},
		},
		WriteTimeout: 20 * time.Millisecond,
		WriteQueue:   4,
		Drain:        time.Second,
	})
	waitOpened(t, deaf)
	waitOpened(t, good)

	// Enough error lines to fill the pseudo-terminal's buffer many times over (a
	// board cut short by the next one's spacer each); nobody reads them.
	go deaf.Master.Write([]byte(strings.Repeat("\n + +\n", 5000)))
	d.logs.wait(t, 1, map[string]any{"port": "deaf", "message": "the device is not reading; holding its answers"})

	for k := range 20 {
		b := board(k)
		if _, err := good.Master.Write([]byte(b)); err != nil {
			t.Fatal(err)
		}
		want := goscoreAnswer(t, b)
		if got := readN(t, good.Master, len(want)); string(got) != want {
			t.Fatalf("good port: answer %q, want %q", got, want)
		}
	}
	d.stop(t)
	// Stopping, the deaf port's answers are given up, so it did not hold the stop.
	if d.logs.count(map[string]any{"port": "deaf", "message": "the device is not reading; answer dropped"}) == 0 {
		t.Errorf("no answers dropped at the stop; logs:\n%s", d.logs.String())
	}
}

// Told to stop, the daemon stops reading and lets the units in flight be answered,
// within its drain bound; those still unanswered then end as error results.
func TestStopDrains(t *testing.T) {
	for _, c := range []struct {
		name     string
		answered bool // the worker answers once the stop has begun; else never
		drain    time.Duration
	}{
		{"answered", true, long},
		{"bounded", false, 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			bb, nc := startBus(t, false)
			res := results(t, nc)
			stopWorker, release := make(chan struct{}), make(chan struct{})
			defer close(stopWorker)
			slowWorker(t, bb.Daemon(), func(int) time.Duration {
				select {
				case <-release:
				case <-stopWorker:
				}
				return 0
			})
			pt := newPTY(t)
			d := startDaemon(t, nc, daemon.Config{
				Ports:          []daemon.PortConfig{{Device: pt.Path, Problem: "goscore"}},
				RequestTimeout: time.Hour, // no retries: only the drain bound ends the wait
				Drain:          c.drain,
			})
			waitOpened(t, pt)
			var in, want strings.Builder
			for k := range 3 {
				b := board(k)
				in.WriteString(b)
				want.WriteString(goscoreAnswer(t, b))
			}
			if _, err := pt.Master.Write([]byte(in.String())); err != nil {
				t.Fatal(err)
			}
			d.logs.wait(t, 1, map[string]any{"message": "unit read", "seq": float64(3)})
			if c.answered {
				go func() {
					d.logs.wait(t, 1, map[string]any{"message": "stopping: answering the units read"})
					close(release)
				}()
				var got collector
				done := make(chan struct{})
				go got.read(pt.Master, done)
				d.stop(t)
				// The answers may still be in the pseudo-terminal when the stop
				// returns: closing it before they are read would drop them (this
				// failed about 1 run in 24).
				bustest.Wait(t, "the answers read from the port", func() (bool, string) {
					return len(got.String()) >= want.Len(), fmt.Sprintf("%d of %d bytes: %q", len(got.String()), want.Len(), got.String())
				})
				pt.Close()
				<-done
				if got.String() != want.String() {
					t.Fatalf("answers %q, want %q", got.String(), want.String())
				}
				return
			}
			d.stop(t)
			for range 3 {
				select {
				case r := <-res:
					if r.Worker != "daemon" || !strings.Contains(r.Error, "drain") {
						t.Fatalf("result %+v, want the daemon's error", r)
					}
				case <-time.After(long):
					t.Fatal("no error result for a unit cut off by the drain bound")
				}
			}
		})
	}
}

// Two daemons on one bus whose ports have the same name publish dumps on one subject:
// each still answers only its own units, with its own answers, taken from its own
// inbox.
func TestPortNameUsedTwice(t *testing.T) {
	bb, nc := startBus(t, true)
	other := bb.Daemon()
	ptA, ptB := newPTY(t), newPTY(t)
	a := startDaemon(t, nc, daemon.Config{Ports: []daemon.PortConfig{{Device: ptA.Path, Problem: "goscore", Name: "hall"}}})
	b := startDaemon(t, other, daemon.Config{Ports: []daemon.PortConfig{{Device: ptB.Path, Problem: "goscore", Name: "hall"}}})
	waitOpened(t, ptA)
	waitOpened(t, ptB)
	// The same sequence numbers on both, with different boards.
	var inA, inB, wantA, wantB strings.Builder
	for k := range 30 {
		inA.WriteString(board(k))
		wantA.WriteString(goscoreAnswer(t, board(k)))
		inB.WriteString(board(k + 7))
		wantB.WriteString(goscoreAnswer(t, board(k+7)))
	}
	if _, err := ptA.Master.Write([]byte(inA.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := ptB.Master.Write([]byte(inB.String())); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, ptA.Master, wantA.Len()); string(got) != wantA.String() {
		t.Errorf("port A got %q, want %q", got, wantA.String())
	}
	if got := readN(t, ptB.Master, wantB.Len()); string(got) != wantB.String() {
		t.Errorf("port B got %q, want %q", got, wantB.String())
	}
	a.stop(t)
	b.stop(t)
}

// A worker older than origins and digests answers without them: its answers could be
// anyone's, so the display refuses and counts each, and the units end as errors;
// nothing it says reaches the port.
func TestWorkerWithoutOriginRefused(t *testing.T) {
	bb, nc := startBus(t, false)
	served := fakeWorker(t, bb.Daemon(), func(int) time.Duration { return 0 }, false)
	pt := newPTY(t)
	mon := daemon.NewMonitor()
	d := startDaemon(t, nc, daemon.Config{
		Ports:          []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", ErrorLine: true}},
		RequestTimeout: 200 * time.Millisecond, Attempts: 2, Monitor: mon,
	})
	waitOpened(t, pt)
	const units = 5
	for k := range units {
		if _, err := pt.Master.Write([]byte(board(k))); err != nil {
			t.Fatal(err)
		}
	}
	got := string(readN(t, pt.Master, units*len("error: no worker answered within 200ms (2 attempts)\n")))
	if n := strings.Count(got, "error: no worker answered"); n != units {
		t.Errorf("port got %q; want %d error lines and no answer", got, units)
	}
	// Replies still on their way when the test looks are not counted yet.
	if r := mon.Refused(); r == 0 || r > uint64(served.Load()) {
		t.Errorf("%d answers refused, the worker sent %d; want them refused", r, served.Load())
	}
	d.stop(t)
}
