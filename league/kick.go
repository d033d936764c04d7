package league

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// sourceKickAfter is how long a club's intake's source may stay idle, its link
// up, before the hub sets the source up again.
const sourceKickAfter = 3 * time.Second

// linkSettle is how long after a club's link comes up its source is first looked
// at: the link's interest in the club's API has crossed it by then.
const linkSettle = time.Second

// externalKickEvery is how often the hub sets up an idle source again on an
// external server, where it cannot tell a club whose link is down.
const externalKickEvery = 10 * time.Second

// kickIdleSources sets up again what stalls each of clubs (their links up), and
// says which it set up. The server retries a source whose consumer could not be
// created (the link was down, or just up and the club's API not yet known across
// it) only after a back-off that grows to two minutes, so a club back after a cut
// would wait that long. Two hops are looked at:
//
//   - the club's intake (in the club's account) sourcing the club: set up again
//     when it has had nothing, not even its heartbeat, for sourceKickAfter, or is
//     stalled (seqs: when each intake last grew), or is gone (a club's forged
//     control may delete it: it is made again where its club's stream stands);
//   - the club's stream at the hub sourcing the intake, on the hub's own server:
//     set up again when it has no source, or its source's heartbeats stopped. The
//     hub's streams come in one listing.
//
// A source is removed and added again, and goes on from the last sequence its
// stream holds.
func (h *Hub) kickIdleSources(ctx context.Context, clubs []string, seqs seenSeqs) []string {
	kicked := map[string]bool{}
	for _, club := range clubs {
		if h.kickIntake(ctx, club, seqs) {
			kicked[club] = true
		}
	}
	want := map[string]string{} // stream -> club
	for _, c := range clubs {
		want[ClubStream(c)] = c
	}
	list := h.js.ListStreams(ctx)
	for info := range list.Info() {
		club, ok := want[info.Config.Name]
		if !ok {
			continue
		}
		idle := len(info.Config.Sources) == 0 // left without its source; kickSource says if it is a club's still
		for _, si := range info.Sources {
			if si.External != nil && si.External.APIPrefix == intakeAPI(club) && (si.Active < 0 || si.Active > sourceKickAfter) {
				idle = true
			}
		}
		if idle && h.kickSource(ctx, club) {
			kicked[club] = true
		}
	}
	if err := list.Err(); err != nil {
		h.log.Warn().Err(err).Msg("league: the streams could not be listed to find idle sources; trying again")
	}
	var out []string
	for club := range kicked {
		out = append(out, club)
	}
	slices.Sort(out)
	return out
}

// kickIntake looks at a club's intake and sets its source up again if it is idle
// or stalled, or makes it again if it is gone; it says whether it did.
func (h *Hub) kickIntake(ctx context.Context, club string, seqs seenSeqs) bool {
	ijs, err := h.intakeJS(club)
	if err != nil {
		return false
	}
	name := IntakeStream(club)
	s, err := ijs.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return h.remakeIntake(ctx, club)
	}
	if err != nil {
		h.log.Warn().Err(err).Str("club", club).Msg("league: the club's intake could not be looked at; trying again")
		return false
	}
	info := s.CachedInfo()
	// Stalled too: a source that says the club has more (its lag) while the intake
	// has grown by nothing for sourceKickAfter, its heartbeats coming (at 200 clubs,
	// one source of 202 after a 5-minute cut of every link took more than 2 minutes
	// to go on by itself).
	grew := seqs.grew(name, info.State.LastSeq)
	idle := len(info.Config.Sources) == 0
	for _, si := range info.Sources {
		if si.External != nil && si.External.APIPrefix == apiPrefix(club) &&
			(si.Active < 0 || si.Active > sourceKickAfter || si.Lag > 0 && time.Since(grew) >= sourceKickAfter) {
			idle = true
		}
	}
	return idle && h.kickIntakeSource(ctx, club)
}

// remakeIntake makes a club's intake again, where the club's stream stands, and
// sets the stream's source up again on it.
func (h *Hub) remakeIntake(ctx context.Context, club string) bool {
	h.mu.Lock()
	c, ok := h.club(club)
	h.mu.Unlock()
	if !ok {
		return false
	}
	s, err := h.js.Stream(ctx, ClubStream(club))
	if err != nil {
		return false
	}
	if err := h.makeIntake(ctx, c, s.CachedInfo().Config); err != nil {
		h.log.Warn().Err(err).Str("club", club).Msg("league: the club's intake is gone and could not be made again; trying again")
		return false
	}
	h.log.Warn().Str("club", club).Msg("league: the club's intake was gone (deleted from the club's own account); made again where its stream stands")
	h.kickSource(ctx, club)
	return true
}

// club is the club of that name in the league; called with h.mu held.
func (h *Hub) club(name string) (Club, bool) {
	i := slices.IndexFunc(h.clubs, func(c Club) bool { return c.Name == name })
	if i < 0 {
		return Club{}, false
	}
	return h.clubs[i], true
}

// kickSource removes the source of a club's stream at the hub (the club's intake)
// and adds it again; a stream left without its source (a kick whose second update
// failed: an API timeout in an election) is given it back.
func (h *Hub) kickSource(ctx context.Context, club string) bool {
	return h.kick(ctx, club, h.js, ClubStream(club), source)
}

// kickIntakeSource does the same to the club's intake's source, the club's history.
func (h *Hub) kickIntakeSource(ctx context.Context, club string) bool {
	ijs, err := h.intakeJS(club)
	if err != nil {
		return false
	}
	return h.kick(ctx, club, ijs, IntakeStream(club), clubSource)
}

// kick removes a stream's one source and adds it again (src, if it has none). The
// stream's config is read again under h.mu: SetClubs may have changed it since
// the listing.
func (h *Hub) kick(ctx context.Context, club string, js jetstream.JetStream, name string, src func(Club) *jetstream.StreamSource) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.club(club)
	if !ok {
		return false // the club was removed meanwhile: its stream parked
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		return false
	}
	cfg := s.CachedInfo().Config
	back := src(c)
	switch len(cfg.Sources) {
	case 0:
		h.log.Warn().Str("club", club).Str("stream", name).Msg("league: the stream was left without its source; it is given it back")
	case 1:
		// Its own source back, as it was (where it starts from, if said).
		back = cfg.Sources[0]
		// Parked without it a moment (a stream with neither subjects nor sources
		// is refused), then given it back.
		cfg.Sources, cfg.Subjects = nil, []string{parked(cfg.Name)}
		if err := h.updateStream(ctx, js, cfg); err != nil {
			h.log.Warn().Err(err).Str("club", club).Str("stream", name).Msg("league: could not set the source up again")
			return false
		}
	default:
		return false
	}
	cfg.Sources, cfg.Subjects = []*jetstream.StreamSource{back}, nil
	if err := h.updateStream(ctx, js, cfg); err != nil {
		h.log.Error().Err(err).Str("club", club).Str("stream", name).Msg("league: the source is removed and could not be added again; the next look at the streams adds it")
		return false
	}
	h.log.Info().Str("club", club).Str("stream", name).Msg("league: the club's link is up and its source was idle: set up again")
	return true
}

// updateStream updates a stream; updateFault, set by a test, fails it first.
func (h *Hub) updateStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	if h.updateFault != nil {
		if err := h.updateFault(cfg); err != nil {
			return err
		}
	}
	_, err := js.UpdateStream(ctx, cfg)
	return err
}

// seenSeqs are the clubs' intakes' last sequences as the hub saw them.
type seenSeqs map[string]seenSeq

// grew says when a club's intake last grew, as the hub saw it: last is its
// last sequence now.
func (m seenSeqs) grew(stream string, last uint64) time.Time {
	if s, ok := m[stream]; ok && s.last == last {
		return s.at
	}
	m[stream] = seenSeq{last: last, at: time.Now()}
	return time.Now()
}

// seenSeq is a stream's last sequence, and when it was first seen so.
type seenSeq struct {
	last uint64
	at   time.Time
}
