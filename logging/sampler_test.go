package logging

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// clock is a settable time for the sampler.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestSampler(burst int, period time.Duration, every int) (*Sampler, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := NewSampler(burst, period, every)
	s.now = c.now
	return s, c
}

func TestSamplerNeverSilences(t *testing.T) {
	s, _ := newTestSampler(5, time.Minute, 10)
	logged, reported := 0, 0
	for i := 0; i < 1000; i++ {
		ok, n := s.Allow("com1")
		if ok {
			logged++
			reported += n
		}
	}
	// 5 in the burst, then 1 in 10 of the other 995.
	if logged != 5+99 {
		t.Errorf("logged %d of 1000, want %d", logged, 5+99)
	}
	// Every event is either logged or counted in a later logged line (the last 5
	// are still pending).
	if logged+reported != 1000-5 {
		t.Errorf("logged %d + reported suppressed %d, want 995", logged, reported)
	}
}

func TestSamplerPerKeyAndPeriod(t *testing.T) {
	s, c := newTestSampler(2, time.Second, 1000)
	for i := 0; i < 5; i++ {
		s.Allow("com1")
	}
	// Another key has its own burst.
	if ok, _ := s.Allow("com2"); !ok {
		t.Error("a quiet port's first warning was left out")
	}
	// A new period starts a new burst, and its first line reports what was left out.
	c.t = c.t.Add(time.Second)
	ok, n := s.Allow("com1")
	if !ok || n != 3 {
		t.Errorf("after the period: ok=%v suppressed=%d, want true 3", ok, n)
	}
}

func TestSamplerEveryOne(t *testing.T) {
	s, _ := newTestSampler(0, time.Second, 0)
	for i := 0; i < 10; i++ {
		if ok, _ := s.Allow("k"); !ok {
			t.Fatal("every=0 silenced an event")
		}
	}
}

func TestSamplerBoundedKeys(t *testing.T) {
	s, c := newTestSampler(1, time.Second, 10)
	for i := 0; i < 5*maxKeys; i++ {
		s.Allow(fmt.Sprint(i))
		if i%maxKeys == 0 {
			c.t = c.t.Add(time.Second)
		}
	}
	if len(s.keys) > maxKeys {
		t.Errorf("%d keys kept, bound %d", len(s.keys), maxKeys)
	}
}

func TestSamplerWarn(t *testing.T) {
	var b strings.Builder
	l := zerolog.New(&b)
	s, _ := newTestSampler(1, time.Minute, 3)
	for i := 1; i <= 4; i++ {
		s.Warn(&l, "com1").Int("n", i).Msg("bad unit")
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %q, want 2 lines", lines)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
		t.Fatal(err)
	}
	if m["n"] != 4.0 || m["suppressed"] != 2.0 || m["level"] != "warn" {
		t.Errorf("second line %v: want n=4 suppressed=2", m)
	}

	// Below the logger's level nothing is counted as suppressed.
	quiet := l.Level(zerolog.ErrorLevel)
	s2, _ := newTestSampler(1, time.Minute, 1000)
	for i := 0; i < 10; i++ {
		s2.Warn(&quiet, "com1").Msg("x")
	}
	if len(s2.keys) != 0 {
		t.Error("events below the level were counted")
	}
}

func BenchmarkSamplerAllow(b *testing.B) {
	s := NewSampler(10, time.Second, 100)
	for b.Loop() {
		s.Allow("com1")
	}
}
