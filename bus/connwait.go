package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// ConnectWait is Connect for a process that starts before its server: while no
// server answers (not up yet, or the in-process pipe timing out on a loaded machine),
// it tries again with the reconnect back-off until ctx ends. It logs the first
// failure and then every tenth, so that a worker started an hour before its server
// does not fill the journal. What waiting cannot cure (credentials refused, a bad
// URL or TLS file) fails at once, as with Connect.
func ConnectWait(ctx context.Context, o ConnOptions, log zerolog.Logger) (*nats.Conn, error) {
	for attempt := 1; ; attempt++ {
		nc, err := Connect(o, log)
		if err == nil {
			return nc, nil
		}
		if !o.notUpYet(err) {
			return nil, err
		}
		if backoff.Logged(attempt) {
			log.Warn().Str("component", "bus").Err(err).Int("attempts", attempt).Str("conn", o.Name).
				Msg("nats not reachable yet: trying again")
		}
		if err := backoff.Sleep(ctx, reconnect.Wait(attempt-1)); err != nil {
			return nil, fmt.Errorf("waiting for nats (%d attempts): %w", attempt, err)
		}
	}
}

// notUpYet reports whether err is a server not answering (yet), as opposed to one
// that answered no.
func (o ConnOptions) notUpYet(err error) bool {
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		return false
	case o.Server != nil:
		// In-process, only the pipe's handshake can fail: a server still starting, or
		// one too loaded to answer within the connect timeout.
		return true
	case errors.Is(err, nats.ErrNoServers), errors.Is(err, nats.ErrTimeout), errors.Is(err, os.ErrDeadlineExceeded),
		// A server still starting may take the connection and drop it.
		errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
