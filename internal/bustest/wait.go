package bustest

import (
	"testing"
	"time"
)

// Wait waits until cond is true, and fails the test after Long with what cond last
// said (its counts: "12 of 40 answers", "leader=none"), so that a failure in CI can
// be understood from its log alone. cond is tried every 10 ms: a poll, not a sleep
// that orders events.
func Wait(t testing.TB, what string, cond func() (ok bool, counts string)) {
	t.Helper()
	WaitWithin(t, Long, what, cond)
}

// WaitWithin is Wait with a deadline of its own, for a test that must also see a
// thing not happen in time (a timeout it checks), or that runs inside a shorter
// bound of its own.
func WaitWithin(t testing.TB, within time.Duration, what string, cond func() (ok bool, counts string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, counts := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; %s", what, within, counts)
		}
		<-tick.C
	}
}
