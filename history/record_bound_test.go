package history

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
)

// Issue 40: the messages published and not yet acked count toward recordBytes;
// only the queued ones can be dropped. Against a real server whose stream never
// acks (a subscriber on the Repair subjects that takes every publish and answers
// none: a leader lost with the publishes in hand), the recorder is given capture-
// sized dumps (1.6 MB) one after another, each once the last is in flight, until
// the unacknowledged alone are at the bound and more keep coming: it never panics,
// holds no more than recordBytes, and counts every message it does not keep as
// dropped.
func TestRecorderBoundWithUnackedAlone(t *testing.T) {
	b := bustest.Start(t, bustest.Options{Off: true})
	silent := b.Daemon()
	var taken atomic.Int64
	if _, err := silent.Subscribe(bus.Subjects{Prefix: bus.DefaultPrefix}.AllRepairs(), func(*nats.Msg) { taken.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := silent.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewRecorder(b.Daemon(), bus.DefaultPrefix, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = r.Run(ctx, func() time.Time { return time.Now() }) })
	defer func() { cancel(); wg.Wait() }()

	const size = 1600 << 10
	const n = 2 * recordBytes / size // twice the bound
	unit := make([]byte, size)
	for i := 1; i <= n; i++ {
		m := nats.NewMsg(bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("capture", "hall"))
		m.Header.Set(bus.HeaderMsgID, bus.DumpID("port", uint64(i)))
		m.Header.Set(bus.HeaderSeq, strconv.Itoa(i))
		m.Data = unit
		r.Record(m) // panicked here before the fix, once the unacked alone passed the bound
		// Each once the last is published (in flight) or dropped: the queues are
		// then empty, and only the unacked count.
		bustest.Wait(t, "the last in flight", func() (bool, string) {
			r.mu.Lock()
			queued, bytes := len(r.again)+len(r.fresh), r.bytes
			r.mu.Unlock()
			settled := uint64(r.Waiting())+r.Dropped() == uint64(i)
			return queued == 0 && settled, fmt.Sprintf("%d queued, %d bytes, %d in flight, %d dropped", queued, bytes, r.Waiting(), r.Dropped())
		})
	}
	r.mu.Lock()
	bytes := r.bytes
	r.mu.Unlock()
	held, dropped := r.Waiting(), r.Dropped()
	t.Logf("%d dumps of %d bytes recorded; %d in flight (%d bytes held, bound %d), %d dropped, %d stored, %d taken by the silent stream",
		n, size, held, bytes, recordBytes, dropped, r.Stored(), taken.Load())
	if bytes > recordBytes || uint64(held)+dropped != uint64(n) || dropped == 0 || r.Stored() != 0 {
		t.Errorf("held %d bytes (bound %d), %d in flight + %d dropped of %d recorded", bytes, recordBytes, held, dropped, n)
	}
}
