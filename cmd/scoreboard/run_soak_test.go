package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/faulttest"
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
}

func (r *soakReader) Read(p []byte) (int, error) {
	if r.off == len(r.block) {
		if r.blocks--; r.blocks <= 0 {
			return 0, io.EOF
		}
		r.off = 0
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
// warm figure), and the goroutines before and after (no leak).
func TestSoakStdio(t *testing.T) {
	n := soakUnits(t)
	block, answers := soakBlock()
	gBefore := runtime.NumGoroutine()
	rssStart := rssKiB(t)
	var rssWarm int
	r := &soakReader{block: block, blocks: n / 1000, warm: func() { rssWarm = rssKiB(t) }}
	c := &soakChecker{want: answers}
	var stderr lockedBuffer
	start := time.Now()
	// The history is off: at a flood's rate its memory (the stream's deduplication
	// ids and the file store's block caches, some 50 MB live at 5,000 boards/s, times
	// GOGC 400) grows for the window's and the caches' few seconds, which is not the
	// pipeline's leak this test looks for.
	code := runMain(context.Background(), []string{"run", "--nats-listen", "off", "--log-level", "error",
		"--port", "-", "--problem", "goscore", "--history=false"}, stdio{r, c, &stderr})
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
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
	t.Logf("soak: units=%d garbage_lines=%d elapsed=%v units/s=%.0f rss_start=%dKiB rss_warm=%dKiB rss_end=%dKiB goroutines_before=%d goroutines_after=%d",
		units, units/10+units/100, elapsed.Round(time.Millisecond), float64(units)/elapsed.Seconds(),
		rssStart, rssWarm, rssEnd, gBefore, gAfter)
	if want := int64(units/1000) * int64(len(answers)); c.written != want || c.bad != 0 {
		t.Errorf("%d bytes of answers (%d wrong), want %d", c.written, c.bad, want)
	}
	if rssEnd > rssWarm+64<<10 {
		t.Errorf("RSS grew from %d KiB (warm) to %d KiB", rssWarm, rssEnd)
	}
	if gAfter > gBefore {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", gBefore, gAfter, buf[:runtime.Stack(buf, true)])
	}
}
