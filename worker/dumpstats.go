package worker

import (
	"time"

	"github.com/nats-io/nats.go/micro"
)

// The dumps are in the one micro service's stats, as each problem endpoint's data
// (micro.Config.StatsHandler): `nats micro stats --json`, `nats micro info`. micro
// fills an endpoint's requests, errors and processing time only around its own
// handler's call (reqHandler in nats.go v1.55.0's micro/service.go), and nothing
// else can set them; the dumps are taken by a callback that never waits and solved
// later by a pool behind per-port queues (dumpqueue.go), so micro's handler would
// count microseconds of intake and no bad unit. The workers count the dumps
// themselves, and the endpoint's data carries those counts.

// EndpointData is the data of a problem's endpoint in $SRV.STATS.
type EndpointData struct {
	Dumps DumpStats `json:"dumps"`
}

// DumpStats are one problem's dumps: a dump is taken, then solved or answered with
// an error (bad, oversize, shed, stopping) or handed back; ProcessingTime is the
// solvers' time on them (parse and solve, not the time queued), LastError the last
// of those errors.
type DumpStats struct {
	DumpCounts
	ProcessingTime time.Duration `json:"processing_time"`
	LastError      string        `json:"last_error,omitempty"`
}

// endpointStats is the micro service's StatsHandler: the dumps of the endpoint's
// problem (its name).
func (w *Workers) endpointStats(e *micro.Endpoint) any {
	c := w.countsOf(e.Name)
	d := EndpointData{Dumps: DumpStats{DumpCounts: c.load(), ProcessingTime: time.Duration(c.solveNanos.Load())}}
	if last := c.lastError.Load(); last != nil {
		d.Dumps.LastError = *last
	}
	return d
}
