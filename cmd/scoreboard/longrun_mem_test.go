package main

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
)

// What a long run says of a process's memory beside its RSS (issue 44: where a Pi's
// 64 MiB go): the kernel's split of the RSS, and the Go runtime's own account of its
// heap, from the process's /metrics.

// memMetrics are the Go collector's figures memDetail reports, by their short name.
var memMetrics = []struct{ short, name string }{
	{"heap_inuse", "go_memstats_heap_inuse_bytes"},
	{"heap_idle", "go_memstats_heap_idle_bytes"},
	{"heap_released", "go_memstats_heap_released_bytes"},
	{"heap_alloc", "go_memstats_heap_alloc_bytes"},
	{"stack", "go_memstats_stack_inuse_bytes"},
	{"sys", "go_memstats_sys_bytes"},
	{"next_gc", "go_memstats_next_gc_bytes"},
}

// metricValues are the values of a Prometheus text exposition's samples without
// labels, by name, read in one request.
func metricValues(url string) map[string]float64 {
	out := map[string]float64{}
	resp, err := http.Get(url)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if name, v, ok := strings.Cut(sc.Text(), " "); ok && !strings.HasPrefix(name, "#") {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out[name] = f
			}
		}
	}
	return out
}

// memDetail is the process's RSS split (anonymous, file-backed: the binary's
// text) and the Go runtime's heap, in KiB, and its collections so far.
func memDetail(pid int, metrics string) string {
	var b strings.Builder
	if s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for l := range strings.Lines(string(s)) {
			v := strings.Fields(l)
			if len(v) >= 2 && (v[0] == "RssAnon:" || v[0] == "RssFile:") {
				fmt.Fprintf(&b, " %s_kib=%s", strings.ToLower(strings.TrimSuffix(v[0], ":")), v[1])
			}
		}
	}
	m := metricValues(metrics)
	for _, k := range memMetrics {
		fmt.Fprintf(&b, " %s_kib=%.0f", k.short, m[k.name]/1024)
	}
	fmt.Fprintf(&b, " gcs=%.0f", m["go_gc_duration_seconds_count"])
	// What it read from files (and sockets) so far: a block loaded whole is its size.
	if io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		for l := range strings.Lines(string(io)) {
			if v, ok := strings.CutPrefix(l, "rchar: "); ok {
				fmt.Fprintf(&b, " rchar_kib=%d", atoi(strings.TrimSpace(v))>>10)
			}
		}
	}
	return strings.TrimSpace(b.String())
}

// storeBlocks lists the message blocks under a state dir, each its stream's
// directory's base name, its file and size in KiB.
func storeBlocks(dir string) string {
	var l []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".blk") {
			if info, err := d.Info(); err == nil {
				l = append(l, fmt.Sprintf("%s/%s=%d", filepath.Base(filepath.Dir(filepath.Dir(p))), d.Name(), info.Size()>>10))
			}
		}
		return nil
	})
	return strings.Join(l, " ")
}

// historyLastBlock is how many blocks the history's stream (SCOREBOARD) has under a
// state dir, and the size of its last.
func historyLastBlock(dir string) (n int, size int64) {
	var top int
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".blk") || filepath.Base(filepath.Dir(filepath.Dir(p))) != "SCOREBOARD" {
			return nil
		}
		k, _ := strconv.Atoi(strings.TrimSuffix(d.Name(), ".blk"))
		if info, err := d.Info(); err == nil {
			n++
			if k >= top {
				top, size = k, info.Size()
			}
		}
		return nil
	})
	return n, size
}

// parseSoakSize is a size such as 7MiB or 512KiB; 0 for "".
func parseSoakSize(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	for _, u := range []struct {
		suffix string
		mul    float64
	}{{"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int64(f * u.mul), err
		}
	}
	return 0, fmt.Errorf("%q: want a size such as 7MiB", s)
}

// soakProfiles: SOAK_HEAPPROFILE=FILE has the measured process write its heap profile
// at its stop (SCOREBOARD_HEAPPROFILE), SOAK_GCTRACE=1 has it trace its collections
// (GODEBUG=gctrace=1, to its output; gcTrace writes those lines to SOAK_OUT).
func soakProfiles(t *testing.T) {
	if p := os.Getenv("SOAK_HEAPPROFILE"); p != "" {
		t.Setenv("SCOREBOARD_HEAPPROFILE", p)
	}
	if os.Getenv("SOAK_GCTRACE") != "" {
		t.Setenv("GODEBUG", "gctrace=1")
	}
}

// gcTrace says the process's gctrace lines, at the end of a run with SOAK_GCTRACE.
func (e soakEnv) gcTrace(t *testing.T, output string) {
	if os.Getenv("SOAK_GCTRACE") == "" {
		return
	}
	for l := range strings.Lines(output) {
		if strings.HasPrefix(l, "gc ") {
			e.say(t, "gctrace %s", strings.TrimSpace(l))
		}
	}
}

// fillHistory (SOAK_FILL=1) sends 10 units/s a port until the daemon's keeper has
// pruned its history (SOAK_FILL=<duration>: for that long; SOAK_FILL_LAST=<size>:
// until the history has 4 blocks, the last at least that large), so that the soak
// after runs with its history at its limit (or its last block where asked), at any
// rate; what it took is not in the soak's delays. It looks at the daemon's
// /metrics once a second: polled every 10 ms, /metrics alone had the daemon
// allocate 37 MB/s and collect twice a second through the fill.
func fillHistory(t *testing.T, e soakEnv, boards []*soakBoard, page, state string) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for i, b := range boards {
		wg.Go(func() { b.write(stop, 100*time.Millisecond, 100000+i*8000) })
	}
	pruned := func() float64 { return metricValue(page+"/metrics", "scoreboard_history_pruned_messages_total") }
	// SOAK_FILL=<duration>: as long as that, pruned or not (the same load with a
	// history below its limit, for a side-by-side).
	d, _ := time.ParseDuration(os.Getenv("SOAK_FILL"))
	last, _ := parseSoakSize(os.Getenv("SOAK_FILL_LAST"))
	var looked time.Time
	bustest.WaitWithin(t, 2*time.Hour, "the history filled and pruned", func() (bool, string) {
		if time.Since(looked) < time.Second {
			return false, "looked a moment ago"
		}
		looked = time.Now()
		switch {
		case last > 0:
			n, size := historyLastBlock(state)
			return n >= 4 && size >= last, fmt.Sprintf("%d blocks, the last %d bytes (want 4, %d)", n, size, last)
		case d > 0:
			return time.Since(start) >= d, fmt.Sprintf("%v of %v", time.Since(start).Round(time.Second), d)
		}
		return pruned() > 0, fmt.Sprintf("%.0f messages pruned after %v", pruned(), time.Since(start).Round(time.Second))
	})
	close(stop)
	wg.Wait()
	sent := func() (s, a int64) {
		for _, b := range boards {
			s, a = s+b.sent.Load(), a+b.answers.Load()
		}
		return
	}
	bustest.WaitWithin(t, 2*time.Minute, "the fill's units answered", func() (bool, string) {
		s, a := sent()
		return a == s, fmt.Sprintf("%d of %d answered", a, s)
	})
	for _, b := range boards {
		b.mu.Lock()
		b.delays = nil
		b.mu.Unlock()
	}
	s, _ := sent()
	e.say(t, "run: the history filled in %v: %d units, %.0f messages pruned", time.Since(start).Round(time.Second), s, pruned())
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
