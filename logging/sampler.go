package logging

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Sampler thins out floods of the same warning (a scoreboard sending garbage at
// 115200 baud) without ever silencing them: per key, the first Burst events of each
// Period are logged, then one in Every, and the next line logged says how many were
// left out. zerolog's own samplers work per logger and do not count what they drop.
type Sampler struct {
	burst  int
	period time.Duration
	every  int
	now    func() time.Time

	mu   sync.Mutex
	keys map[string]*window
}

type window struct {
	start      time.Time
	seen       int // events in this window
	suppressed int // events left out since the last one logged
}

// maxKeys bounds the sampler's memory when keys come from outside (port names are
// few, but a caller might key by something less tame).
const maxKeys = 1024

// NewSampler returns a sampler logging burst events per key and period, then one in
// every. every < 1 counts as 1 (log everything after the burst too), so a flood is
// never silenced.
func NewSampler(burst int, period time.Duration, every int) *Sampler {
	if every < 1 {
		every = 1
	}
	return &Sampler{burst: burst, period: period, every: every, now: time.Now, keys: map[string]*window{}}
}

// Allow reports whether an event for key should be logged and, when it should, how
// many events for key were left out before it.
func (s *Sampler) Allow(key string) (ok bool, suppressed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	w := s.keys[key]
	if w == nil {
		if len(s.keys) >= maxKeys {
			s.evict(now)
		}
		w = &window{start: now}
		s.keys[key] = w
	}
	if now.Sub(w.start) >= s.period {
		w.start, w.seen = now, 0
	}
	w.seen++
	if w.seen <= s.burst || (w.seen-s.burst)%s.every == 0 {
		suppressed, w.suppressed = w.suppressed, 0
		return true, suppressed
	}
	w.suppressed++
	return false, 0
}

// evict forgets keys whose window ended with nothing left unreported; if that frees
// nothing, it forgets them all, losing at worst a few suppressed counts.
func (s *Sampler) evict(now time.Time) {
	for k, w := range s.keys {
		if now.Sub(w.start) >= s.period && w.suppressed == 0 {
			delete(s.keys, k)
		}
	}
	if len(s.keys) >= maxKeys {
		clear(s.keys)
	}
}

// Warn starts a warning for key on l, or returns nil when the sampler leaves it out;
// zerolog's methods do nothing on a nil event, so callers chain as usual:
//
//	sampler.Warn(log, port).Err(err).Int("line", n).Msg("bad unit")
//
// A warning after left-out ones carries their count in the field "suppressed".
func (s *Sampler) Warn(l *zerolog.Logger, key string) *zerolog.Event {
	return s.Event(l, zerolog.WarnLevel, key)
}

// Event is Warn at any level. Events the logger's level filters out are not counted.
func (s *Sampler) Event(l *zerolog.Logger, level zerolog.Level, key string) *zerolog.Event {
	if l.GetLevel() > level || zerolog.GlobalLevel() > level {
		return nil
	}
	ok, n := s.Allow(key)
	if !ok {
		return nil
	}
	e := l.WithLevel(level)
	if n > 0 {
		e = e.Int("suppressed", n)
	}
	return e
}
