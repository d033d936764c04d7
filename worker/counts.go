package worker

import (
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/result"
)

// DumpCounts are what became of the dumps the workers took: every one is solved,
// bad (the worker's error result), oversize, shed (its port's queue was full) or
// stopping (not solved within the drain bound), each with its result, or handed
// back: not solved, and not answered, for its publisher to publish again to another
// worker (bus.HeaderAttempt).
type DumpCounts struct {
	Taken    int64 `json:"taken"`
	Solved   int64 `json:"solved"`
	Bad      int64 `json:"bad"`
	Oversize int64 `json:"oversize"`
	Shed     int64 `json:"shed"`
	Stopping int64 `json:"stopping"`
	// HandedBack counts the dumps a stopping or overloaded worker took and left
	// unanswered for another worker (or a later turn) to answer.
	HandedBack int64 `json:"handed_back"`
	// RefusedReplies counts the dumps and solve requests whose reply subject was no
	// requester's inbox (bus.ReplyInbox): not answered there. A dump's result is
	// still published on its own port's results subject.
	RefusedReplies int64 `json:"refused_replies"`
}

// Counts returns the workers' dump counts so far, all problems together.
func (w *Workers) Counts() DumpCounts {
	var sum DumpCounts
	for _, c := range w.counts {
		n := c.load()
		sum.Taken += n.Taken
		sum.Solved += n.Solved
		sum.Bad += n.Bad
		sum.Oversize += n.Oversize
		sum.Shed += n.Shed
		sum.Stopping += n.Stopping
		sum.HandedBack += n.HandedBack
		sum.RefusedReplies += n.RefusedReplies
	}
	return sum
}

// outcome is what became of a dump, one of DumpCounts' fields.
type outcome int

const (
	dumpTaken outcome = iota
	dumpSolved
	dumpBad
	dumpOversize
	dumpShed
	dumpStopping
	dumpHandedBack
	outcomes
)

type dumpCounts struct {
	n [outcomes]atomic.Int64
	// solveNanos is the solvers' time on the dumps solved, bad ones included.
	solveNanos     atomic.Int64
	refusedReplies atomic.Int64
	lastError      atomic.Pointer[string]
}

func (c *dumpCounts) load() DumpCounts {
	return DumpCounts{
		Taken: c.n[dumpTaken].Load(), Solved: c.n[dumpSolved].Load(), Bad: c.n[dumpBad].Load(),
		Oversize: c.n[dumpOversize].Load(), Shed: c.n[dumpShed].Load(), Stopping: c.n[dumpStopping].Load(),
		HandedBack: c.n[dumpHandedBack].Load(), RefusedReplies: c.refusedReplies.Load(),
	}
}

// failed counts a dump answered (or dropped) with an error as o.
func (c *dumpCounts) failed(o outcome, why string) {
	c.n[o].Add(1)
	c.lastError.Store(&why)
}

// countsOf are the counts of problem's dumps.
func (w *Workers) countsOf(problem string) *dumpCounts {
	if c, ok := w.counts[problem]; ok {
		return c
	}
	return w.counts[""]
}

// countsOfDump are the counts of the problem msg is a dump of.
func (w *Workers) countsOfDump(msg *nats.Msg) *dumpCounts {
	problem, _, _ := w.subj.ParseDump(msg.Subject)
	return w.countsOf(problem)
}

// refuseSubject answers a dump whose subject names no port (a wildcard, an empty or
// over-long token: bus.ParseDump) with an error, on its inbox only: no result is
// published, since a results subject of such a port would be a new key of the
// history's for each, and no port waits for it.
func (w *Workers) refuseSubject(msg *nats.Msg, err error) {
	c := w.counts[""]
	c.n[dumpTaken].Add(1)
	c.failed(dumpBad, err.Error())
	if e := w.warn.Warn(&w.log, "subject"); e != nil {
		e.Err(err).Int("bytes", len(msg.Data)).Msg("dump not solved")
	}
	if msg.Reply != "" && w.replyOK("", "", msg.Reply) {
		res := result.Record{Worker: w.id, Error: err.Error(), UnitDigest: bus.UnitDigest(msg.Data)}
		if rerr := msg.Respond(res.AppendJSON(nil)); rerr != nil {
			w.log.Error().Err(rerr).Msg("reply to dump")
		}
	}
}

// replyOK reports whether a dump or solve request of problem (from port, for a dump)
// may be answered on reply. The workers' connection may have the daemon's rights
// (the in-process workers on an external server): answering on any subject a
// requester names would let anyone without credentials write the boards bucket
// ($KV), call JetStream's API ($JS), put a result for any port in the history (the
// results and repair subjects), or forge a dump. Only a requester's inbox is
// answered; anything else is counted and warned of (sampled), never written.
func (w *Workers) replyOK(problem, port, reply string) bool {
	if bus.ReplyInbox(reply) {
		return true
	}
	w.countsOf(problem).refusedReplies.Add(1)
	if e := w.warn.Warn(&w.log, "reply"); e != nil {
		e.Str("problem", problem).Str("port", port).Str("reply", logging.Clip(reply)).
			Msg("request with a reply subject that is no inbox (_INBOX.>): not answered there")
	}
	return false
}
