package serialio

import (
	"context"
	"time"
)

// Backoff spaces the attempts to open a device that is not there: from Min, doubling
// up to Max.
type Backoff struct {
	Min, Max time.Duration
	cur      time.Duration
}

// Next returns how long to wait before the next attempt.
func (b *Backoff) Next() time.Duration {
	minWait, maxWait := b.Min, b.Max
	if minWait <= 0 {
		minWait = 50 * time.Millisecond
	}
	if maxWait < minWait {
		maxWait = minWait
	}
	switch {
	case b.cur < minWait:
		b.cur = minWait
	case b.cur < maxWait:
		b.cur = min(2*b.cur, maxWait)
	}
	return b.cur
}

// Reset starts over from Min, after a success.
func (b *Backoff) Reset() { b.cur = 0 }

// OpenRetry calls open until it succeeds or ctx ends, waiting b.Next() between
// attempts. failed is told of each failure, with the wait before the next attempt.
// A permanent error (see Diagnose) is returned at once: no attempt would change it.
func OpenRetry(ctx context.Context, open func() (Port, error), b *Backoff, failed func(err error, attempt int, wait time.Duration)) (Port, error) {
	for attempt := 1; ; attempt++ {
		p, err := open()
		if err == nil {
			b.Reset()
			return p, nil
		}
		if Permanent(err) {
			return nil, err
		}
		wait := b.Next()
		if failed != nil {
			failed(err, attempt, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
