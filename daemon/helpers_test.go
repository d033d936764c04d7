package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/serialio"
	"github.com/goclub/scoreboard/worker"
)

// long is how long a test waits for something that should happen in milliseconds,
// generous for a loaded machine running -race: .ci/run's load stage runs the fault
// tests with twice as many busy loops as cores, on a machine that other builds
// share. Still well short of `go test`'s 10 minutes, so that the test fails with its
// counts.
const long = bustest.Long

// sample returns a seed sample file, such as "goscore.in".
func sample(t testing.TB, name string) []byte {
	t.Helper()
	return samples.Read(t, name)
}

// logs collects a daemon's JSON log lines, and lets a test wait for one.
type logs struct {
	mu    sync.Mutex
	lines []map[string]any
	raw   bytes.Buffer
	added chan struct{}
	level zerolog.Level
}

func newLogs(level zerolog.Level) *logs { return &logs{added: make(chan struct{}), level: level} }

func (l *logs) Write(p []byte) (int, error) {
	var m map[string]any
	_ = json.Unmarshal(p, &m)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.raw.Write(p)
	l.lines = append(l.lines, m)
	close(l.added)
	l.added = make(chan struct{})
	return len(p), nil
}

func (l *logs) logger() zerolog.Logger { return zerolog.New(l).Level(l.level) }

// count returns how many lines have every given field.
func (l *logs) count(fields map[string]any) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.lines {
		ok := true
		for k, v := range fields {
			if m[k] != v {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// wait waits until at least n lines have the given fields.
func (l *logs) wait(t testing.TB, n int, fields map[string]any) {
	t.Helper()
	deadline := time.After(long)
	for {
		l.mu.Lock()
		added := l.added
		l.mu.Unlock()
		if l.count(fields) >= n {
			return
		}
		select {
		case <-added:
		case <-deadline:
			t.Fatalf("no %d log lines with %v; logs:\n%s", n, fields, l.String())
		}
	}
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.raw.String()
}

// startBus starts an embedded bus with its listener off and connects to it as the
// daemon does. With workers, the scoreboard's workers run on a connection of their
// own.
func startBus(t testing.TB, workers bool) (*bustest.Bus, *nats.Conn) {
	t.Helper()
	b := bustest.Start(t, bustest.Options{Off: true})
	if workers {
		b.Workers(worker.Options{Version: "0.0.0-test"})
	}
	return b, b.Daemon()
}

// daemonRun is a daemon running in the background of a test.
type daemonRun struct {
	cancel context.CancelFunc
	done   chan error
	logs   *logs
}

func startDaemon(t testing.TB, nc *nats.Conn, cfg daemon.Config) *daemonRun {
	t.Helper()
	return startDaemonLogging(t, nc, cfg, zerolog.TraceLevel)
}

// startDaemonLogging starts a daemon that logs from level on: benchmarks keep the
// per-line and per-unit lines out of what they measure.
func startDaemonLogging(t testing.TB, nc *nats.Conn, cfg daemon.Config, level zerolog.Level) *daemonRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemonRun{cancel: cancel, done: make(chan error, 1), logs: newLogs(level)}
	go func() { d.done <- daemon.Run(ctx, nc, cfg, d.logs.logger()) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-d.done:
		case <-time.After(long):
			t.Errorf("the daemon did not stop")
		}
	})
	return d
}

// stop stops the daemon and waits for it, failing the test if it takes too long.
func (d *daemonRun) stop(t testing.TB) {
	t.Helper()
	d.cancel()
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("daemon: %v", err)
		}
		d.done <- nil // for the cleanup
	case <-time.After(long):
		t.Fatalf("the daemon did not stop; logs:\n%s", d.logs.String())
	}
}

// newPTY opens a pseudo-terminal pair and returns it; its master is closed at the end
// of the test.
func newPTY(t testing.TB) *serialio.PTY {
	t.Helper()
	pt, err := serialio.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pt.Close() })
	return pt
}

// plug plugs a new device in behind link, as udev links /dev/serial/by-id/... to a
// device that appears, and waits until the daemon has opened it.
func plug(t testing.TB, link string) *serialio.PTY {
	t.Helper()
	pt := newPTY(t)
	tmp := link + ".new"
	if err := os.Symlink(pt.Path, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
	waitOpened(t, pt)
	return pt
}

// unplug takes away the device behind link as udev does: the link first, then the
// device. A link left pointing at a closed pseudo-terminal would let the daemon, as it
// tries to reopen it, open whatever pseudo-terminal takes that number next: another
// test's, perhaps in another test binary running at the same time.
func unplug(t testing.TB, link string, master io.Closer) {
	t.Helper()
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	master.Close()
}

func waitOpened(t testing.TB, pt *serialio.PTY) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	if err := pt.WaitOpened(ctx); err != nil {
		t.Fatal(err)
	}
}

// readN reads exactly n bytes from r, failing after a long wait.
func readN(t testing.TB, r io.Reader, n int) []byte {
	t.Helper()
	buf := make([]byte, n)
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(r, buf)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("read %d bytes: %v (got %q)", n, err, buf)
		}
	case <-time.After(long):
		t.Fatalf("no %d bytes of answers in %v", n, long)
	}
	return buf
}

// board makes a 19x19 goscore unit (spacer line included), different for each k:
// k black stones along the top row, k%7 white ones along the bottom row.
func board(k int) string {
	var b strings.Builder
	b.WriteString("\n")
	for r := 0; r < 19; r++ {
		for c := 0; c < 19; c++ {
			switch {
			case r == 0 && c < k%19:
				b.WriteString(" @")
			case r == 18 && c < k%7:
				b.WriteString(" O")
			default:
				b.WriteString(" +")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// goscoreAnswer solves a goscore unit in-process, for the expected output.
func goscoreAnswer(t testing.TB, unit string) string {
	t.Helper()
	p, ok := engine.Lookup("goscore")
	if !ok {
		t.Fatal("goscore is not registered")
	}
	out, err := p.Append(nil, []byte(unit))
	if err != nil {
		t.Fatalf("goscore %q: %v", unit, err)
	}
	return string(out)
}

// results subscribes to every result of the bus and returns them as they come.
func results(t testing.TB, nc *nats.Conn) <-chan result.Record {
	t.Helper()
	ch := make(chan result.Record, 10000)
	sub, err := nc.Subscribe(bus.Subjects{Prefix: bus.DefaultPrefix}.AllResults(), func(m *nats.Msg) {
		var r result.Record
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Errorf("result %q: %v", m.Data, err)
			return
		}
		ch <- r
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return ch
}
