package history

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
)

// ownCount is how many origins the recorder holds as the daemon's own.
func ownCount(r *Recorder) int {
	r.ownMu.Lock()
	defer r.ownMu.Unlock()
	return len(r.own)
}

// ownDump is a dump of origin's port, as a display publishes it.
func ownDump(origin string, seq uint64) *nats.Msg {
	m := nats.NewMsg(bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", "hall"))
	bus.DumpHeader{Port: "hall", Seq: seq, Origin: origin}.Put(m.Header)
	m.Header.Set(bus.HeaderMsgID, bus.DumpID(origin, seq))
	m.Data = []byte("unit")
	return m
}

// Issue 44: every port start is an origin of its own, and the recorder kept each
// one it was given for the daemon's life. A port that restarts 20,000 times (a
// board that comes and goes for weeks) leaves at most ownOrigins of them; the
// ports that keep playing, and the newest, are still known as the daemon's own:
// their copies from the bus are left to Record, not queued twice.
func TestRecorderOwnOriginsBounded(t *testing.T) {
	b := bustest.Start(t, bustest.Options{Off: true})
	r, err := NewRecorder(b.Daemon(), bus.DefaultPrefix, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	steady := bus.NewOrigin()
	const starts = 20000
	for i := range starts {
		r.Record(ownDump(bus.NewOrigin(), 1)) // the flapping port, started again
		if i%100 == 0 {
			r.Record(ownDump(steady, uint64(i/100+1))) // a port that plays on
		}
	}
	last := bus.NewOrigin()
	r.Record(ownDump(last, 1))
	if n := ownCount(r); n > ownOrigins {
		t.Fatalf("after %d port starts the recorder holds %d origins as its own, want at most %d", starts+2, n, ownOrigins)
	}
	for name, origin := range map[string]string{"the steady port's": steady, "the newest port's": last} {
		r.mu.Lock()
		before := len(r.fresh)
		r.mu.Unlock()
		r.fromBus(ownDump(origin, 99999))
		r.mu.Lock()
		after := len(r.fresh)
		r.mu.Unlock()
		if after != before {
			t.Errorf("%s dump from the bus was queued (%d -> %d): its origin was forgotten", name, before, after)
		}
	}
}
