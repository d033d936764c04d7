package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/sdnotifytest"
)

const retryMsg = "nats not reachable yet: trying again"

// waitRetries waits until p has logged the failure of its tenth attempt to connect,
// and checks that the first and every tenth failure were logged, and no other: it
// returns how many retry lines p logged.
func waitRetries(t *testing.T, p *proctest.Process) int {
	t.Helper()
	p.WaitOutput(`"attempts":10,`, faultPatience)
	return checkRetries(t, p.Output())
}

// checkRetries counts the retry lines of a JSON log, each of which must be the
// first failure or a tenth one.
func checkRetries(t *testing.T, out string) int {
	t.Helper()
	n := 0
	for line := range strings.Lines(out) {
		if !strings.Contains(line, retryMsg) {
			continue
		}
		var l struct{ Attempts int }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("retry line %q: %v", line, err)
		}
		if l.Attempts != 1 && l.Attempts%10 != 0 {
			t.Errorf("retry line for attempt %d, want the first and every tenth only: %s", l.Attempts, line)
		}
		n++
	}
	return n
}

// `scoreboard work` started before its nats-server waits for it, logging the first
// failure and every tenth, then serves once it is up, and only then tells systemd
// it is ready.
func TestWorkWaitsForServer(t *testing.T) {
	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	port := proctest.FreePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	w := proctest.Start(t, proctest.Scoreboard(t), "work", "--nats-url", url, "--log-format", "json")
	before := waitRetries(t, w)
	if before != 2 {
		t.Errorf("%d retry lines by the tenth attempt, want 2 (the first and the tenth):\n%s", before, w.Output())
	}
	if msg, err := sock.Next(50 * time.Millisecond); err == nil {
		t.Errorf("work said %q before the server was up", msg)
	}
	s := proctest.StartNATS(t, proctest.NATSOptions{Port: port})
	w.WaitOutput("scoreboard worker running", faultPatience)
	sock.WaitFor(t, "READY=1", faultPatience)
	nc := busConnect(t, s.URL())
	busSolveRequests(t, nc, 3)
	after := checkRetries(t, w.Output())
	t.Logf("work logged %d retry lines (%d by the tenth attempt) before the server came", after, before)
	if err := w.Stop(); err != nil {
		t.Errorf("work after SIGTERM: %v", err)
	}
}

// `scoreboard run --nats-url` started before its nats-server waits for it too: its
// port is answered once the server is up, and READY=1 comes after that.
func TestRunWaitsForServer(t *testing.T) {
	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	port := proctest.FreePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	pt := runPTY(t)
	r := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", url, "--port", pt.Path,
		"--problem", "goscore", "--http", "off", "--log-format", "json")
	before := waitRetries(t, r)
	if before != 2 {
		t.Errorf("%d retry lines by the tenth attempt, want 2 (the first and the tenth):\n%s", before, r.Output())
	}
	if msg, err := sock.Next(50 * time.Millisecond); err == nil {
		t.Errorf("run said %q before the server was up", msg)
	}
	proctest.StartNATS(t, proctest.NATSOptions{Port: port})
	sock.WaitFor(t, "READY=1", faultPatience)
	board := "\n" + strings.Repeat(strings.Repeat(" +", 18)+" @\n", 19)
	if _, err := pt.Master.Write([]byte(board)); err != nil {
		t.Fatal(err)
	}
	answer := make([]byte, len("361 0\n"))
	done := make(chan error, 1)
	go func() { _, err := io.ReadFull(pt.Master, answer); done <- err }()
	select {
	case err := <-done:
		if err != nil || string(answer) != "361 0\n" {
			t.Fatalf("port answered %q (%v), want %q", answer, err, "361 0\n")
		}
	case <-time.After(faultPatience):
		t.Fatalf("no answer within %v:\n%s", faultPatience, r.Output())
	}
	t.Logf("run logged %d retry lines before the server came", checkRetries(t, r.Output()))
	if err := r.Stop(); err != nil {
		t.Errorf("run after SIGTERM: %v", err)
	}
}

// SIGTERM while still waiting for the bus stops cleanly (exit 0).
func TestWorkStopsWhileWaiting(t *testing.T) {
	url := fmt.Sprintf("nats://127.0.0.1:%d", proctest.FreePort(t))
	w := proctest.Start(t, proctest.Scoreboard(t), "work", "--nats-url", url, "--log-format", "json")
	w.WaitOutput(retryMsg, faultPatience)
	if err := w.Stop(); err != nil {
		t.Errorf("work stopped while waiting: %v\n%s", err, w.Output())
	}
}
