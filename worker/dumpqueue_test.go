package worker

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
)

func dump(port string, size int) *nats.Msg {
	return &nats.Msg{Subject: "scoreboard.dump.goscore." + port, Data: make([]byte, size)}
}

// The ports are served in turn, each in its own order, whatever the number each has
// queued.
func TestDumpQueueRoundRobin(t *testing.T) {
	q := newDumpQueue()
	for i := range 100 {
		q.push("flood", &nats.Msg{Subject: "flood", Data: []byte{byte(i)}})
	}
	for i := range 3 {
		q.push("hall", &nats.Msg{Subject: "hall", Data: []byte{byte(i)}})
	}
	var got []string
	for range 8 {
		p, ok := q.pop()
		if !ok {
			t.Fatal("pop: closed")
		}
		got = append(got, p.msg.Subject+string('0'+rune(p.msg.Data[0])))
		q.done(p, 0)
	}
	if want := "flood0 hall0 flood1 hall1 flood2 hall2 flood3 flood4"; strings.Join(got, " ") != want {
		t.Fatalf("served %v, want %s", got, want)
	}
}

// A subject with more dumps queued than a daemon's port ever has in flight is a
// flood: the port's own dumps are served before it, in turn with other ports, and
// when the total is full the flood gives up its newest dumps, even with fewer bytes.
func TestDumpQueuePortBeforeFlood(t *testing.T) {
	q := newDumpQueue()
	for range portInFlight + 1 {
		q.push("flood", dump("flood", 1))
	}
	for range 2 {
		q.push("hall", dump("hall", 1))
		q.push("lobby", dump("lobby", 1))
	}
	var got []string
	for range 6 {
		p, ok := q.pop()
		if !ok {
			t.Fatal("pop: closed")
		}
		got = append(got, strings.TrimPrefix(p.msg.Subject, "scoreboard.dump.goscore."))
		q.done(p, 0)
	}
	// The flood is served once no port has a dump, and is served in turn again once
	// it is down to what a port may have.
	if want := "hall lobby hall lobby flood flood"; strings.Join(got, " ") != want {
		t.Fatalf("served %v, want %s", got, want)
	}
	q = newDumpQueue()
	for range portInFlight + 1 {
		q.push("flood", dump("flood", 1))
	}
	q.push("hall", dump("hall", maxTotalBytes-2*portInFlight))
	if s, _ := q.push("lobby", dump("lobby", portInFlight)); len(s) != 1 || !strings.HasSuffix(s[0].Subject, ".flood") {
		t.Fatalf("total full: shed %v, want the flood's newest", s)
	}
}

// A port's queue is bounded in dumps and bytes: its excess is shed, not another
// port's dumps. When the total is full, the port with the most bytes queued gives up
// its newest dumps.
func TestDumpQueueBounds(t *testing.T) {
	q := newDumpQueue()
	shed := 0
	for range maxPortDumps + 10 {
		s, ok := q.push("flood", dump("flood", 1))
		if !ok {
			t.Fatal("push: closed")
		}
		shed += len(s)
	}
	if shed != 10 || q.n != maxPortDumps {
		t.Fatalf("%d shed, %d queued; want 10 and %d", shed, q.n, maxPortDumps)
	}
	// Big dumps on two other ports up to the total: "big" has the most bytes, and
	// pays for "hall".
	q = newDumpQueue()
	big := maxPortBytes / 2
	for range 2 {
		if s, _ := q.push("big", dump("big", big)); len(s) != 0 {
			t.Fatalf("%d shed below the bounds", len(s))
		}
	}
	if s, _ := q.push("big", dump("big", big)); len(s) != 1 || s[0].Subject != "scoreboard.dump.goscore.big" {
		t.Fatalf("over its port's bound: shed %d, want the dump itself", len(s))
	}
	for range maxTotalBytes/big - 2 {
		if s, _ := q.push("other", dump("other", big-1)); len(s) != 0 {
			t.Fatalf("%d shed below the total", len(s))
		}
	}
	s, _ := q.push("hall", dump("hall", 100))
	if len(s) != 1 || !strings.HasSuffix(s[0].Subject, ".big") {
		t.Fatalf("total full: shed %d (%v), want big's newest", len(s), s)
	}
	if q.bytes > maxTotalBytes || q.ports["hall"] == nil {
		t.Fatalf("%d bytes queued, hall queued %v", q.bytes, q.ports["hall"] != nil)
	}
	// Closed: nothing more taken, and what is left comes back for its error results.
	left := q.close()
	if len(left) != q.n+len(left) || len(left) == 0 {
		t.Fatalf("close left %d", len(left))
	}
	if _, ok := q.push("hall", dump("hall", 1)); ok {
		t.Fatal("push after close taken")
	}
	if _, ok := q.pop(); ok {
		t.Fatal("pop after close")
	}
}

// waitEmpty returns at its deadline while a dump is being solved, and at once when
// the last one is done.
func TestDumpQueueWaitEmpty(t *testing.T) {
	q := newDumpQueue()
	q.push("hall", dump("hall", 1))
	p, ok := q.pop()
	if !ok {
		t.Fatal("pop")
	}
	if q.waitEmpty(time.Now().Add(20 * time.Millisecond)) {
		t.Fatal("empty while a dump is being solved")
	}
	done := make(chan bool)
	go func() { done <- q.waitEmpty(time.Now().Add(time.Hour)) }()
	q.done(p, time.Millisecond)
	if !<-done {
		t.Fatal("not empty once done")
	}
}

// bus.Subjects share the solvers' time, not their turns: a port's light units are all
// served before another subject's second heavy dump, and a heavy dump being solved
// is charged at once, so that a second solver does not take the next one too.
func TestDumpQueueSharesTime(t *testing.T) {
	q := newDumpQueue()
	for range 50 {
		q.push("heavy", dump("heavy", 1))
	}
	for range 100 {
		q.push("hall", dump("hall", 1))
	}
	pop := func() popped {
		p, ok := q.pop()
		if !ok {
			t.Fatal("pop: closed")
		}
		return p
	}
	var order []string
	took := map[string]time.Duration{"heavy": 10 * time.Millisecond, "hall": time.Microsecond}
	for range 101 {
		p := pop()
		port := strings.TrimPrefix(p.msg.Subject, "scoreboard.dump.goscore.")
		order = append(order, port)
		q.done(p, took[port])
	}
	if order[0] != "heavy" || strings.Count(strings.Join(order, " "), "heavy") != 1 {
		t.Fatalf("served %v; want one heavy dump, then every hall one", order)
	}
	// Two solvers: the first takes a heavy dump, charged its last time; the second,
	// with hall queued again, takes hall's.
	q.push("hall", dump("hall", 1))
	a, b := pop(), pop()
	if !strings.HasSuffix(a.msg.Subject, ".heavy") || !strings.HasSuffix(b.msg.Subject, ".hall") {
		t.Fatalf("two solvers took %s and %s; want heavy, then hall", a.msg.Subject, b.msg.Subject)
	}
}

// Issue 41: a tool floods a real port's own subject with dumps each under a fresh
// Scoreboard-Origin, ten for each one solved, while the port publishes one dump
// every fifth solve under its own origin. Counted in dumps solved, not in time:
// the port's dumps wait behind one dump at most (p99), none is shed, and the flood
// has the rest of the solvers' time.
func TestDumpQueueFreshOrigins(t *testing.T) {
	// The same flood with a fresh port name on every dump, and with both.
	for _, c := range []struct {
		name        string
		port        func(k int) string
		freshOrigin bool
	}{
		{"fresh-origins", func(int) string { return "hall" }, true},
		{"fresh-ports", func(k int) string { return fmt.Sprintf("p%d", k) }, false},
		{"fresh-ports-and-origins", func(k int) string { return fmt.Sprintf("p%d", k) }, true},
	} {
		t.Run(c.name, func(t *testing.T) { freshFlood(t, c.port, c.freshOrigin) })
	}
}

func freshFlood(t *testing.T, floodPort func(k int) string, freshOrigin bool) {
	w := &Workers{keys: newOriginKeys()}
	q := newDumpQueue()
	now := time.Unix(0, 0)
	const steps = 5000
	var (
		waited       []int
		queuedAt     = map[*nats.Msg]int{}
		portSent     int
		portShed     int
		floodSolved  int
		solved       int
		floodOrigins int
	)
	push := func(m *nats.Msg) {
		shed, _ := q.push(w.queueKey(m, now), m)
		for _, s := range shed {
			if s.Header.Get(bus.HeaderOrigin) == "port" {
				portShed++
				delete(queuedAt, s)
			}
		}
	}
	for step := range steps {
		now = now.Add(time.Millisecond)
		for range 10 {
			floodOrigins++
			m := dump(floodPort(floodOrigins), 1)
			if freshOrigin {
				m.Header = nats.Header{bus.HeaderOrigin: {fmt.Sprintf("fresh%d", floodOrigins)}}
			}
			push(m)
		}
		if step%5 == 0 {
			m := dump("hall", 1)
			m.Header = nats.Header{bus.HeaderOrigin: {"port"}}
			queuedAt[m] = solved
			portSent++
			push(m)
		}
		p, ok := q.pop()
		if !ok {
			t.Fatal("pop: closed")
		}
		if at, mine := queuedAt[p.msg]; mine {
			waited = append(waited, solved-at)
			delete(queuedAt, p.msg)
		} else {
			floodSolved++
		}
		solved++
		q.done(p, time.Millisecond)
	}
	slices.Sort(waited)
	p99 := -1
	if len(waited) > 0 {
		p99 = waited[len(waited)*99/100]
	}
	t.Logf("port: %d dumps sent, %d solved, %d shed, %d still queued; waited p99 %d dumps solved before it; flood: %d solved of %d",
		portSent, len(waited), portShed, len(queuedAt), p99, floodSolved, floodOrigins)
	if portShed != 0 || len(waited) < portSent-1 || p99 > 1 {
		t.Errorf("the port's dumps: %d shed, %d of %d solved, p99 wait %d dumps; want none shed, all solved, p99 at most 1",
			portShed, len(waited), portSent, p99)
	}
	if floodSolved < steps*3/4 {
		t.Errorf("the flood had %d of %d solves: the port's share left it too little", floodSolved, steps)
	}
}
