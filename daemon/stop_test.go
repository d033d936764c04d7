package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/promtest"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/result"
)

// Stopped while units wait between the reader and the display writer (the in-flight
// bound is reached, the workers are slow), the daemon still takes every unit read:
// each one is answered within the drain bound or gets its error line and its error
// result with the outcome "stopped", and the display writer's count of units read
// is what the port got.
func TestStopTakesEveryUnitRead(t *testing.T) {
	bb, nc := startBus(t, false)
	res := results(t, nc)
	// Units 3 to 10 are held until the stop, so that the units pile up behind them;
	// those after 10, until the test ends: they end as errors at the drain bound.
	release, never := make(chan struct{}), make(chan struct{})
	defer close(never)
	slowWorker(t, bb.Daemon(), func(seq int) time.Duration {
		switch {
		case seq > 10:
			<-never
		case seq > 2:
			<-release
		}
		return 0
	})
	pt := newPTY(t)
	met := metrics.New()
	scrape := httptest.NewServer(met.Handler())
	defer scrape.Close()
	d := startDaemon(t, nc, daemon.Config{
		Ports:          []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", ErrorLine: true}},
		Metrics:        met,
		MaxInFlight:    4,
		RequestTimeout: time.Hour,
		Drain:          3 * time.Second, // units 3 to 10 are answered within it, even on a loaded machine
	})
	waitOpened(t, pt)
	const units = 40
	go func() {
		for k := range units {
			u, _ := faulttest.GoscoreBoard(k)
			if _, err := pt.Master.Write([]byte(u)); err != nil {
				return
			}
		}
	}()
	// 4 units taken, 16 waiting in the channel, one more in the reader's hands.
	d.logs.wait(t, 1, map[string]any{"message": "line read", "line": float64(21 * 20)})
	var c collector
	done := make(chan struct{})
	go c.read(pt.Master, done)
	close(release)
	d.stop(t)
	pt.Close()
	<-done
	stopped := map[string]any{"message": "display writer stopped"}
	if d.logs.count(stopped) != 1 {
		t.Fatalf("no count of the units read; logs:\n%s", d.logs.String())
	}
	var read, answered, errs float64
	d.logs.mu.Lock()
	for _, l := range d.logs.lines {
		if l["message"] == "display writer stopped" {
			// Units the drain bound ended are counted apart from the errors.
			read, answered, errs = l["units"].(float64), l["answered"].(float64), l["stopped"].(float64)
		}
	}
	d.logs.mu.Unlock()
	got := c.String()
	var a, e int
	rest := got
	for k := range int(read) {
		_, want := faulttest.GoscoreBoard(k)
		switch {
		case strings.HasPrefix(rest, want):
			a++
			rest = rest[len(want):]
		case strings.HasPrefix(rest, faulttest.ErrorPrefix+"daemon stopping"):
			e++
			_, rest, _ = strings.Cut(rest, "\n")
		default:
			t.Fatalf("unit %d: the port got %q", k+1, rest)
		}
	}
	t.Logf("counts: scenario=stop-with-units-waiting read=%d answered=%d stopped=%d vanished=%d", int(read), a, e, int(read)-a-e)
	if read < 21 || a+e != int(read) || float64(a) != answered || float64(e) != errs || rest != "" || a != 10 {
		t.Fatalf("%v units read, %v answered, %v errors logged; the port got %d answers, %d error lines, then %q", read, answered, errs, a, e, rest)
	}
	// /metrics counts them apart from the errors.
	fams, _ := promtest.Scrape(t, scrape.URL)
	labels := map[string]string{"port": daemon.DefaultName(pt.Path), "problem": "goscore", "outcome": "stopped"}
	if n, _ := promtest.Value(fams, "scoreboard_units_total", labels); n != float64(e) {
		t.Errorf("scoreboard_units_total%v %v, want %d", labels, n, e)
	}
	labels["outcome"] = "error"
	if n, _ := promtest.Value(fams, "scoreboard_units_total", labels); n != 0 {
		t.Errorf("scoreboard_units_total%v %v, want 0", labels, n)
	}
	// Each error line has its error result on the bus, which the history keeps.
	for range e {
		select {
		case r := <-res:
			for r.Error == "" {
				r = <-res
			}
			if !strings.Contains(r.Error, "drain") || r.Outcome != result.OutcomeStopped {
				t.Fatalf("error result %+v", r)
			}
		case <-time.After(long):
			t.Fatal("an error result is missing")
		}
	}
}

// Stopped while its stdin (a pipe it cannot interrupt) is blocked in a read, with
// nothing in flight, the daemon does not wait out its drain bound for the reader.
func TestStopStdinBlocked(t *testing.T) {
	_, nc := startBus(t, true)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	d := startDaemon(t, nc, daemon.Config{
		Ports: []daemon.PortConfig{{Device: "-", Problem: "goscore"}},
		Stdin: inR, Stdout: outW,
		Drain: time.Hour, // waited out, the test would fail
	})
	u, a := faulttest.GoscoreBoard(3)
	go inW.Write([]byte(u))
	if got := readN(t, outR, len(a)); string(got) != a {
		t.Fatalf("answer %q, want %q", got, a)
	}
	d.stop(t)
	d.logs.wait(t, 1, map[string]any{"message": "display writer stopped", "units": float64(1), "answered": float64(1)})
}

// A reload that restarts a changed port drains it as a stop does: its reader stops,
// the units it read (90 of them held by a slow worker as the reload comes) are all
// answered and written, in order, before the port's new actors open the device
// again; the new ones then answer what comes next. No unit is stopped, none gets an
// error line, none vanishes.
func TestFaultReloadDrainsRestartedPort(t *testing.T) {
	bb, nc := startBus(t, false)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	slowWorker(t, bb.Daemon(), func(seq int) time.Duration {
		if seq > 10 {
			<-release
		}
		return 0
	})
	pt := newPTY(t)
	cfg := daemon.Config{
		Ports:          []daemon.PortConfig{{Name: "hall", Device: pt.Path, Problem: "goscore"}},
		RequestTimeout: time.Hour,
	}
	reloads := make(chan daemon.Config, 1)
	logs := newLogs(zerolog.DebugLevel)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.RunReloading(ctx, nc, cfg, reloads, logs.logger()) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(long):
			t.Error("the daemon did not stop")
		}
	}()
	waitOpened(t, pt)
	// The master reads on across the restart: while no slave is open its reads fail
	// (EIO), and they read again once the new actors open it.
	var c collector
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := pt.Master.Read(b)
			c.Write(b[:n])
			if err != nil {
				select {
				case <-quit:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}
	}()
	var want strings.Builder
	write := func(from, to int) {
		for k := from; k < to; k++ {
			u, a := faulttest.GoscoreBoard(k)
			want.WriteString(a)
			if _, err := pt.Master.Write([]byte(u)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, 100)
	logs.wait(t, 100, map[string]any{"message": "unit read"})
	// The port changed: it writes error lines now. Restarted, its units in flight
	// are answered once the worker lets them go.
	next := cfg
	next.Ports = []daemon.PortConfig{cfg.Ports[0]}
	next.Ports[0].ErrorLine = true
	reloads <- next
	logs.wait(t, 1, map[string]any{"message": "stopping: answering the units read"})
	free()
	logs.wait(t, 1, map[string]any{"message": "display writer stopped"})
	logs.wait(t, 2, map[string]any{"message": "port opened"})
	write(100, 110)
	bustest.WaitWithin(t, 20*time.Second, "110 answers", func() (bool, string) {
		n := strings.Count(c.String(), "\n")
		return n >= 110, fmt.Sprintf("%d answers; logs:\n%s", n, logs.String())
	})
	logs.mu.Lock()
	var first map[string]any
	for _, l := range logs.lines {
		if l["message"] == "display writer stopped" {
			first = l
			break
		}
	}
	logs.mu.Unlock()
	t.Logf("counts: scenario=reload-restarts-port read=%v answered=%v stopped=%v errors=%v then=%d",
		first["units"], first["answered"], first["stopped"], first["errors"], strings.Count(c.String(), "\n")-100)
	if first["units"] != float64(100) || first["answered"] != float64(100) || first["stopped"] != float64(0) {
		t.Errorf("the restarted port's first actors: %v; want 100 units read, 100 answered", first)
	}
	if got := c.String(); got != want.String() {
		t.Errorf("the port got %q, want %q", got, want.String())
	}
}
