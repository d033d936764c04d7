package dumpclient

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// ServiceError is the service's error for a whole input (Solve): its answer to the
// units it could answer was written.
type ServiceError struct {
	Message, Code string
}

func (e *ServiceError) Error() string { return fmt.Sprintf("%s (%s)", e.Message, e.Code) }

// Solve sends a whole contest input, in, to the service's endpoint subject in one
// request (it must fit one message), and writes its answer to out: 'scoreboard
// solve --nats-url'. A service's error is a *ServiceError.
func Solve(nc *nats.Conn, subject string, in io.Reader, out io.Writer, timeout time.Duration) error {
	limit := nc.MaxPayload()
	data, err := io.ReadAll(io.LimitReader(in, limit+1))
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("input is over the server's limit of %d bytes a message: split it, or solve it in-process", limit)
	}
	reply, err := nc.Request(subject, data, timeout)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%s: no worker serves it (is 'scoreboard run' or 'scoreboard work' running there?)", subject)
	case err != nil:
		return fmt.Errorf("%s: %w", subject, err)
	}
	if _, err := out.Write(reply.Data); err != nil {
		return err
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		return &ServiceError{Message: reply.Header.Get(micro.ErrorHeader), Code: code}
	}
	return nil
}
