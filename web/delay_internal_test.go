package web

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestDelayStageBound: a port that floods while its club is held keeps its first
// maxHeld-1 values in order and its latest (the newest held is replaced beyond the
// bound); when the club's delay is set to 0 they come out at once, the latest last.
// (Their order out is TestDelayHoldsEveryEndpoint's: a hub's subscriber that lags
// 4096 events is dropped.)
func TestDelayStageBound(t *testing.T) {
	s := &Server{hub: newHub(), log: zerolog.Nop()}
	delays := NewDelays(0, map[string]time.Duration{"north": time.Hour})
	s.WithDelays(delays)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() { s.hub.run(ctx) })
	const sent = maxHeld + 904
	now := time.Now()
	for rev := uint64(1); rev <= sent; rev++ {
		// An error result: nothing to draw, so the test is the stage's alone.
		v := fmt.Appendf(nil, `{"problem":"goscore","port":"t1","seq":%d,"error":"e"}`, rev)
		s.held.take(ctx, heldValue{rev: rev, stored: now, value: v}, "north.t1")
	}
	s.held.mu.Lock()
	p := s.held.ports["north.t1"]
	n, first, last := len(p.held), p.held[0].rev, p.held[len(p.held)-1].rev
	s.held.mu.Unlock()
	if n != maxHeld || first != 1 || last != sent {
		t.Fatalf("held %d values, revisions %d to %d; want %d, from 1, the last %d", n, first, last, maxHeld, sent)
	}
	if b := s.hub.board(ctx, "north.t1"); b != nil {
		t.Fatalf("a held port is on the hub: unit %d", b.Seq)
	}
	delays.SetClubs(nil) // north back at the page's 0: out at once
	var b *Board
	deadline := time.Now().Add(time.Minute)
	for b == nil || b.Seq != sent {
		if time.Now().After(deadline) {
			t.Fatalf("the hub shows %+v a minute after the delay was set to 0; want unit %d", b, sent)
		}
		time.Sleep(10 * time.Millisecond) // a poll's pace
		b = s.hub.board(ctx, "north.t1")
	}
	s.held.mu.Lock()
	n = len(p.held)
	s.held.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d values still held once the latest is out", n)
	}
}
