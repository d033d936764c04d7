package worker

import (
	"sync"
	"time"
)

// The dumps queue (dumpQueue) serves its keys fairly, so a key is a share of the
// solvers' time. Keyed by subject and origin alone, anyone may publish dumps with a
// fresh Scoreboard-Origin each: every one is a new key with one dump, never a flood,
// each served ahead of a real port's (issue 41). originKeys bounds the keys of a
// subject: an origin has a key of its own only once it has published twice (a
// port's daemon and a send command publish every unit under one origin), at most
// maxOriginSlots of them a subject, each kept while it publishes within
// originIdle. The dumps of every other origin of the subject share one key, which a
// flood fills, and floods wait behind the ports (dumpQueue).
const (
	maxOriginSlots = 4
	originIdle     = time.Minute
	// maxSeenOrigins bounds the origins of a subject seen once, waiting for their
	// second dump; past it they are forgotten together.
	maxSeenOrigins = 64
	// maxKeyedSubjects bounds the subjects whose origins are kept; past it, those
	// without an origin seen within originIdle are forgotten, and while none is, a
	// new subject's dumps share its subject key.
	maxKeyedSubjects = 4096
)

type originKeys struct {
	mu   sync.Mutex
	subj map[string]*subjectOrigins
}

type subjectOrigins struct {
	slots map[string]time.Time // origins with a key of their own: last seen
	seen  map[string]struct{}  // origins seen once
	last  time.Time            // an origin of the subject last seen
}

func newOriginKeys() *originKeys { return &originKeys{subj: map[string]*subjectOrigins{}} }

// key is the queue key of a dump on subject from origin, at now.
func (k *originKeys) key(subject, origin string, now time.Time) string {
	if origin == "" {
		return subject
	}
	shared := subject + " *"
	k.mu.Lock()
	defer k.mu.Unlock()
	so := k.subj[subject]
	if so == nil {
		if len(k.subj) >= maxKeyedSubjects && !k.prune(now) {
			return shared
		}
		so = &subjectOrigins{slots: map[string]time.Time{}, seen: map[string]struct{}{}}
		k.subj[subject] = so
	}
	so.last = now
	own := subject + " " + origin
	if _, ok := so.slots[origin]; ok {
		so.slots[origin] = now
		return own
	}
	for o, at := range so.slots {
		if now.Sub(at) > originIdle {
			delete(so.slots, o)
		}
	}
	if _, ok := so.seen[origin]; ok && len(so.slots) < maxOriginSlots {
		delete(so.seen, origin)
		so.slots[origin] = now
		return own
	}
	if len(so.seen) >= maxSeenOrigins {
		clear(so.seen)
	}
	so.seen[origin] = struct{}{}
	return shared
}

// prune forgets the subjects with no origin seen within originIdle; it reports
// whether it made room.
func (k *originKeys) prune(now time.Time) bool {
	n := len(k.subj)
	for s, so := range k.subj {
		if now.Sub(so.last) > originIdle {
			delete(k.subj, s)
		}
	}
	return len(k.subj) < n
}
