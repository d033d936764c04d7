// Package sdnotifytest is a fake service manager for tests: a real unixgram socket to
// set as $NOTIFY_SOCKET, in this process or in a child process, that records what the
// daemon sends.
package sdnotifytest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Socket is a listening notify socket.
type Socket struct {
	conn *net.UnixConn
	path string
}

// Listen opens a notify socket in a fresh temporary directory, closed when the test
// ends.
func Listen(t testing.TB) *Socket {
	t.Helper()
	// Unix socket paths are limited to 107 bytes, and t.TempDir can be long.
	dir, err := os.MkdirTemp("", "sdnotify")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return listen(t, filepath.Join(dir, "notify.sock"))
}

// ListenAbstract opens a notify socket in the abstract namespace ("@name").
func ListenAbstract(t testing.TB) *Socket {
	t.Helper()
	return listen(t, fmt.Sprintf("@sdnotifytest-%d-%d", os.Getpid(), time.Now().UnixNano()))
}

func listen(t testing.TB, path string) *Socket {
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatalf("notify socket: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return &Socket{conn: conn, path: path}
}

// Path is the value for $NOTIFY_SOCKET.
func (s *Socket) Path() string { return s.path }

// Env is the environment entry for a child process.
func (s *Socket) Env() string { return "NOTIFY_SOCKET=" + s.path }

// ErrTimeout is returned by Next when nothing arrived in time.
var ErrTimeout = errors.New("no notify message in time")

// Next returns the next message, waiting at most d.
func (s *Socket) Next(d time.Duration) (string, error) {
	buf := make([]byte, 4096)
	if err := s.conn.SetReadDeadline(time.Now().Add(d)); err != nil {
		return "", err
	}
	n, err := s.conn.Read(buf)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return "", ErrTimeout
	}
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// WaitFor reads messages until one has the assignment want (such as "READY=1") on a
// line of its own, and returns the messages read before it. It fails the test if none
// arrives within d.
func (s *Socket) WaitFor(t testing.TB, want string, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	var before []string
	for {
		msg, err := s.Next(time.Until(deadline))
		if err != nil {
			t.Fatalf("waiting for %s: %v (got before: %q)", want, err, before)
		}
		if Has(msg, want) {
			return before
		}
		before = append(before, msg)
	}
}

// Has reports whether a message carries the assignment want on a line of its own.
func Has(msg, want string) bool {
	for _, line := range strings.Split(msg, "\n") {
		if line == want {
			return true
		}
	}
	return false
}
