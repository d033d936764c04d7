package league

import (
	"sync"
	"time"

	"github.com/goclub/scoreboard/logging"
)

// junkCounts counts, per club and reason, what a club's stream held that the boards
// keeper refused: malformed (not a result's JSON), invalid_utf8, unknown_problem,
// bad_port, bad_subject (its subject is not its problem's and port's), too_large (a
// unit, a result, an answer or an error longer than its problem's), bad_unit (a
// unit its problem cannot read), too_many_ports, bad_pairing (a port's game that is
// no pairing.Current, or one out of its bounds). The log samples them.
type junkCounts struct {
	mu     sync.Mutex
	counts map[JunkKey]uint64
	warn   *logging.Sampler
}

// JunkKey is a club and a reason its junk was refused.
type JunkKey struct{ Club, Reason string }

func (j *junkCounts) add(h *Hub, club, reason string) {
	j.mu.Lock()
	if j.counts == nil {
		j.counts = map[JunkKey]uint64{}
		j.warn = logging.NewSampler(3, time.Minute, 10000)
	}
	k := JunkKey{club, reason}
	j.counts[k]++
	n := j.counts[k]
	warn := j.warn
	j.mu.Unlock()
	warn.Warn(&h.log, club+" "+reason).Str("club", club).Str("reason", reason).Uint64("junk_total", n).
		Msg("league: a club's stream holds what is no valid result of a known problem: not shown (scoreboard_league_junk_total)")
}

// Junk is what each club's stream held that the page does not show, by reason
// (scoreboard_league_junk_total), sorted. Safe for concurrent use.
func (h *Hub) Junk() map[JunkKey]uint64 {
	h.junk.mu.Lock()
	defer h.junk.mu.Unlock()
	out := make(map[JunkKey]uint64, len(h.junk.counts))
	for k, v := range h.junk.counts {
		out[k] = v
	}
	return out
}
