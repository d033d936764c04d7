// Package systemd tells systemd how the daemon is: ready, stopping, a status line,
// and watchdog pings that stop while a health check fails. The sd_notify protocol
// itself is go-systemd's daemon package; this package adds the policy: the status
// says "unhealthy: " and why while the check fails, and the loops that send it.
//
// When the daemon is not started by systemd ($NOTIFY_SOCKET unset) every call is a
// no-op, so callers never have to ask.
package systemd

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier sends messages to the service manager. The zero value, and a nil *Notifier,
// send nothing.
type Notifier struct {
	enabled bool

	mu        sync.Mutex
	status    string // the last status the daemon set
	unhealthy string // why the health check fails, while it does
}

// FromEnv returns a Notifier for $NOTIFY_SOCKET, or a no-op Notifier when it is unset.
// It fails when the variable names something other than a unix socket (an absolute
// path, or an abstract socket written with a leading '@'), which go-systemd would only
// find out at the first message.
func FromEnv() (*Notifier, error) {
	switch path := os.Getenv("NOTIFY_SOCKET"); {
	case path == "":
		return &Notifier{}, nil
	case path[0] == '/', path[0] == '@':
		return &Notifier{enabled: true}, nil
	default:
		return nil, fmt.Errorf("NOTIFY_SOCKET=%q: only unix sockets (an absolute path or @abstract) are supported", path)
	}
}

// Enabled reports whether messages go anywhere.
func (n *Notifier) Enabled() bool { return n != nil && n.enabled }

// send sends one message: newline-separated VAR=value assignments.
func (n *Notifier) send(state string) error {
	if !n.Enabled() {
		return nil
	}
	if _, err := daemon.SdNotify(false, state); err != nil {
		line, _, _ := strings.Cut(state, "\n")
		return fmt.Errorf("sd_notify %s: %w", line, err)
	}
	return nil
}

// Ready tells the service manager that start-up is complete.
func (n *Notifier) Ready() error { return n.send(daemon.SdNotifyReady) }

// Stopping tells the service manager that the daemon is shutting down.
func (n *Notifier) Stopping() error { return n.send(daemon.SdNotifyStopping) }

// Watchdog resets the service manager's watchdog timer.
func (n *Notifier) Watchdog() error { return n.send(daemon.SdNotifyWatchdog) }

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
	return n.send("STATUS=" + s)
}
