package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/logging"
)

// run on a NATS listen address already taken: one error with what to do instead,
// exit 1, and no "ready".
func TestRunNATSListenTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errs := runLocked(t, "", "run", "--nats-listen", ln.Addr().String(), "--history=false", "--http", "off", "--log-format", "json")
	if code != 1 || strings.Contains(errs, `"message":"ready"`) || strings.Contains(errs, "Server is ready") || strings.Count(errs, "is taken") != 1 ||
		!strings.Contains(errs, "--nats-listen 127.0.0.1:0") || !strings.Contains(errs, "--nats-listen off") || !strings.Contains(errs, "--nats-url") {
		t.Errorf("exit %d, stderr:\n%s\nwant 1, one error suggesting --nats-listen 127.0.0.1:0, --nats-listen off or --nats-url, and no ready", code, errs)
	}
}

// simulate --link replaces only a link it could have left (dangling, or to a
// pseudo-terminal): a file, a directory or another link there is refused, untouched.
func TestSimulateLinkRefusesWhatIsNotItsOwn(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "boards.txt")
	other := filepath.Join(dir, "other-link")
	if err := os.WriteFile(file, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, other); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{file, "--link " + file + ": there is a regular file there"},
		{dir, "--link " + dir + ": there is a directory there"},
		{other, "--link " + other + ": it is a link to " + file},
	} {
		code, _, errs := runCmd(t, "", "simulate", "--wait", "1ms", "--link", c.path)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(errs, "device /dev") {
			t.Errorf("--link %s: exit %d, stderr %q; want 1 and %q before any device", c.path, code, errs, c.want)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep me\n" {
		t.Errorf("the file at --link: %q, %v; want it untouched", b, err)
	}
	if target, err := os.Readlink(other); err != nil || target != file {
		t.Errorf("the other link: -> %q, %v; want it untouched", target, err)
	}

	// A dangling link (a simulate that was killed) is replaced, and removed at the end.
	stale := filepath.Join(dir, "board")
	if err := os.Symlink("/dev/pts/4242424", stale); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCmd(t, "", "simulate", "--wait", "200ms", "--link", stale)
	if !strings.Contains(errs, "(linked from "+stale+")") {
		t.Errorf("dangling link: exit %d, stderr %q; want it replaced", code, errs)
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("link %s left behind: %v", stale, err)
	}
}

// watch, its stderr a file: no colours, and the disconnect and the reconnect both
// logged, naming the server.
func TestWatchLogsReconnectWithoutColours(t *testing.T) {
	srv, url := busDaemon(t, false)
	errf, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var out proctest.Buffer
	go func() {
		done <- runMain(ctx, []string{"watch", "--nats-url", url}, stdio{strings.NewReader(""), &out, errf})
	}()
	stderr := func() string { b, _ := os.ReadFile(errf.Name()); return string(b) }
	waitFor := func(what string) {
		t.Helper()
		bustest.Wait(t, what+" in watch's stderr", func() (bool, string) {
			s := stderr()
			return strings.Contains(s, what), "stderr:\n" + s
		})
	}
	// watch is following once the server holds its subscription: a client counted
	// may still be in its handshake, and a tool whose first connect fails ends
	// with that error (CI's race suite once shut the server down there).
	bustest.Wait(t, "watch subscribed", func() (bool, string) {
		cz, err := srv.NATS().Connz(&server.ConnzOptions{Subscriptions: true})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, c := range cz.Conns {
			if c.Name == "scoreboard watch" && c.NumSubs > 0 {
				return true, ""
			}
			seen = append(seen, fmt.Sprintf("%q with %d subscriptions", c.Name, c.NumSubs))
		}
		return false, fmt.Sprintf("connections: %v", seen)
	})
	srv.Shutdown()
	waitFor("nats disconnected")
	srv.StartAgain()
	waitFor("nats reconnected")
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("watch: exit %d", code)
	}
	logs := stderr()
	if strings.Contains(logs, "\x1b[") {
		t.Errorf("colours in a file:\n%q", logs)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "nats disconnected") && !strings.Contains(line, "server="+url) {
			t.Errorf("the disconnect does not name the server %s: %q", url, line)
		}
	}
}

// The daemon's log at start and for a bad unit: each connection's "nats connected"
// (at debug for the daemon's in-process connections) names it, the version has one form, and a bad unit is warned of once, with its
// elapsed_ms.
func TestRunLogsOnceAndNamed(t *testing.T) {
	in, want := busSample(t, "goscore")
	rows := strings.Split(in, "\n")[:20]
	rows[4] = " + + garbage"
	code, out, errs := runLocked(t, strings.Join(rows, "\n")+"\n"+in,
		"run", "--nats-listen", "off", "--port", "-", "--problem", "goscore", "--history=false", "--http", "off", "--log-level", "debug")
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q, want 0 and %q; stderr:\n%s", code, out, want, errs)
	}
	type line struct {
		Level, Message, Connection, Version string
		Elapsed                             *float64 `json:"elapsed_ms"`
	}
	var bad, connected int
	conns := map[string]bool{}
	versions := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
		var e line
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		switch e.Message {
		case "bad unit":
			if e.Level == "debug" {
				continue // the worker's own line; the display warns of it
			}
			bad++
			if e.Elapsed == nil {
				t.Errorf("bad unit without elapsed_ms: %s", l)
			}
		case "nats connected":
			connected++
			conns[e.Connection] = true
		}
		if e.Version != "" {
			versions[e.Version] = true
		}
	}
	if bad != 1 || connected < 2 || len(conns) != connected || conns[""] || len(versions) != 1 {
		t.Errorf("%d bad unit lines (want 1), %d nats connected lines on connections %v (want each named once), versions %v (want one form); stderr:\n%s",
			bad, connected, conns, versions, errs)
	}
}

// Every duration in the logs is in milliseconds (zerolog's DurationFieldUnit), and
// its field says so.
func TestLogDurationFieldsSayMs(t *testing.T) {
	dur := regexp.MustCompile(`\.Dur\(("[^"]*"|[\w.]+)`)
	var bad []string
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range dur.FindAllStringSubmatch(string(b), -1) {
			name := m[1]
			if name == "logging.FieldElapsed" {
				name = `"` + logging.FieldElapsed + `"`
			}
			if !strings.HasSuffix(name, `_ms"`) {
				bad = append(bad, path+": "+m[0])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("duration fields without _ms:\n%s", strings.Join(bad, "\n"))
	}
}
