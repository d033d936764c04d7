package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// soakUnits is how many units the soak sends: SCOREBOARD_SOAK_UNITS, 50,000 by
// default so CI (under -race) stays short; the figure is 1,000,000.
func soakUnits(t *testing.T) int {
	if s := os.Getenv("SCOREBOARD_SOAK_UNITS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			t.Fatalf("SCOREBOARD_SOAK_UNITS=%q: want a number of units, 1000 or more", s)
		}
		return n
	}
	return 50000
}

// soakBlock is 1000 goscore boards, each answered differently, with garbage between
// them (a line of junk after every tenth, an overlong line after every hundredth),
// and their answers.
func soakBlock() (in, out []byte) {
	var b, a bytes.Buffer
	for k := range 1000 {
		u, ans := faulttest.GoscoreBoard(k)
		b.WriteString(u)
		a.WriteString(ans)
		if k%10 == 9 {
			b.WriteString("#junk \x00\xff\xfe 5 3\r\n")
		}
		if k%100 == 99 {
			b.WriteString(strings.Repeat("@ ", 200) + "\n")
		}
	}
	return b.Bytes(), a.Bytes()
}

// soakReader repeats the block; once a tenth of the blocks are out, the daemon is
// warm and it samples the process's RSS.
type soakReader struct {
	block  []byte
	blocks int // left to send, this one included
	sent   int
	off    int
	warm   func()
	// every, when set, paces the blocks: block k is not sent before start+k*every.
	every time.Duration
	start time.Time
}

func (r *soakReader) Read(p []byte) (int, error) {
	if r.off == len(r.block) {
		if r.blocks--; r.blocks <= 0 {
			return 0, io.EOF
		}
		r.off = 0
		if r.every > 0 {
			time.Sleep(time.Until(r.start.Add(time.Duration(r.sent+1) * r.every)))
		}
		if r.sent++; r.warm != nil && r.sent >= (r.sent+r.blocks)/10 {
			r.warm()
			r.warm = nil
		}
	}
	n := copy(p, r.block[r.off:])
	r.off += n
	return n, nil
}

// soakChecker compares what the daemon writes with the block's answers, over and over.
type soakChecker struct {
	want    []byte
	off     int
	written int64
	bad     int64 // bytes that differ
}

func (c *soakChecker) Write(p []byte) (int, error) {
	for _, b := range p {
		if b != c.want[c.off] {
			c.bad++
		}
		if c.off++; c.off == len(c.want) {
			c.off = 0
		}
	}
	c.written += int64(len(p))
	return len(p), nil
}

var signalStarted = func() chan os.Signal {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP)
	return c
}()

// rssKiB is the process's resident set size, from /proc/self/status.
func rssKiB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// The soak: units with garbage mixed in through `run --port -`, in-process, every
// unit through the embedded NATS, a worker and the display writer. It reports
// units/s, the RSS at the start, once warm and at the end (flat: within 64 MiB of the
// warm figure), and the goroutines before and after (no leak). The history is off
// here; TestSoakStdioHistory runs it on.
func TestSoakStdio(t *testing.T) {
	soak(t, 0, 0, "--history=false")
}

// The soak with the history on, at 2,500 units/s (a club's flood: some 170 times
// what a 115200-baud port sends): every unit and result also stored by the embedded
// server's JetStream in a state dir of the test's, each port's latest in the bucket.
// Its memory is bounded as well (the stream's deduplication ids live for its
// window, its file store's caches for seconds, the process's heap is held under
// the soft limit run sets: with GOGC 400 the heap grows to that limit over a live
// heap of some 30 MB, so what is bounded is the memory the Go runtime holds, at most
// the limit and a margin (the RSS under -race is the race detector's several times
// that), rather than the RSS within a margin of an early sample), and after the
// clean stop the stream holds every unit,
// every answer and every error exactly once. Unpaced, the units come faster than a
// busy disk stores them: the stream's queue, and the RSS, then grow with the backlog
// (up to the server's ingest limits), which is not what this test is about.
func TestSoakStdioHistory(t *testing.T) {
	dir := t.TempDir()
	units := soak(t, 1000*time.Second/2500, 128<<20+32<<20, "--state-dir", dir)
	nc := bustest.Start(t, bustest.Options{Off: true, StoreDir: dir}).Daemon()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	st, err := js.Stream(t.Context(), s.Stream())
	if err != nil {
		t.Fatal(err)
	}
	dumps, results := historyCount(js, s.AllDumps()), historyCount(js, s.AllResults())
	t.Logf("soak history: units=%d stream_msgs=%d dumps=%d results=%d bytes=%d", units, st.CachedInfo().State.Msgs, dumps, results, st.CachedInfo().State.Bytes)
	// Every tenth unit is followed by a junk line: an error result without a dump.
	if dumps != uint64(units) || results != uint64(units+units/10) {
		t.Errorf("the stream holds %d dumps and %d results of %d units (and %d junk lines), want each once", dumps, results, units, units/10)
	}
}

// soak runs the soak with run's extra args, a block of 1000 units every every (as
// fast as it goes when 0), checks it, and returns how many units it sent. The RSS at
// the end must be within 64 MiB of the warm figure; when maxHeld is set, the memory
// the Go runtime holds (not released to the system) must be at most maxHeld bytes.
func soak(t *testing.T, every time.Duration, maxHeld uint64, args ...string) int {
	n := soakUnits(t)
	block, answers := soakBlock()
	// run's SIGHUP handler starts os/signal's goroutine, once for the process: started
	// here, it is not counted as run's.
	signal.Stop(signalStarted)
	gBefore := runtime.NumGoroutine()
	rssStart := rssKiB(t)
	var rssWarm int
	r := &soakReader{block: block, blocks: n / 1000, warm: func() { rssWarm = rssKiB(t) }, every: every, start: time.Now()}
	c := &soakChecker{want: answers}
	var stderr proctest.Buffer
	start := time.Now()
	code := runMain(context.Background(), append([]string{"run", "--nats-listen", "off", "--http", "off", "--log-level", "error",
		"--port", "-", "--problem", "goscore"}, args...), stdio{r, c, &stderr})
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	held := ms.Sys - ms.HeapReleased
	runtime.GC()
	rssEnd := rssKiB(t)
	// The connections' goroutines end shortly after Close.
	var gAfter int
	for deadline := time.Now().Add(faultPatience); ; time.Sleep(20 * time.Millisecond) {
		if gAfter = runtime.NumGoroutine(); gAfter <= gBefore || time.Now().After(deadline) {
			break
		}
	}
	units := (n / 1000) * 1000
	t.Logf("soak: units=%d garbage_lines=%d elapsed=%v units/s=%.0f rss_start=%dKiB rss_warm=%dKiB rss_end=%dKiB go_held=%dKiB goroutines_before=%d goroutines_after=%d",
		units, units/10+units/100, elapsed.Round(time.Millisecond), float64(units)/elapsed.Seconds(),
		rssStart, rssWarm, rssEnd, held>>10, gBefore, gAfter)
	if want := int64(units/1000) * int64(len(answers)); c.written != want || c.bad != 0 {
		t.Errorf("%d bytes of answers (%d wrong), want %d", c.written, c.bad, want)
	}
	switch {
	case maxHeld > 0 && held > maxHeld:
		t.Errorf("the Go runtime holds %d KiB, over %d KiB (RSS %d KiB warm, %d KiB at the end)", held>>10, maxHeld>>10, rssWarm, rssEnd)
	case maxHeld == 0 && rssEnd > rssWarm+64<<10:
		t.Errorf("RSS grew from %d KiB (warm) to %d KiB", rssWarm, rssEnd)
	}
	if gAfter > gBefore {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", gBefore, gAfter, buf[:runtime.Stack(buf, true)])
	}
	return units
}
