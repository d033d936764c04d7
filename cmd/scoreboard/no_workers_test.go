package main

import (
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/sdnotifytest"
)

// `run --no-workers` serves no instance of the service itself, and its watchdog
// health check passes only once a worker elsewhere answers a ping.
func TestRunNoWorkersHealth(t *testing.T) {
	ns := proctest.StartNATS(t, proctest.NATSOptions{})
	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	t.Setenv("WATCHDOG_USEC", "400000") // a check every 200 ms
	t.Setenv("WATCHDOG_PID", "")
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", ns.URL(), "--no-workers",
		"--history=false", "--http", "off", "--log-format", "json")
	const long = 60 * time.Second
	// The readiness and the watchdog's first check are two goroutines: the unhealthy
	// status may come before READY=1 as well as after it.
	before := sock.WaitFor(t, "READY=1", long)
	var msg string
	for _, m := range before {
		if strings.HasPrefix(m, "STATUS=unhealthy: ") {
			msg = m
		}
	}
	if msg == "" {
		var after []string
		msg, after = nextMatching(t, sock, long, "an unhealthy status", func(m string) bool {
			return strings.HasPrefix(m, "STATUS=unhealthy: ")
		})
		before = append(before, after...)
	}
	if !strings.Contains(msg, "workers do not answer a ping") {
		t.Errorf("unhealthy for another reason: %q", msg)
	}
	for _, m := range before {
		if sdnotifytest.Has(m, "WATCHDOG=1") {
			t.Errorf("WATCHDOG=1 before any worker was up: %q", before)
		}
	}
	nc := busConnect(t, ns.URL())
	if n := len(busStats(t, nc, 0)); n != 0 {
		t.Fatalf("%d instances of the service with only run --no-workers up, want 0:\n%s", n, run.Output())
	}
	busStartWork(t, nc, "--nats-url", ns.URL())
	sock.WaitFor(t, "WATCHDOG=1", long)
	busSolveRequests(t, nc, 1)
	if n := len(busStats(t, nc, 1)); n != 1 {
		t.Errorf("%d instances of the service, want the work process's only", n)
	}
}
