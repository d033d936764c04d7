package serialio

import (
	"context"
	"time"

	"github.com/goclub/scoreboard/internal/backoff"
)

// OpenRetry calls open until it succeeds or ctx ends, spacing the attempts by b. failed is told of each failure, with the wait before the next attempt.
// A permanent error (see Diagnose) is returned at once: no attempt would change it.
func OpenRetry(ctx context.Context, open func() (Port, error), b backoff.Policy, failed func(err error, attempt int, wait time.Duration)) (Port, error) {
	for attempt := 1; ; attempt++ {
		p, err := open()
		if err == nil {
			return p, nil
		}
		if Permanent(err) {
			return nil, err
		}
		wait := b.Wait(attempt - 1)
		if failed != nil {
			failed(err, attempt, wait)
		}
		if err := backoff.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}
