package daemon

import (
	"runtime"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/result"
)

// BenchmarkHeldOutcomes measures the heap of the outcomes a port holds while its
// device does not read: MaxHeld (65,536) of them, each settled from a worker's
// result decoded from a message of its own, as the inbox hands them over. It
// reports the bytes held per outcome (B/held).
func BenchmarkHeldOutcomes(b *testing.B) {
	const held = 1 << 16
	rec := result.Record{Problem: "goscore", Port: "hall", Seq: 1, Line: 1, Answer: "177 175\n",
		Origin: bus.NewOrigin(), UnitDigest: bus.UnitDigest([]byte("a unit")), Worker: "worker-4f2a9c01"}
	data := rec.AppendJSON(nil)
	msgs := make([][]byte, held)
	for i := range msgs {
		msgs[i] = append([]byte(nil), data...)
	}
	d := &display{pc: PortConfig{Name: "hall"}}
	var ms runtime.MemStats
	for b.Loop() {
		d.done = map[uint64]outcome{}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		for i := range held {
			res, err := result.Decode(msgs[i])
			if err != nil {
				b.Fatal(err)
			}
			it := item{seq: uint64(i + 1), read: time.Now()}
			d.settle(&it, &res)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc-before)/held, "B/held")
		runtime.KeepAlive(d.done)
	}
}
