package systemd_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/sdnotifytest"
	"github.com/goclub/scoreboard/systemd"
)

const wait = 10 * time.Second

func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		listen func(testing.TB) *sdnotifytest.Socket
	}{
		{"path", sdnotifytest.Listen},
		{"abstract", sdnotifytest.ListenAbstract},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := tc.listen(t)
			t.Setenv("NOTIFY_SOCKET", sock.Path())
			n, err := systemd.FromEnv()
			if err != nil {
				t.Fatal(err)
			}
			if !n.Enabled() {
				t.Fatal("notifier with NOTIFY_SOCKET set is not enabled")
			}
			steps := []struct {
				send func() error
				want string
			}{
				{n.Ready, "READY=1"},
				{func() error { return n.Status("2 ports open\n5 units") }, "STATUS=2 ports open 5 units"},
				{n.Watchdog, "WATCHDOG=1"},
				{n.Stopping, "STOPPING=1"},
			}
			for _, s := range steps {
				if err := s.send(); err != nil {
					t.Fatalf("sending %s: %v", s.want, err)
				}
				got, err := sock.Next(wait)
				if err != nil {
					t.Fatalf("waiting for %s: %v", s.want, err)
				}
				if got != s.want {
					t.Errorf("got %q, want %q", got, s.want)
				}
			}
		})
	}
}

func TestNoSocketIsNoop(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	n, err := systemd.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if n.Enabled() {
		t.Error("notifier without NOTIFY_SOCKET is enabled")
	}
	var nilNotifier *systemd.Notifier
	for _, n := range []*systemd.Notifier{n, nilNotifier} {
		if err := n.Ready(); err != nil {
			t.Errorf("Ready without a socket: %v", err)
		}
	}
}

func TestBadSocket(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "vsock:2:1234")
	if _, err := systemd.FromEnv(); err == nil {
		t.Error("vsock address accepted")
	}
	// A socket that is gone is an error the caller can log.
	t.Setenv("NOTIFY_SOCKET", "/nonexistent/notify.sock")
	n, err := systemd.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Ready(); err == nil {
		t.Error("Ready to a missing socket: no error")
	}
}

func TestWatchdogInterval(t *testing.T) {
	me := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		usec, pid string
		want      time.Duration
		ok, err   bool
	}{
		{"", "", 0, false, false},
		{"30000000", "", 30 * time.Second, true, false},
		{"30000000", me, 30 * time.Second, true, false},
		{"30000000", "1", 0, false, false}, // another process's watchdog
		{"0", "", 0, false, true},
		{"-5", "", 0, false, true},
		{"soon", "", 0, false, true},
		{"99999999999999999999", "", 0, false, true},
	} {
		t.Setenv("WATCHDOG_USEC", tc.usec)
		t.Setenv("WATCHDOG_PID", tc.pid)
		got, err := daemon.SdWatchdogEnabled(false)
		ok := got > 0
		if got != tc.want || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("WATCHDOG_USEC=%q WATCHDOG_PID=%q: got %v %v %v, want %v %v err=%v",
				tc.usec, tc.pid, got, ok, err, tc.want, tc.ok, tc.err)
		}
	}
}

// TestWatchdogFollowsHealth runs the loop against a real socket: pings while the check
// passes, none while it fails, pings again once it recovers. The check itself sends
// markers through the same socket, so the order of datagrams tells which ping was sent
// in which phase without any sleeps.
func TestWatchdogFollowsHealth(t *testing.T) {
	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	t.Setenv("WATCHDOG_USEC", "20000") // a ping every 10 ms
	t.Setenv("WATCHDOG_PID", "")
	n, err := systemd.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	marker, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock.Path(), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer marker.Close()

	// The check passes for calls 1-3, fails for 4-8, passes from 9 on.
	var calls int
	check := func(context.Context) error {
		calls++
		switch calls {
		case 4:
			marker.Write([]byte("MARK=failing"))
		case 9:
			marker.Write([]byte("MARK=recovered"))
		}
		if calls >= 4 && calls <= 8 {
			return errors.New("bus disconnected")
		}
		return nil
	}
	if err := n.Status("1 port open"); err != nil {
		t.Fatal(err)
	}
	sock.WaitFor(t, "STATUS=1 port open", wait)
	var logs proctest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Watch(ctx, check, zerolog.New(&logs)) }()

	healthy := sock.WaitFor(t, "MARK=failing", wait)
	if countPings(healthy) != 3 {
		t.Errorf("healthy phase: got %q, want 3 pings", healthy)
	}
	// While failing: no ping, and the status says why.
	failing := sock.WaitFor(t, "MARK=recovered", wait)
	if want := "STATUS=unhealthy: bus disconnected; 1 port open"; strings.Join(failing, "|") != want {
		t.Errorf("while the check failed the watchdog sent %q, want only %q", failing, want)
	}
	// Recovered: the daemon's own status again, then pings.
	if msg, err := sock.Next(wait); err != nil || msg != "STATUS=1 port open" {
		t.Errorf("after recovery: %q %v, want the status restored", msg, err)
	}
	sock.WaitFor(t, "WATCHDOG=1", wait)
	sock.WaitFor(t, "WATCHDOG=1", wait)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// One line when it started failing, one when it recovered: not one per tick.
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"level":"error"`) ||
		!strings.Contains(lines[0], "bus disconnected") || !strings.Contains(lines[1], "resumed") {
		t.Errorf("logs:\n%s\nwant one error line naming the failure and one recovery line", logs.String())
	}
}

func countPings(msgs []string) int {
	n := 0
	for _, m := range msgs {
		if m == "WATCHDOG=1" {
			n++
		}
	}
	return n
}

func TestWatchWithoutWatchdogReturns(t *testing.T) {
	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	t.Setenv("WATCHDOG_USEC", "")
	n, _ := systemd.FromEnv()
	called := false
	err := n.Watch(context.Background(), func(context.Context) error { called = true; return nil }, zerolog.Nop())
	if err != nil || called {
		t.Errorf("Watch without WATCHDOG_USEC: err=%v, check called=%v; want an immediate nil", err, called)
	}
}

func TestAll(t *testing.T) {
	ok := func(context.Context) error { return nil }
	bad := func(context.Context) error { return errors.New("port com1 reader stopped") }
	if err := systemd.All(ok, ok)(context.Background()); err != nil {
		t.Error(err)
	}
	if err := systemd.All(ok, bad, ok)(context.Background()); err == nil || !strings.Contains(err.Error(), "com1") {
		t.Errorf("got %v, want the failing check's error", err)
	}
}

// TestRunStatus: the status goes out when it changes, not on every tick.
func TestRunStatus(t *testing.T) {
	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	n, err := systemd.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	status := func() string {
		calls++
		if calls < 5 {
			return "1 port open, 0 units answered, 0 errors"
		}
		return "1 port open, 3 units answered, 1 error"
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.RunStatus(ctx, time.Millisecond, status, zerolog.Nop()); close(done) }()
	before := sock.WaitFor(t, "STATUS=1 port open, 3 units answered, 1 error", wait)
	cancel()
	<-done
	if want := []string{"STATUS=1 port open, 0 units answered, 0 errors"}; strings.Join(before, "|") != want[0] {
		t.Errorf("before the change: %q, want %q", before, want)
	}
}
