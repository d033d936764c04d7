package daemon_test

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/worker"
)

// bigCapture is a valid capture unit of 25,000 moves, its lines padded with blanks
// to 63 bytes: 1.6 MB, near the problem's largest.
func bigCapture(t testing.TB) (unit []byte, answer string) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("1000 25000\n")
	for i := range 25000 {
		fmt.Fprintf(&b, "%-63s\n", fmt.Sprintf("%d %d", i%158, i/158))
	}
	p, _ := engine.Lookup("capture")
	ans, err := p.Solve(b.Bytes())
	if err != nil {
		t.Fatalf("the capture unit: %v", err)
	}
	return b.Bytes(), string(ans.AppendText(nil))
}

// Issue 41, review F10: a fast device (a pty) sends 32 capture units of 1.6 MB at
// once while no worker answers: the units the port has in flight stay within
// Config.MaxInFlightBytes and one unit (by count alone, 256 units, 400 MB, were
// let in), the reader waiting with the rest unread; once workers answer, every unit
// read is answered, in order, none lost.
func TestInFlightBytesBounded(t *testing.T) {
	_, nc := startBus(t, false)
	unit, answer := bigCapture(t)
	const units = 32
	// A holder takes the port's dumps, as a worker that never answers would, and
	// keeps them: what it holds is the port's units in flight.
	var mu sync.Mutex
	held := map[string]*nats.Msg{} // by seq: a dump published again is one unit
	heldBytes, maxHeld := 0, 0
	holder, err := nc.QueueSubscribe("scoreboard.dump.capture.*", bus.QueueGroup, func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := held[m.Header.Get(bus.HeaderSeq)]; !ok {
			heldBytes += len(m.Data)
			maxHeld = max(maxHeld, heldBytes)
		}
		held[m.Header.Get(bus.HeaderSeq)] = m
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = holder.SetPendingLimits(-1, -1)
	pt := newPTY(t)
	cfg := daemon.Config{RequestTimeout: time.Minute, Ports: []daemon.PortConfig{{Device: pt.Path, Problem: "capture"}}}
	bound := daemon.DefaultMaxInFlightBytes
	d := startDaemonLogging(t, nc, cfg, zerolog.InfoLevel)
	waitOpened(t, pt)
	var written atomic.Int64
	go func() {
		for range units {
			if _, err := pt.Master.Write(unit); err != nil {
				return
			}
			written.Add(1)
		}
	}()
	heldNow := func() (int, int) { mu.Lock(); defer mu.Unlock(); return len(held), heldBytes }
	// The bound's worth of units comes in flight; then the reader waits.
	full := bound / len(unit)
	bustest.Wait(t, "the port's units in flight", func() (bool, string) {
		n, b := heldNow()
		return n >= full, fmt.Sprintf("%d units (%d bytes) in flight, %d written to the device", n, b, written.Load())
	})
	// A few more seconds of a fast device: no unit more comes in flight.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
		if _, b := heldNow(); b > bound+len(unit) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	n, b := heldNow()
	mu.Lock()
	most := maxHeld
	mu.Unlock()
	t.Logf("%d units of %d bytes written to the device: %d (%d bytes, at most %d) in flight, bound %d", written.Load(), len(unit), n, b, most, bound)
	if most > bound+len(unit) {
		t.Fatalf("%d bytes of units in flight (%d units), want at most %d and one unit", most, n, bound)
	}
	// Workers come: the held dumps are handed to them, and every unit is answered.
	if err := holder.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	bustest.StartWorkers(t, nc, worker.Options{Problems: []string{"capture"}, Concurrency: 2}, bustest.Logger(t))
	mu.Lock()
	for _, m := range held {
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	mu.Unlock()
	want := bytes.Repeat([]byte(answer), units)
	if got := readN(t, pt.Master, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("answers %q, want %d of %q", got, units, answer)
	}
	if c := d.logs.count(map[string]any{"message": "bad unit"}); c != 0 {
		t.Errorf("%d bad units logged:\n%s", c, d.logs.String())
	}
}
