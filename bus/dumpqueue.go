package bus

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// The bounds of the workers' queue of dumps, kept per dump subject (a problem and a
// port). A port's own daemon has at most portInFlight units in flight
// (daemon.Config.MaxInFlight), so a real port never comes near them; a publisher
// flooding one subject reaches them, and only its own dumps are then dropped. The
// total bounds memory, whatever the number of subjects used: the largest unit is
// 1.65 MB, so 48 MB is about 30 of those.
const (
	// portInFlight is the most dumps a daemon's port has in flight. A subject with
	// no more queued is served before those with more, which only a flood from
	// outside a port fills: a port's own units, during a drain above all, never
	// wait behind a flood, and are never shed to make room for one.
	portInFlight  = 256
	maxPortDumps  = 4096
	maxPortBytes  = 32 << 20
	maxTotalDumps = 16384
	maxTotalBytes = 48 << 20

	pendingDumps     = 64 << 10
	pendingDumpBytes = 16 << 20
)

// dumpQueue holds the dumps the workers took and have not solved yet, one FIFO per
// dump subject, served round-robin: each solver takes the oldest dump of the next
// subject with at most portInFlight queued, or of the next one at all when none has
// so few. Keyed by subject, copies of a port's dumps published on other problems'
// subjects queue apart from it. Pushing never waits. It is safe for concurrent use.
type dumpQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond // a dump was pushed, or the queue closed, or it became empty
	ports  map[string]*portDumps
	ring   []*portDumps // the subjects with queued dumps, in turn
	turn   int          // index in ring of the next port to serve
	n      int          // dumps queued
	bytes  int          // their payload bytes
	busy   int          // dumps popped and not yet done
	closed bool
}

type portDumps struct {
	port  string
	msgs  []*nats.Msg
	bytes int
}

func newDumpQueue() *dumpQueue {
	q := &dumpQueue{ports: map[string]*portDumps{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push queues msg under port (its subject). When port's queue is full, msg is
// returned in shed; when the total is full, the newest dumps of the queue with the
// most bytes are shed to make room, taken first among the floods (more than
// portInFlight queued), msg itself if that queue is its own. ok is false once the
// queue is closed: msg was not taken.
func (q *dumpQueue) push(port string, msg *nats.Msg) (shed []*nats.Msg, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, false
	}
	size := len(msg.Data)
	pd := q.ports[port]
	if pd != nil && (len(pd.msgs) >= maxPortDumps || pd.bytes+size > maxPortBytes) {
		return []*nats.Msg{msg}, true
	}
	for q.n >= maxTotalDumps || q.bytes+size > maxTotalBytes {
		big := q.largest()
		if big == nil || big.port == port {
			return append(shed, msg), true
		}
		last := big.msgs[len(big.msgs)-1]
		big.msgs[len(big.msgs)-1] = nil
		big.msgs = big.msgs[:len(big.msgs)-1]
		big.bytes -= len(last.Data)
		q.n--
		q.bytes -= len(last.Data)
		shed = append(shed, last)
		if len(big.msgs) == 0 {
			q.remove(big)
		}
	}
	if pd == nil {
		pd = &portDumps{port: port}
		q.ports[port] = pd
		q.ring = append(q.ring, pd)
	}
	pd.msgs = append(pd.msgs, msg)
	pd.bytes += size
	q.n++
	q.bytes += size
	q.cond.Signal()
	return shed, true
}

// largest is the queue with the most bytes, among the floods if there is one.
func (q *dumpQueue) largest() *portDumps {
	var big *portDumps
	for _, pd := range q.ring {
		if big == nil || flood(pd) && !flood(big) || flood(pd) == flood(big) && pd.bytes > big.bytes {
			big = pd
		}
	}
	return big
}

// flood says whether pd holds more dumps than a daemon's port ever has in flight.
func flood(pd *portDumps) bool { return len(pd.msgs) > portInFlight }

// remove forgets pd, whose queue is empty.
func (q *dumpQueue) remove(pd *portDumps) {
	delete(q.ports, pd.port)
	for i, r := range q.ring {
		if r == pd {
			q.ring = append(q.ring[:i], q.ring[i+1:]...)
			if q.turn > i {
				q.turn--
			}
			break
		}
	}
	if q.turn >= len(q.ring) {
		q.turn = 0
	}
}

// pop waits for a dump and returns the oldest of the next queue in turn, skipping
// floods while another queue has dumps; the dump is busy until the solver calls
// done. It returns false once the queue is closed.
func (q *dumpQueue) pop() (*nats.Msg, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, false
	}
	// At most maxTotalDumps/portInFlight queues are floods: the scan is short.
	for k := range len(q.ring) {
		if i := (q.turn + k) % len(q.ring); !flood(q.ring[i]) {
			q.turn = i
			break
		}
	}
	pd := q.ring[q.turn]
	msg := pd.msgs[0]
	pd.msgs[0] = nil
	pd.msgs = pd.msgs[1:]
	pd.bytes -= len(msg.Data)
	q.n--
	q.bytes -= len(msg.Data)
	if len(pd.msgs) == 0 {
		q.remove(pd)
	} else {
		q.turn = (q.turn + 1) % len(q.ring)
	}
	q.busy++
	return msg, true
}

// done marks a popped dump solved.
func (q *dumpQueue) done() {
	q.mu.Lock()
	q.busy--
	q.mu.Unlock()
	q.cond.Broadcast()
}

// waitEmpty waits until no dump is queued or being solved, or deadline passes; it
// reports whether the queue emptied.
func (q *dumpQueue) waitEmpty(deadline time.Time) bool {
	// sync.Cond has no timeout: a timer wakes the waiters at the deadline.
	t := time.AfterFunc(time.Until(deadline), func() {
		q.mu.Lock()
		q.mu.Unlock()
		q.cond.Broadcast()
	})
	defer t.Stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n+q.busy > 0 && time.Now().Before(deadline) {
		q.cond.Wait()
	}
	return q.n+q.busy == 0
}

// close stops the queue: push takes nothing more, pop returns false, and the dumps
// still queued are returned, for their error results.
func (q *dumpQueue) close() []*nats.Msg {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	var left []*nats.Msg
	for _, pd := range q.ring {
		left = append(left, pd.msgs...)
	}
	q.ring, q.ports, q.n, q.bytes = nil, map[string]*portDumps{}, 0, 0
	q.cond.Broadcast()
	return left
}
