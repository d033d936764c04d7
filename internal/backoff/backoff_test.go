package backoff_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/backoff"
)

func TestWait(t *testing.T) {
	p := backoff.Policy{Min: 100 * time.Millisecond, Max: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := p.Wait(i); got != w*time.Millisecond {
			t.Errorf("Wait(%d) = %v, want %v", i, got, w*time.Millisecond)
		}
	}
	if got := p.Wait(1 << 20); got != time.Second {
		t.Errorf("Wait(a million) = %v, want the max", got)
	}
	if got := (backoff.Policy{}).Wait(3); got != 50*time.Millisecond {
		t.Errorf("the zero policy waits %v, want 50ms always", got)
	}
	j := backoff.Policy{Min: 100 * time.Millisecond, Max: time.Second, Jitter: true}
	for i := range 100 {
		if got := j.Wait(i % 6); got < p.Wait(i%6) || got > p.Wait(i%6)*5/4 {
			t.Fatalf("jittered Wait(%d) = %v, want %v to a quarter more", i%6, got, p.Wait(i%6))
		}
	}
}

func TestNext(t *testing.T) {
	p := backoff.Policy{Min: 100 * time.Millisecond, Max: time.Second}
	var got []time.Duration
	for d := time.Duration(0); len(got) < 6; {
		d = p.Next(d)
		got = append(got, d/time.Millisecond)
	}
	if want := []time.Duration{100, 200, 400, 800, 1000, 1000}; !slices.Equal(got, want) {
		t.Errorf("Next from 0: %v ms, want %v", got, want)
	}
}

func TestLogged(t *testing.T) {
	var logged []int
	for n := 1; n <= 30; n++ {
		if backoff.Logged(n) {
			logged = append(logged, n)
		}
	}
	if len(logged) != 4 || logged[0] != 1 || logged[1] != 10 || logged[3] != 30 {
		t.Errorf("logged %v, want 1 10 20 30", logged)
	}
}

func TestSleep(t *testing.T) {
	if err := backoff.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := backoff.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep with ctx ended: %v", err)
	}
}
