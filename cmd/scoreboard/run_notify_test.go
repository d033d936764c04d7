package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/sdnotifytest"
)

// nextMatching reads notify messages until one satisfies match, returning it and
// the messages before it; it fails the test after d.
func nextMatching(t *testing.T, sock *sdnotifytest.Socket, d time.Duration, what string, match func(string) bool) (string, []string) {
	t.Helper()
	deadline := time.Now().Add(d)
	var before []string
	for {
		msg, err := sock.Next(time.Until(deadline))
		if err != nil {
			t.Fatalf("waiting for %s: %v (got %q)", what, err, before)
		}
		if match(msg) {
			return msg, before
		}
		before = append(before, msg)
	}
}

// TestRunNotifiesSystemd runs the real binary as systemd would, with a notify socket
// and a watchdog, against an external NATS server: READY=1 once the bus and the port
// are up, WATCHDOG=1 while healthy, STATUS= with the counts, no WATCHDOG=1 while the
// bus is gone (the health check fails), pings again once it is back, and STOPPING=1
// on SIGTERM.
func TestRunNotifiesSystemd(t *testing.T) {
	ns := proctest.StartNATS(t, proctest.NATSOptions{})
	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	t.Setenv("WATCHDOG_USEC", "400000") // a ping every 200 ms
	t.Setenv("WATCHDOG_PID", "")
	pt := runPTY(t) // closed after run has stopped, so run never reopens its number

	p := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", ns.URL(),
		"--port", pt.Path, "--problem", "goscore", "--port-name", "hall", "--log-format", "json")
	const long = 30 * time.Second
	sock.WaitFor(t, "READY=1", long)
	sock.WaitFor(t, "WATCHDOG=1", long)

	board := "\n" + strings.Repeat(strings.Repeat(" +", 18)+" @\n", 19)
	if _, err := pt.Master.Write([]byte(board)); err != nil {
		t.Fatal(err)
	}
	answer := make([]byte, len("361 0\n"))
	if _, err := io.ReadFull(pt.Master, answer); err != nil || string(answer) != "361 0\n" {
		t.Fatalf("port answered %q (%v), want %q", answer, err, "361 0\n")
	}
	nextMatching(t, sock, long, "a status counting the answer", func(m string) bool {
		return sdnotifytest.Has(m, "STATUS=1 of 1 ports open, 1 units answered, 0 errors")
	})

	// The bus goes away: the health check fails, the status says why, and the pings
	// stop for as long as it is gone.
	ns.Stop()
	msg, _ := nextMatching(t, sock, long, "an unhealthy status", func(m string) bool {
		return strings.HasPrefix(m, "STATUS=unhealthy: ")
	})
	t.Logf("while the bus is gone: %q", msg)
	quiet := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(quiet) {
		m, err := sock.Next(time.Until(quiet))
		if err != nil {
			break
		}
		if sdnotifytest.Has(m, "WATCHDOG=1") {
			t.Fatalf("WATCHDOG=1 sent while the bus was gone")
		}
	}

	ns.Start()
	sock.WaitFor(t, "WATCHDOG=1", long)

	if err := p.Stop(); err != nil {
		t.Errorf("run exited with %v after SIGTERM; output:\n%s", err, p.Output())
	}
	sock.WaitFor(t, "STOPPING=1", long)
}
