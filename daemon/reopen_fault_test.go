package daemon_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/result"
)

// gate is the only worker on the bus: it holds every dump until the test answers it.
type gate struct {
	mu    sync.Mutex
	dumps map[uint64]*nats.Msg // by seq, first attempt only
}

func newGate(t *testing.T, nc *nats.Conn) *gate {
	t.Helper()
	g := &gate{dumps: map[uint64]*nats.Msg{}}
	sub, err := nc.QueueSubscribe(bus.Subjects{Prefix: bus.DefaultPrefix}.AllDumps(), bus.QueueGroup, func(m *nats.Msg) {
		seq, _ := strconv.ParseUint(m.Header.Get(bus.HeaderSeq), 10, 64)
		g.mu.Lock()
		defer g.mu.Unlock()
		if _, ok := g.dumps[seq]; !ok {
			g.dumps[seq] = m
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return g
}

func (g *gate) held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.dumps)
}

// answer answers the dump of seq, as a worker does.
func (g *gate) answer(t *testing.T, seq uint64) {
	t.Helper()
	g.mu.Lock()
	m := g.dumps[seq]
	g.mu.Unlock()
	if m == nil {
		t.Fatalf("no dump of unit %d", seq)
	}
	p, _ := engine.Lookup("goscore")
	out, err := p.Append(nil, m.Data)
	if err != nil {
		t.Fatal(err)
	}
	res := result.Record{Problem: "goscore", Port: m.Header.Get(bus.HeaderPort), Seq: seq, Answer: string(out), Worker: "gate",
		Origin: m.Header.Get(bus.HeaderOrigin), UnitDigest: bus.UnitDigest(m.Data)}
	data, _ := json.Marshal(res)
	if err := m.Respond(data); err != nil {
		t.Fatal(err)
	}
}

// portCounts is a port's counts as the monitor has them.
func portCounts(mon *daemon.Monitor, port string) (answered, dropped uint64) {
	for _, p := range mon.Ports() {
		if p.Port == port {
			return p.Answered, p.Dropped
		}
	}
	return 0, 0
}

// Unplug and replug with answers in flight (issue 41, item 4): in each of 50 cycles,
// 4 units are read and published; 0 to 2 are answered while the device is there,
// one while it is away, the rest once a new device is plugged in. With on_reopen =
// "drop" (the default: a scoreboard that rebooted) every answer of a unit read
// before the unplug that comes after it is dropped and counted dropped, never
// answered, and never written to the new device, whose first answer is to its own
// first unit: nothing off by one. With "write" (a cable bumped) each of them is
// written to the new device, in order, once. Every unit is answered exactly once
// or counted dropped.
func TestFaultUnplugInFlight(t *testing.T) {
	for _, mode := range []string{"", daemon.OnReopenWrite} {
		name := mode
		if name == "" {
			name = "default-drop"
		}
		t.Run(name, func(t *testing.T) { unplugInFlight(t, mode) })
	}
}

func unplugInFlight(t *testing.T, mode string) {
	const cycles, burst = 50, 4
	_, nc := startBus(t, false)
	g := newGate(t, nc)
	link := filepath.Join(t.TempDir(), "usb-scoreboard")
	mon := daemon.NewMonitor()
	d := startDaemon(t, nc, daemon.Config{
		Ports:     []daemon.PortConfig{{Name: "hall", Device: link, Problem: "goscore", OnReopen: mode}},
		ReopenMin: 2 * time.Millisecond, ReopenMax: 10 * time.Millisecond,
		RequestTimeout: time.Minute, // no unit is published again while the test holds it
		Monitor:        mon,
	})
	keep := mode == daemon.OnReopenWrite
	var (
		all      strings.Builder // everything every device received, in order
		want     []string        // the answers that must reach a device, in order
		dropped  int             // the units whose answers must be counted dropped
		seq      uint64          // the last unit sent
		k        int
		answerOf = map[uint64]string{}
	)
	pt := plug(t, link)
	for cycle := range cycles {
		var in strings.Builder
		first := seq + 1
		for range burst {
			u, a := faulttest.GoscoreBoard(k)
			k++
			seq++
			answerOf[seq] = a
			in.WriteString(u)
		}
		if _, err := pt.Master.Write([]byte(in.String())); err != nil {
			t.Fatal(err)
		}
		bustest.Wait(t, fmt.Sprintf("cycle %d: units %d to %d published", cycle, first, seq), func() (bool, string) {
			return g.held() == int(seq), fmt.Sprintf("%d dumps held; logs:\n%s", g.held(), d.logs.String())
		})
		// Answered while the device is there: read by the scoreboard.
		next := first
		var here strings.Builder
		for range cycle % 3 {
			g.answer(t, next)
			here.WriteString(answerOf[next])
			want = append(want, answerOf[next])
			next++
		}
		all.Write(readN(t, pt.Master, here.Len()))

		lost := d.logs.count(map[string]any{"message": "port lost"})
		unplug(t, link, pt)
		bustest.Wait(t, "port lost", func() (bool, string) {
			have := d.logs.count(map[string]any{"message": "port lost"})
			return have > lost, fmt.Sprintf("%d \"port lost\" lines, %d before; logs:\n%s", have, lost, d.logs.String())
		})
		// One answered while the device is away, the rest once it is back.
		var later strings.Builder
		g.answer(t, next)
		awayFrom := next
		next++
		if !keep {
			dropped++
			bustest.Wait(t, "the answer while away counted dropped", func() (bool, string) {
				_, n := portCounts(mon, "hall")
				return n == uint64(dropped), fmt.Sprintf("%d dropped, want %d; logs:\n%s", n, dropped, d.logs.String())
			})
		}
		pt = plug(t, link)
		for ; next <= seq; next++ {
			g.answer(t, next)
		}
		for s := awayFrom; s <= seq; s++ {
			if keep {
				later.WriteString(answerOf[s])
				want = append(want, answerOf[s])
			} else if s > awayFrom {
				dropped++
			}
		}
		if keep {
			all.Write(readN(t, pt.Master, later.Len()))
		} else {
			bustest.Wait(t, "the answers after the reopen counted dropped", func() (bool, string) {
				_, n := portCounts(mon, "hall")
				return n == uint64(dropped), fmt.Sprintf("%d dropped, want %d; logs:\n%s", n, dropped, d.logs.String())
			})
		}
	}
	// One unit more on the last device: its answer is the first it gets, and the right one.
	u, a := faulttest.GoscoreBoard(k)
	seq++
	if _, err := pt.Master.Write([]byte(u)); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the last unit published", func() (bool, string) { return g.held() == int(seq), "" })
	g.answer(t, seq)
	want = append(want, a)
	last := readN(t, pt.Master, len(a))
	all.Write(last)
	if string(last) != a {
		t.Errorf("the last device's first answer %q, want %q: off by one", last, a)
	}
	d.stop(t)

	counts := faulttest.Tally("unplug-in-flight-"+map[bool]string{false: "drop", true: "write"}[keep], want, all.String())
	answered, countedDropped := portCounts(mon, "hall")
	counts.Errors = int(countedDropped)
	counts.Check(t)
	t.Logf("units %d: answered %d (monitor %d), dropped %d (monitor %d)", seq, len(want), answered, dropped, countedDropped)
	if answered != uint64(len(want)) || countedDropped != uint64(dropped) || answered+countedDropped != seq {
		t.Errorf("monitor: %d answered and %d dropped of %d units; want %d and %d", answered, countedDropped, seq, len(want), dropped)
	}
	// The status line says it as the counts do.
	status := fmt.Sprintf("%d units answered, 0 errors", len(want))
	if dropped > 0 {
		status += fmt.Sprintf(", %d answers dropped", dropped)
	}
	if s := mon.Status(); !strings.Contains(s, status) {
		t.Errorf("status %q, want it to say %q", s, status)
	}
}
