package worker

import (
	"container/heap"
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
	// outside a port fills: a port's own units, during a drain above all, do not
	// wait behind a flood, and are not shed to make room for one.
	portInFlight  = 256
	maxPortDumps  = 4096
	maxPortBytes  = 32 << 20
	maxTotalDumps = 16384
	maxTotalBytes = 48 << 20

	pendingDumps     = 64 << 10
	pendingDumpBytes = 16 << 20
)

// dumpQueue holds the dumps the workers took and have not solved yet, one FIFO per
// dump subject. Each solver takes the oldest dump of the subject that has had the
// least of the solvers' time so far, among those with at most portInFlight queued
// (any subject when none has so few); equal ones are served in turn. Weighed by
// time, a port's light units never wait behind another subject's heavy dumps for
// more than the one each solver is on: the port with 256 boards to answer in a
// drain gets them all answered while a flood of 10 ms dumps gets one. The workers
// key it by subject and origin (takeDump): a flood on a port's own subject queues
// apart from the port's dumps. Pushing never waits. It is safe for concurrent use.
type dumpQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond // a dump was pushed, or the queue closed, or it became empty
	ports  map[string]*portDumps
	heap   portHeap // the subjects with queued dumps, next to serve first
	turn   uint64   // stamps the subjects served, for their turn among equals
	n      int      // dumps queued
	bytes  int      // their payload bytes
	busy   int      // dumps popped and not yet done
	closed bool
}

type portDumps struct {
	port  string
	msgs  []*nats.Msg
	bytes int
	// used is the solvers' time the subject has had since it was queued, counting
	// each dump being solved at its last one's time until it is done.
	used, last time.Duration
	turn       uint64 // when it was last served, or queued
	index      int    // in the heap
}

// before says whether a is to be served before b.
func before(a, b *portDumps) bool {
	if fa, fb := flood(a), flood(b); fa != fb {
		return fb
	}
	if a.used != b.used {
		return a.used < b.used
	}
	return a.turn < b.turn
}

// flood says whether pd holds more dumps than a daemon's port ever has in flight.
func flood(pd *portDumps) bool { return len(pd.msgs) > portInFlight }

type portHeap []*portDumps

func (h portHeap) Len() int           { return len(h) }
func (h portHeap) Less(i, j int) bool { return before(h[i], h[j]) }
func (h portHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *portHeap) Push(x any) {
	pd := x.(*portDumps)
	pd.index = len(*h)
	*h = append(*h, pd)
}
func (h *portHeap) Pop() any {
	old := *h
	pd := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return pd
}

func newDumpQueue() *dumpQueue {
	q := &dumpQueue{ports: map[string]*portDumps{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push queues msg under port (its subject and origin). When port's queue is full, msg is
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
		} else {
			heap.Fix(&q.heap, big.index)
		}
	}
	if pd == nil {
		// A subject queued anew starts level with the least served: neither owed
		// the time it had before it emptied, nor a credit against the others.
		pd = &portDumps{port: port, turn: q.turn}
		if len(q.heap) > 0 {
			pd.used = q.heap[0].used
			for _, o := range q.heap {
				pd.used = min(pd.used, o.used)
			}
		}
		q.turn++
		q.ports[port] = pd
		heap.Push(&q.heap, pd)
	}
	pd.msgs = append(pd.msgs, msg)
	pd.bytes += size
	q.n++
	q.bytes += size
	heap.Fix(&q.heap, pd.index)
	q.cond.Signal()
	return shed, true
}

// largest is the queue with the most bytes, among the floods if there is one.
func (q *dumpQueue) largest() *portDumps {
	var big *portDumps
	for _, pd := range q.heap {
		if big == nil || flood(pd) && !flood(big) || flood(pd) == flood(big) && pd.bytes > big.bytes {
			big = pd
		}
	}
	return big
}

// remove forgets pd, whose queue is empty.
func (q *dumpQueue) remove(pd *portDumps) {
	delete(q.ports, pd.port)
	heap.Remove(&q.heap, pd.index)
	pd.index = -1
}

// popped is a dump a solver took, and its subject's queue.
type popped struct {
	msg     *nats.Msg
	pd      *portDumps
	charged time.Duration // what pop charged pd for it, until done knows
}

// pop waits for a dump and returns the oldest of the subject to serve next (see
// dumpQueue); the dump is busy until the solver calls done. It returns false once
// the queue is closed.
func (q *dumpQueue) pop() (popped, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return popped{}, false
	}
	pd := q.heap[0]
	msg := pd.msgs[0]
	pd.msgs[0] = nil
	pd.msgs = pd.msgs[1:]
	pd.bytes -= len(msg.Data)
	q.n--
	q.bytes -= len(msg.Data)
	pd.used += pd.last
	pd.turn = q.turn
	q.turn++
	if len(pd.msgs) == 0 {
		q.remove(pd)
	} else {
		heap.Fix(&q.heap, pd.index)
	}
	q.busy++
	return popped{msg, pd, pd.last}, true
}

// done marks a popped dump solved, in took: its subject is charged for it.
func (q *dumpQueue) done(p popped, took time.Duration) {
	q.mu.Lock()
	q.busy--
	if pd := p.pd; pd != nil {
		pd.used += took - p.charged
		pd.last = took
		if pd.index >= 0 {
			heap.Fix(&q.heap, pd.index)
		}
	}
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
	for _, pd := range q.heap {
		left = append(left, pd.msgs...)
		pd.index = -1
	}
	q.heap, q.ports, q.n, q.bytes = nil, map[string]*portDumps{}, 0, 0
	q.cond.Broadcast()
	return left
}
