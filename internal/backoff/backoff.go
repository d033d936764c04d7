// Package backoff is the project's one back-off: the waits between the attempts to
// reach what is not there yet (a NATS server, JetStream, a serial device, the history
// bucket), and which failures of a long retry are worth a log line.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy spaces the attempts: the wait after the first failure is Min, and doubles
// with each failure after it, up to Max.
type Policy struct {
	Min, Max time.Duration // Min is 50 ms when 0; Max is Min when below it
	// Jitter adds up to a quarter of the wait at random, so that a fleet of
	// processes that lost one server does not come back to it in lockstep.
	Jitter bool
}

// Wait is how long to wait after failures failures (0 before the first retry gives Min).
func (p Policy) Wait(failures int) time.Duration {
	d, most := p.Min, p.Max
	if d <= 0 {
		d = 50 * time.Millisecond
	}
	most = max(most, d)
	for range max(failures, 0) {
		if d >= most {
			break
		}
		d *= 2
	}
	d = min(d, most)
	if p.Jitter {
		d += rand.N(d/4 + 1)
	}
	return d
}

// Next is the wait after one that was prev (0 for none yet): Min, then doubled up to
// Max, for a caller that keeps the last wait rather than a count of failures.
func (p Policy) Next(prev time.Duration) time.Duration {
	if prev <= 0 {
		return p.Wait(0)
	}
	return min(2*prev, max(p.Max, p.Wait(0)))
}

// Sleep waits d, or until ctx ends; it returns ctx's error then.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Logged reports whether the failure of attempt n (from 1) is to be logged: the
// first and then every tenth, so that a server or device away for an hour does not
// fill the journal, and the log still shows that it is being tried.
func Logged(n int) bool { return n == 1 || n%10 == 0 }
