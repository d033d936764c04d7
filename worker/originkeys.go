package worker

import (
	"strings"
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
// flood fills, and floods wait behind the ports (dumpQueue). A subject is a key
// the same way, once it has had two dumps: the dumps of subjects new to the
// workers (a tool naming a new port with each dump) share one key a problem.
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
	// once are the subjects seen once, waiting for their second dump; past
	// maxSeenSubjects they are forgotten together.
	once map[string]struct{}
}

const maxSeenSubjects = 4096

type subjectOrigins struct {
	slots map[string]time.Time // origins with a key of their own: last seen
	seen  map[string]struct{}  // origins seen once
	last  time.Time            // an origin of the subject last seen
}

func newOriginKeys() *originKeys {
	return &originKeys{subj: map[string]*subjectOrigins{}, once: map[string]struct{}{}}
}

// key is the queue key of a dump on subject from origin, at now.
func (k *originKeys) key(subject, origin string, now time.Time) string {
	shared := subject + " *"
	k.mu.Lock()
	defer k.mu.Unlock()
	so := k.subj[subject]
	if so == nil {
		_, again := k.once[subject]
		if !again || len(k.subj) >= maxKeyedSubjects && !k.prune(now) {
			if !again {
				if len(k.once) >= maxSeenSubjects {
					clear(k.once)
				}
				k.once[subject] = struct{}{}
			}
			return subject[:strings.LastIndexByte(subject, '.')+1] + "* new"
		}
		delete(k.once, subject)
		so = &subjectOrigins{slots: map[string]time.Time{}, seen: map[string]struct{}{}}
		k.subj[subject] = so
	}
	so.last = now
	if origin == "" {
		return subject
	}
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
