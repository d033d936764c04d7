package daemon

import (
	"sync"
	"time"
)

// DefaultStoreWait bounds how long a display writer holds an answer for the history
// to store its unit's result (Config.StoreWait): past it the answer is written
// anyway (the ports are never blocked by the history), counted and logged.
const DefaultStoreWait = 2 * time.Second

// Stored tells the display writers which of their units have their result stored in
// the history's stream, so that each holds an answer until its result is stored: a
// kill -9 between the answer on the port and the result in the stream would lose the
// result of an answered unit. The history's recorder notes every result the stream
// acks (Note), from the ack of its own publish: nothing else in the stream, nor a
// reader behind it, holds a note back. Each display writer takes those of its own
// origin. A message the stream acked is in the store's file already (an R1 file
// store writes it before it acks; a replicated one has its quorum), so it survives
// a kill -9 of the daemon.
//
// Holding costs a round trip through the stream, for a run of answers at once: the
// display writer writes every answer stored, in order, as soon as it learns it.
type Stored struct {
	storing func() bool

	mu    sync.RWMutex
	sinks map[string]*storedSink // by the display writer's origin
}

// NewStored makes the notices. storing says whether the history is storing now (the
// Keeper's state): while it is not, nothing is held. nil means always.
func NewStored(storing func() bool) *Stored {
	return &Stored{storing: storing, sinks: map[string]*storedSink{}}
}

// Note tells the display writer of origin, if any, that its unit seq has its result
// stored. It never waits for the display writer. Safe for concurrent use.
func (s *Stored) Note(origin string, seq uint64) {
	s.mu.RLock()
	k := s.sinks[origin]
	s.mu.RUnlock()
	if k == nil {
		return
	}
	k.mu.Lock()
	k.seqs = append(k.seqs, seq)
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// holding says whether answers are held for the history now.
func (s *Stored) holding() bool { return s.storing == nil || s.storing() }

func (s *Stored) open(origin string) *storedSink {
	k := &storedSink{wake: make(chan struct{}, 1)}
	s.mu.Lock()
	s.sinks[origin] = k
	s.mu.Unlock()
	return k
}

func (s *Stored) close(origin string) {
	s.mu.Lock()
	delete(s.sinks, origin)
	s.mu.Unlock()
}

// storedSink is one display writer's notices: the seqs noted since it last took
// them, and a wake-up.
type storedSink struct {
	mu   sync.Mutex
	seqs []uint64
	wake chan struct{}
}

// take hands the seqs noted so far over, in a slice given back for reuse.
func (k *storedSink) take(reuse []uint64) []uint64 {
	k.mu.Lock()
	seqs := k.seqs
	k.seqs = reuse[:0]
	k.mu.Unlock()
	return seqs
}
