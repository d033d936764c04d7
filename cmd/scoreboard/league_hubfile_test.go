package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
)

// TestLeagueHubFileModeFault is F9: a hub's file that holds a club's token and
// that others may read is refused, at start and at SIGHUP, naming the file and
// chmod 600, as a club's seed file is; one without tokens (keys only) is taken at
// any mode, and the hub goes on with its clubs after the refused SIGHUP.
func TestLeagueHubFileModeFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hubPort, leafPort := proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	head := fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"off\"\nstate_dir = %q\n", hubPort, leafPort, filepath.Join(root, "hub"))
	withToken := head + "[[club]]\nname = \"north\"\ntoken = \"token-north\"\n"
	writeFile(t, conf, withToken)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(conf, mode); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "hub", "--config", conf, "--log-format", "json")
		out, err := runBounded(cmd, 20*time.Second)
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if err == nil || code != 2 || !strings.Contains(out, conf) || !strings.Contains(out, "chmod 600") {
			t.Errorf("hub with its file at mode %04o, holding a token: exit %d (%v), want 2 naming %s and chmod 600; output:\n%s", mode, code, err, conf, lastLines(out, 10))
		}
	}
	// Keys only: no secret in the file, any mode.
	pub := keyOf(t, bin, root)
	writeFile(t, conf, head+"[[club]]\nname = \"north\"\nnkey = \""+pub+"\"\n")
	os.Chmod(conf, 0o644)
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	// A token comes in by SIGHUP while the file is readable by others: refused,
	// the running clubs kept; after chmod 600, taken.
	writeFile(t, conf, withToken)
	os.Chmod(conf, 0o644)
	hub.Signal(syscall.SIGHUP)
	hub.WaitOutput("the running clubs are kept", 30*time.Second)
	if out := hub.Output(); !strings.Contains(out, "chmod 600") || strings.Contains(out, "SIGHUP: clubs reloaded") {
		t.Fatalf("SIGHUP with a token in a file others may read: the hub's log does not name chmod 600, or took it:\n%s", lastLines(out, 5))
	}
	os.Chmod(conf, 0o600)
	hub.Signal(syscall.SIGHUP)
	hub.WaitOutput("SIGHUP: clubs reloaded", 30*time.Second)
}

// keyOf makes a club's key with `scoreboard hub key` and returns its public key.
func keyOf(t *testing.T, bin, root string) string {
	t.Helper()
	out, err := exec.Command(bin, "hub", "key", "north", "--out", filepath.Join(root, "north.seed")).CombinedOutput()
	if err != nil {
		t.Fatalf("hub key: %v\n%s", err, out)
	}
	for _, f := range strings.Fields(string(out)) {
		if f = strings.Trim(f, `"`); strings.HasPrefix(f, "U") && len(f) == 56 {
			return f
		}
	}
	t.Fatalf("hub key printed no public key:\n%s", out)
	return ""
}

// runBounded runs cmd, killing it after d, and returns its output.
func runBounded(cmd *exec.Cmd, d time.Duration) (string, error) {
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return b.String(), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return b.String(), fmt.Errorf("still running after %v", d)
	}
}

// TestHubHangupWhileStarting: SIGHUPs from the hub's first log line on (a reload
// sent while it starts, or a log watcher that reloads on "league hub running") do
// not end it: each is caught, and one after it runs reloads its clubs. The hub
// logged that it was running before it caught SIGHUP, whose default ends the
// process (CI: "scoreboard exited (signal: hangup) before writing \"the running
// clubs are kept\"").
func TestHubHangupWhileStarting(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	conf := filepath.Join(root, "hub.toml")
	writeFile(t, conf, fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"off\"\nstate_dir = %q\n[[club]]\nname = \"north\"\nnkey = %q\n",
		proctest.FreePort(t), proctest.FreePort(t), filepath.Join(root, "hub"), keyOf(t, bin, root)))
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	deadline := time.Now().Add(30 * time.Second)
	for hub.Output() == "" && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	sent := 0
	for !strings.Contains(hub.Output(), "league hub running") && time.Now().Before(deadline) {
		select {
		case <-hub.Done():
			t.Fatalf("the hub ended after %d SIGHUPs sent from its first log line: %v\n%s", sent, hub.Err(), lastLines(hub.Output(), 5))
		case <-time.After(2 * time.Millisecond):
		}
		if hub.Signal(syscall.SIGHUP) == nil {
			sent++
		}
	}
	hub.WaitOutput("league hub running", 30*time.Second)
	hub.Signal(syscall.SIGHUP)
	hub.WaitOutput("SIGHUP: clubs reloaded", 30*time.Second)
	t.Logf("%d SIGHUPs while the hub started, then one reload", sent)
}
