package web

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// historyReads bounds the page's reads of the history (/api/history) that run at
// once in this process: half the cores, at least one. A crowd opening a board's
// page at once queues for them rather than taking every core from the ports and the
// workers on the same machine (a Pi is often the club's only one); each read is of
// the stream's tail, a few milliseconds, so the queue moves fast.
var historyReads = newReadGate(max(1, runtime.GOMAXPROCS(0)/2))

// readGate lets at most its size of reads run at once; the others wait their turn.
type readGate struct {
	slots chan struct{}

	mu            sync.Mutex
	running, most int
}

func newReadGate(n int) *readGate { return &readGate{slots: make(chan struct{}, n)} }

// enter waits for a turn, as long as ctx allows; leave ends it.
func (g *readGate) enter(ctx context.Context) (leave func(), err error) {
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("the page's history reads are all busy (%d at once): try again in a moment", cap(g.slots))
	}
	g.mu.Lock()
	g.running++
	g.most = max(g.most, g.running)
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
		<-g.slots
	}, nil
}

// HistoryReads says how many of the page's history reads this process runs now,
// the most it ever ran at once, and the bound on both: the bound is a promise the
// tests check from outside the package.
func HistoryReads() (now, most, bound int) {
	g := historyReads
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running, g.most, cap(g.slots)
}
