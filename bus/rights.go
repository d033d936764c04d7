package bus

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ErrNoWorkerRights is a worker's connection that the server refused a worker's
// subscriptions: it is connected as a tool (no credentials, or a tool's).
var ErrNoWorkerRights = errors.New("no worker rights")

// rightsError says which credentials a worker needs. Its exit code is 2: like a
// usage error, nothing is wrong but what the command was given.
type rightsError struct{ err error }

func (e *rightsError) Error() string {
	return fmt.Sprintf("%v: the server refused the worker's subscriptions (%v). 'scoreboard work' needs the worker "+
		"credentials: those the daemon's listener was given (run --nats-listen-token, or --nats-listen-user and "+
		"--nats-listen-password), passed here as $SCOREBOARD_NATS_TOKEN, or --nats-user and $SCOREBOARD_NATS_PASSWORD; "+
		"on a nats-server of configs/nats-server.conf, its user worker", ErrNoWorkerRights, e.err)
}

func (e *rightsError) Unwrap() []error { return []error{ErrNoWorkerRights, e.err} }

// ExitCode is the process's exit code for this error.
func (e *rightsError) ExitCode() int { return 2 }

// CheckWorkerRights tells, once the workers have subscribed on nc, whether the server
// took the subscriptions: it refuses them asynchronously (a permissions violation),
// and a round trip later it has. Without this, a worker without rights runs on,
// logging violations and serving nothing.
func CheckWorkerRights(nc *nats.Conn, timeout time.Duration) error {
	if err := nc.FlushTimeout(timeout); err != nil {
		return fmt.Errorf("check the worker's rights: %w", err)
	}
	if err := nc.LastError(); errors.Is(err, nats.ErrPermissionViolation) {
		return &rightsError{err: err}
	}
	return nil
}
