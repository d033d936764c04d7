package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/serialio"
)

// The idle daemon: `scoreboard run` with the defaults (history and page on) on one
// pseudo-terminal, after it has answered one unit, with nothing happening. It must
// not write to its state directory, and its CPU is compared with a bare
// `nats-server -js` (BenchmarkIdle; the figures are in BENCHMARKS.md).
//
// The window is $SCOREBOARD_IDLE_WINDOW (a Go duration): 15s for the test by
// default, 60s for the benchmark.

func idleWindow(def time.Duration) time.Duration {
	if s := os.Getenv("SCOREBOARD_IDLE_WINDOW"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return def
}

// procStats is what /proc says a process (all its threads) has used so far.
type procStats struct {
	cpu        time.Duration // utime+stime
	switches   int64         // voluntary and involuntary context switches: wake-ups
	syscw      int64         // write-like system calls (sockets, pipes, files)
	writeBytes int64         // bytes the process sent to the storage layer
}

func readProcStats(t testing.TB, pid int) procStats {
	t.Helper()
	var s procStats
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command's name, which is in parentheses and may hold spaces:
	// utime and stime are the 14th and 15th of the whole line, in clock ticks (100 a
	// second on Linux).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s.cpu = time.Duration(ut+st) * 10 * time.Millisecond
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // a thread that ended
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				s.switches += n
			} else if v, ok := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				s.switches += n
			}
		}
	}
	io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(io), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscw":
			s.syscw = n
		case "write_bytes":
			s.writeBytes = n
		}
	}
	return s
}

func (s procStats) sub(o procStats) procStats {
	return procStats{s.cpu - o.cpu, s.switches - o.switches, s.syscw - o.syscw, s.writeBytes - o.writeBytes}
}

// dirState is every file under a directory with its size and modification time.
func dirState(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m[p] = fmt.Sprintf("%d %s", info.Size(), info.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func dirDiff(a, b map[string]string) []string {
	var d []string
	for p, v := range b {
		if a[p] != v {
			d = append(d, fmt.Sprintf("%s: %q -> %q", p, a[p], v))
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			d = append(d, p+": removed")
		}
	}
	return d
}

// startIdleRun starts the daemon with its defaults but the addresses (free loopback
// ports) and the state directory, has it answer one goscore unit, and waits until
// its state directory has stayed the same for two seconds: the history has stored
// the unit and the board.
func startIdleRun(t testing.TB) (*proctest.Process, string) {
	t.Helper()
	pt, err := serialio.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pt.Close() })
	state := t.TempDir()
	p := proctest.Start(t, proctest.Scoreboard(t), "run", "--state-dir", state, "--port", pt.Path, "--problem", "goscore",
		"--nats-listen", fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t)), "--http", fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t)))
	p.WaitOutput(`"message":"ready"`, 60*time.Second)
	c := samples.Cases[0]
	for _, cc := range samples.Cases {
		if cc.Problem == "goscore" {
			c = cc
			break
		}
	}
	in, want := samples.Pair(t, c)
	if _, err := pt.Master.Write(in); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(want))
	done := make(chan error, 1)
	go func() { _, err := io.ReadFull(pt.Master, buf); done <- err }()
	select {
	case err := <-done:
		if err != nil || !bytes.Equal(buf, want) {
			t.Fatalf("answer %q, %v; want %q; output:\n%s", buf, err, want, p.Output())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer; output:\n%s", p.Output())
	}
	settleDir(t, state)
	return p, state
}

// settleDir waits until dir has stayed the same for two seconds (at most a minute),
// and at least $SCOREBOARD_IDLE_SETTLE (a Go duration). nats-server writes each
// stream's state (index.db) once, 2 to 2.5 minutes after the stream last changed:
// SCOREBOARD_IDLE_SETTLE=3m lets a longer window start after that.
func settleDir(t testing.TB, dir string) {
	t.Helper()
	if d, err := time.ParseDuration(os.Getenv("SCOREBOARD_IDLE_SETTLE")); err == nil {
		time.Sleep(d)
	}
	prev := dirState(t, dir)
	for i := 0; ; i++ {
		time.Sleep(2 * time.Second)
		cur := dirState(t, dir)
		if len(dirDiff(prev, cur)) == 0 {
			return
		}
		if i == 30 {
			t.Fatalf("the state directory is still changing after a minute: %v", dirDiff(prev, cur))
		}
		prev = cur
	}
}

// The idle daemon writes nothing to disk: not a byte through write(2) to storage
// (/proc/PID/io's write_bytes), no file of its state directory changed. A window
// longer than 2 minutes needs SCOREBOARD_IDLE_SETTLE=3m (settleDir says why).
func TestIdleWritesNothing(t *testing.T) {
	p, state := startIdleRun(t)
	window := idleWindow(15 * time.Second)
	before, files := readProcStats(t, p.PID()), dirState(t, state)
	time.Sleep(window)
	used := readProcStats(t, p.PID()).sub(before)
	diff := dirDiff(files, dirState(t, state))
	t.Logf("idle %v: cpu %v, %d wake-ups, %d write calls, %d bytes written to storage, %d files changed",
		window, used.cpu, used.switches, used.syscw, used.writeBytes, len(diff))
	if used.writeBytes != 0 || len(diff) != 0 {
		t.Fatalf("idle for %v, the daemon wrote %d bytes to storage; changed in the state directory: %v", window, used.writeBytes, diff)
	}
}

// BenchmarkIdle runs the idle daemon and a bare `nats-server -js` side by side over
// one window and reports each one's CPU time, wake-ups and write calls a second, and
// the ratio of their CPU times. Run it alone, on a quiet machine:
//
//	go test -run '^$' -bench Idle -benchtime 1x ./cmd/scoreboard
func BenchmarkIdle(b *testing.B) {
	window := idleWindow(60 * time.Second)
	bare := proctest.StartNATS(b, proctest.NATSOptions{JetStream: true})
	nproc := bare.PID()
	// A third: nats-server -js holding the history's stream and bucket, as the
	// embedded server does. Any stream starts nats-server's 100 ms access-time ticker
	// (server/ats), which a bare server does not run.
	withStreams := proctest.StartNATS(b, proctest.NATSOptions{JetStream: true})
	nc, err := nats.Connect(withStreams.URL())
	if err != nil {
		b.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if _, err := history.Setup(ctx, js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: 90 * 24 * time.Hour, MaxBytes: 1 << 30}); err != nil {
		b.Fatal(err)
	}
	cancel()
	nc.Close()
	sproc := withStreams.PID()
	p, _ := startIdleRun(b)
	for b.Loop() {
		r0, n0, s0 := readProcStats(b, p.PID()), readProcStats(b, nproc), readProcStats(b, sproc)
		time.Sleep(window)
		r, n, st := readProcStats(b, p.PID()).sub(r0), readProcStats(b, nproc).sub(n0), readProcStats(b, sproc).sub(s0)
		sec := window.Seconds()
		b.ReportMetric(float64(r.cpu.Milliseconds()), "run-cpu-ms")
		b.ReportMetric(float64(n.cpu.Milliseconds()), "nats-cpu-ms")
		b.ReportMetric(float64(st.cpu.Milliseconds()), "nats+streams-cpu-ms")
		b.ReportMetric(float64(r.cpu)/float64(max(n.cpu, 10*time.Millisecond)), "ratio")
		b.ReportMetric(float64(r.cpu)/float64(max(st.cpu, 10*time.Millisecond)), "ratio-streams")
		b.ReportMetric(float64(st.switches)/sec, "nats+streams-wakeups/s")
		b.ReportMetric(float64(r.switches)/sec, "run-wakeups/s")
		b.ReportMetric(float64(n.switches)/sec, "nats-wakeups/s")
		b.ReportMetric(float64(r.syscw)/sec, "run-writes/s")
		b.ReportMetric(float64(n.syscw)/sec, "nats-writes/s")
		b.ReportMetric(float64(r.writeBytes), "run-disk-B")
		b.ReportMetric(100*r.cpu.Seconds()/sec, "run-%core")
		b.ReportMetric(float64(vmRSS(b, p.PID()))/(1<<20), "run-rss-MiB")
	}
}

// BenchmarkStartRSS measures what the embedded NATS server and the history cost a
// small machine: the time from exec to the daemon's "ready" line, and its resident
// memory once settled, idle on one pseudo-terminal, with each of them on or off (an
// external nats-server -js in their stead):
//
//	go test -run '^$' -bench StartRSS -benchtime 5x ./cmd/scoreboard
func BenchmarkStartRSS(b *testing.B) {
	for _, c := range []struct {
		name     string
		embedded bool
		history  bool
	}{{"embedded,history", true, true}, {"embedded,no-history", true, false}, {"external,history", false, true}, {"external,no-history", false, false}} {
		b.Run(c.name, func(b *testing.B) {
			var ext *proctest.NATSServer
			if !c.embedded {
				ext = proctest.StartNATS(b, proctest.NATSOptions{JetStream: true})
			}
			var ready time.Duration
			var rss int64
			for b.Loop() {
				pt, err := serialio.OpenPTY()
				if err != nil {
					b.Fatal(err)
				}
				state := b.TempDir()
				args := []string{"run", "--state-dir", state, "--port", pt.Path, "--problem", "goscore",
					"--http", fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(b)), fmt.Sprintf("--history=%v", c.history)}
				if c.embedded {
					args = append(args, "--nats-listen", fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(b)))
				} else {
					args = append(args, "--nats-url", ext.URL())
				}
				start := time.Now()
				p := proctest.Start(b, proctest.Scoreboard(b), args...)
				p.WaitOutput(`"message":"ready"`, 60*time.Second)
				ready += time.Since(start)
				settleDir(b, state)
				rss += vmRSS(b, p.PID())
				if err := p.Stop(); err != nil {
					b.Fatalf("stop: %v\n%s", err, p.Output())
				}
				pt.Close()
			}
			b.ReportMetric(float64(ready.Milliseconds())/float64(b.N), "ms-to-ready")
			b.ReportMetric(float64(rss)/float64(b.N)/(1<<20), "rss-MiB")
		})
	}
}

// vmRSS is a process's resident set size in bytes.
func vmRSS(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
