package worker

import (
	"errors"
	"strings"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/metrics"
)

// A solve endpoint's subscription holds what its handler has not taken yet, and
// its handler solves one request at a time: nats.go's default lets it hold 64 MB (and
// half a million requests) a problem, 320 MB for the five, beyond every bound the
// daemon states (docs/bus.md). Bounded like the dumps' pending lists; a flood's excess
// is dropped by nats.go, counted and logged here. A request dropped gets no reply:
// its requester's own timeout tells it.
const (
	pendingSolves = 1024
	// PendingSolveBytes bounds the bytes a solve endpoint's subscription holds, or
	// twice the server's largest message when that is more (one request always fits).
	PendingSolveBytes = 8 << 20
)

// solveSlow is the connection's error handler, before next: a slow consumer on a
// solve endpoint's subscription is counted (nats.go's own count of its drops) and
// logged, sampled per problem.
func (w *Workers) solveSlow(next nats.ErrHandler) nats.ErrHandler {
	prefix := w.subj.Solve("")
	return func(nc *nats.Conn, sub *nats.Subscription, err error) {
		if sub != nil && errors.Is(err, nats.ErrSlowConsumer) {
			if problem, ok := strings.CutPrefix(sub.Subject, prefix); ok && w.solveDropped[problem] != nil {
				d := w.solveDropped[problem]
				d.sub.Store(sub)
				n := d.load()
				if e := w.warn.Event(&w.log, zerolog.WarnLevel, "solve dropped "+problem); e != nil {
					pm, pb, _ := sub.Pending()
					e.Str("problem", problem).Int64("dropped_total", n).Int("pending", pm).Int("pending_bytes", pb).
						Msg("solve requests dropped: they come faster than they are solved (a flood); their requesters get no reply")
				}
				return // told here: nats.go's line would say it again, unsampled
			}
		}
		if next != nil {
			next(nc, sub, err)
		}
	}
}

// solveDrops counts one endpoint's dropped requests: nats.go tells of a slow consumer
// once, when it starts dropping, and counts every drop on the subscription, which is
// micro's own and known from that first report on.
type solveDrops struct {
	sub  atomic.Pointer[nats.Subscription]
	last atomic.Int64 // its count when last read: it is gone once the endpoint stops
}

func (d *solveDrops) load() int64 {
	if sub := d.sub.Load(); sub != nil {
		if n, err := sub.Dropped(); err == nil {
			d.last.Store(int64(n))
		}
	}
	return d.last.Load()
}

// SolveDropped is how many solve requests the endpoints dropped so far, all problems
// together.
func (w *Workers) SolveDropped() int64 {
	var n int64
	for _, c := range w.solveDropped {
		n += c.load()
	}
	return n
}

func (w *Workers) solveDroppedSeries() []metrics.Labeled {
	out := make([]metrics.Labeled, 0, len(w.solveDropped))
	for problem, c := range w.solveDropped {
		out = append(out, metrics.Labeled{Values: []string{problem}, Value: float64(c.load())})
	}
	return out
}
