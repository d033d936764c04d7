package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// mountTmpfs mounts a tmpfs of size at a new directory for the test, unmounted at
// its end; the test is skipped where mounting is refused (not root, or no
// CAP_SYS_ADMIN in a container), saying so.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("mount -t tmpfs -o size=%s %s refused (%v): this test needs root (CI runs as root)", size, dir, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file on dir's filesystem until it is full (ENOSPC).
func fill(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return name
			}
			t.Fatal(err)
		}
	}
}

// diskUnits writes boards k from..to-1 to the port and reads their answers.
func diskUnits(t *testing.T, w io.Writer, r io.Reader, from, to int, p *proctest.Process) {
	t.Helper()
	var in, want bytes.Buffer
	for k := from; k < to; k++ {
		u, a := faulttest.GoscoreBoard(k)
		in.WriteString(u)
		want.WriteString(a)
	}
	if _, err := w.Write(in.Bytes()); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, want.Len())
	done := make(chan error, 1)
	go func() { _, err := io.ReadFull(r, got); done <- err }()
	select {
	case err := <-done:
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("units %d-%d: answers %q, want %q (%v); output:\n%s", from, to-1, got, want.Bytes(), err, p.Output())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("units %d-%d: not answered within 60s; output:\n%s", from, to-1, p.Output())
	}
}

// metric is a sample's value in a /metrics page.
func metric(page, name string) (float64, bool) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(page)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// The state dir on a real 4 MiB filesystem: the history fits itself to it (one log
// line: before, `run` exited 1 at start, JetStream refusing to reserve 1 GiB) and
// the daemon answers, the stream keeping the units. Then the filesystem fills while
// it runs: every unit is still answered, the log says once that the history is not
// storing, /metrics shows scoreboard_history_ok 0 and the units not stored; the
// filler gone, it stores again by itself, no restart, and the units after are in
// the stream.
func TestHistoryFullDiskFault(t *testing.T) {
	dir := mountTmpfs(t, "4m")
	pt := runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	web := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr, "--http", web, "--state-dir", filepath.Join(dir, "state"),
		"--port", pt.Path, "--problem", "goscore", "--baud", "115200", "--error-line")
	runWaitOpened(t, pt, run)
	run.WaitOutput("history fitted to the disk", 60*time.Second)
	run.WaitOutput("scoreboard running", 60*time.Second)
	js := historyJetStream(t, "nats://"+addr)
	get := func(path string) string {
		resp, err := http.Get("http://" + web + path)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	scrape := func() string { return get("/metrics") }

	diskUnits(t, pt.Master, pt.Master, 0, 20, run)
	bustest.Wait(t, "the first units in the stream", func() (bool, string) {
		n := historyCount(js, "scoreboard.result.>")
		return n == 20, fmt.Sprintf("%d of 20", n)
	})

	filler := fill(t, dir)
	next := 20
	bustest.Wait(t, "the history not storing", func() (bool, string) {
		diskUnits(t, pt.Master, pt.Master, next, next+200, run)
		next += 200
		return strings.Contains(run.Output(), "history is not storing"), fmt.Sprintf("%d units answered", next)
	})
	for range 5 { // every unit answered while the history cannot store
		diskUnits(t, pt.Master, pt.Master, next, next+200, run)
		next += 200
	}
	full := historyCount(js, "scoreboard.result.>")
	bustest.Wait(t, "/metrics", func() (bool, string) {
		page := scrape()
		ok, _ := metric(page, "scoreboard_history_ok")
		lost, _ := metric(page, "scoreboard_history_units_not_stored_total")
		return ok == 0 && lost >= 1000, fmt.Sprintf("ok %v, not stored %v", ok, lost)
	})
	// The page's small warning.
	if s := get("/api/status"); !strings.Contains(s, `"history_ok":false`) {
		t.Errorf("/api/status while full: %s", s)
	}
	if n := strings.Count(run.Output(), "history is not storing"); n != 1 {
		t.Errorf("%q logged %d times, want once", "history is not storing", n)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	run.WaitOutput("history storing again", 60*time.Second)
	stored := historyCount(js, "scoreboard.result.>")
	diskUnits(t, pt.Master, pt.Master, next, next+20, run)
	bustest.Wait(t, "the units after in the stream", func() (bool, string) {
		n := historyCount(js, "scoreboard.result.>")
		return n >= stored+20, fmt.Sprintf("%d, want %d or more", n, stored+20)
	})
	bustest.Wait(t, "/metrics", func() (bool, string) {
		ok, _ := metric(scrape(), "scoreboard_history_ok")
		return ok == 1, fmt.Sprintf("ok %v", ok)
	})
	if s := get("/api/status"); !strings.Contains(s, `"history_ok":true`) {
		t.Errorf("/api/status after: %s", s)
	}
	// The bucket's updater went on where it was: the port's latest is the stream's.
	bustest.Wait(t, "the bucket at the stream's latest", func() (bool, string) {
		kv, err := js.KeyValue(context.Background(), "SCOREBOARD_BOARDS")
		if err != nil {
			return false, err.Error()
		}
		keys, err := kv.ListKeys(context.Background())
		if err != nil {
			return false, err.Error()
		}
		var ports []*soakPort
		for k := range keys.Keys() {
			ports = append(ports, &soakPort{name: k})
		}
		if len(ports) != 1 {
			return false, fmt.Sprintf("bucket keys %d, want the port's one", len(ports))
		}
		return soakBucketMatches(js, ports)
	})
	t.Logf("%d units answered; the stream's results: %d after the full disk's units, %d at the end; history not storing said %d times",
		next+20, full, historyCount(js, "scoreboard.result.>"), strings.Count(run.Output(), "history is not storing"))
}

// The report: 40 boards at once on a port, and 1 s after the last answer the
// bucket holds the port's latest result in the stream (it held unit 1 for good).
// (It was `send`'s 40 boards: a tool's units are kept nowhere now, and send's
// answers still come.)
func TestHistoryBucketAfterSend(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	pt := runPTY(t)
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr, "--http", "off", "--state-dir", t.TempDir(),
		"--port", pt.Path, "--port-name", "bar1", "--problem", "goscore", "--baud", "115200")
	runWaitOpened(t, pt, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	url := "nats://" + addr
	var in, want bytes.Buffer
	for k := range 3 {
		u, a := faulttest.GoscoreBoard(k)
		in.WriteString(u)
		want.WriteString(a)
	}
	if code, out, errs := runLocked(t, in.String(), "send", "--nats-url", url, "--port-name", "desk", "goscore"); code != 0 || out != want.String() {
		t.Fatalf("send: exit %d, %q: %s", code, out, errs)
	}
	diskUnits(t, pt.Master, pt.Master, 0, 40, run)
	returned := time.Now()
	js := historyJetStream(t, url)
	// Within 1.5 s of the last answer, not of the wait's start.
	bustest.WaitWithin(t, 1500*time.Millisecond-time.Since(returned), "the bucket at bar1's latest, 1.5 s after its last answer", func() (bool, string) {
		return soakBucketMatches(js, []*soakPort{{name: "bar1"}})
	})
	// 1 s after the last answer (the idle second), the bucket holds unit 40.
	kv, err := js.KeyValue(context.Background(), "SCOREBOARD_BOARDS")
	if err != nil {
		t.Fatal(err)
	}
	v, err := kv.Get(context.Background(), "bar1")
	if err != nil {
		t.Fatal(err)
	}
	var r historyRecord
	json.Unmarshal(v.Value(), &r)
	if r.Seq != 40 {
		t.Errorf("the bucket holds bar1's unit %d, want 40, the port's last", r.Seq)
	}
	t.Logf("the bucket holds bar1's unit %d, %v after its last answer", r.Seq, time.Since(returned).Round(time.Millisecond))
	// send's units were answered, and are kept nowhere.
	if _, err := kv.Get(context.Background(), "desk"); err == nil {
		t.Errorf("the bucket holds a board of send's port desk")
	}
	for _, rec := range historyJSON(t, url) {
		if rec.Port != "bar1" {
			t.Errorf("the history holds %s %s #%d, not the port's", rec.Port, rec.Problem, rec.Seq)
		}
	}
}
