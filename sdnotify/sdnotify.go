// Package sdnotify speaks systemd's sd_notify protocol: one datagram per message to the
// unix socket named by $NOTIFY_SOCKET. It is written by hand because the protocol is a
// dozen lines and the daemon needs nothing else from libsystemd.
//
// When the daemon is not started by systemd ($NOTIFY_SOCKET unset) every call is a
// no-op, so callers never have to ask.
package sdnotify

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Messages the service manager understands (sd_notify(3)).
const (
	ready     = "READY=1"
	stopping  = "STOPPING=1"
	watchdog  = "WATCHDOG=1"
	statusKey = "STATUS="
)

// Notifier sends messages to the service manager. The zero value, and a nil *Notifier,
// send nothing.
type Notifier struct {
	addr *net.UnixAddr

	mu        sync.Mutex
	status    string // the last status the daemon set
	unhealthy string // why the health check fails, while it does
}

// FromEnv returns a Notifier for $NOTIFY_SOCKET, or a no-op Notifier when it is unset.
// It fails only when the variable names something other than a unix socket.
func FromEnv() (*Notifier, error) {
	return New(os.Getenv("NOTIFY_SOCKET"))
}

// New returns a Notifier for the socket at path: a file system path, or an abstract
// socket written with a leading '@'. An empty path gives a no-op Notifier.
func New(path string) (*Notifier, error) {
	switch {
	case path == "":
		return &Notifier{}, nil
	case path[0] == '/', path[0] == '@':
		// Go maps a leading '@' to the abstract namespace on Linux, which is exactly
		// systemd's convention, so the path can be used as it is.
		return &Notifier{addr: &net.UnixAddr{Name: path, Net: "unixgram"}}, nil
	default:
		return nil, fmt.Errorf("NOTIFY_SOCKET=%q: only unix sockets (an absolute path or @abstract) are supported", path)
	}
}

// Enabled reports whether messages go anywhere.
func (n *Notifier) Enabled() bool { return n != nil && n.addr != nil }

// Send sends one message: newline-separated VAR=value assignments.
func (n *Notifier) Send(state string) error {
	if !n.Enabled() {
		return nil
	}
	// A fresh unbound socket per message, as libsystemd does: nothing to keep open or
	// to reconnect, and messages are rare (a few per watchdog interval).
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify %s: %w", firstLine(state), err)
	}
	return nil
}

// Ready tells the service manager that start-up is complete.
func (n *Notifier) Ready() error { return n.Send(ready) }

// Stopping tells the service manager that the daemon is shutting down.
func (n *Notifier) Stopping() error { return n.Send(stopping) }

// Watchdog resets the service manager's watchdog timer.
func (n *Notifier) Watchdog() error { return n.Send(watchdog) }

// Status sets the one-line status shown by systemctl status. Newlines would end the
// assignment, so they are replaced by spaces. While the watchdog's health check
// fails, the status starts with "unhealthy: " and the reason.
func (n *Notifier) Status(s string) error {
	if !n.Enabled() {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.status = strings.ReplaceAll(s, "\n", " ")
	return n.sendStatus()
}

// setUnhealthy records why the daemon is unhealthy ("" once it is healthy again) and
// sends the status that says so.
func (n *Notifier) setUnhealthy(reason string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.unhealthy = strings.ReplaceAll(reason, "\n", " ")
	if n.unhealthy == "" && n.status == "" {
		return nil
	}
	return n.sendStatus()
}

// sendStatus sends the status; n.mu is held, so that statuses go out in order.
func (n *Notifier) sendStatus() error {
	s := n.status
	if n.unhealthy != "" {
		s = "unhealthy: " + n.unhealthy
		if n.status != "" {
			s += "; " + n.status
		}
	}
	return n.Send(statusKey + s)
}

// WatchdogInterval returns the watchdog timeout systemd expects pings within
// ($WATCHDOG_USEC), and false when no watchdog is set for this process (the variable
// is unset, or $WATCHDOG_PID names another process).
func WatchdogInterval() (time.Duration, bool, error) {
	usec := os.Getenv("WATCHDOG_USEC")
	if usec == "" {
		return 0, false, nil
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(usec, 10, 63)
	if err != nil || n == 0 {
		return 0, false, fmt.Errorf("WATCHDOG_USEC=%q: want a positive number of microseconds", usec)
	}
	if n > uint64(time.Duration(1<<63-1)/time.Microsecond) {
		return 0, false, errors.New("WATCHDOG_USEC: out of range")
	}
	return time.Duration(n) * time.Microsecond, true, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
