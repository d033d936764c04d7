package league

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
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
// stream holds (an empty intake's, after the club's sequence it took last:
// resumeIntake). fresh are the clubs whose links just came up, idle the others.
//
// The intakes are looked at kickers at a time: a look may ask its club across its
// link, 2 s for a club that never answers, and one at a time N such clubs held
// every other club's look N × 2 s.
func (h *Hub) kickIdleSources(ctx context.Context, fresh, idle []string, seqs *seenSeqs, learn *learner) []string {
	var mu sync.Mutex
	kicked := map[string]bool{}
	clubs := append(slices.Clip(fresh), idle...)
	var g errgroup.Group
	g.SetLimit(kickers)
	for i, club := range clubs {
		g.Go(func() error {
			if h.kickIntake(ctx, club, i < len(fresh), seqs, learn) {
				mu.Lock()
				kicked[club] = true
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
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
// or stalled, or makes it again if it is gone; it says whether it did. fresh: the
// club's link just came up.
func (h *Hub) kickIntake(ctx context.Context, club string, fresh bool, seqs *seenSeqs, learn *learner) bool {
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
	h.keepNumbered(ctx, club, info)
	// An intake whose units stay: its club's stream took them and their flow
	// control reply did not let them go (its source removed first, or the club's
	// forged ack set the consumer's floor past them): purged, or they fill it.
	if moved := seqs.grew(name+" first", info.State.FirstSeq); info.State.Msgs > 0 && time.Since(moved) >= sourceKickAfter {
		h.dropTaken(ctx, club)
	}
	// Stalled too: a source that says the club has more (its lag) while the intake
	// has grown by nothing for sourceKickAfter, its heartbeats coming (at 200 clubs,
	// one source of 202 after a 5-minute cut of every link took more than 2 minutes
	// to go on by itself). Not an intake holding units: it is full, waiting for
	// its club's stream at the hub to take them, not for the club.
	// Under the gate (gate.go), a club whose next unit is larger than its intake's
	// small room stalls so too: it waits for a slot, not for a kick.
	grew := seqs.grew(name, info.State.LastSeq)
	idle := len(info.Config.Sources) == 0
	for _, si := range info.Sources {
		if si.External == nil || si.External.APIPrefix != apiPrefix(club) {
			continue
		}
		stalled := si.Lag > 0 && info.State.Msgs == 0 && time.Since(grew) >= sourceKickAfter
		if stalled {
			h.log.Debug().Str("club", club).Uint64("lag", si.Lag).Dur("active_ms", si.Active).Msg("league: the club's intake's source stalled")
		}
		if si.Active < 0 || si.Active > sourceKickAfter || stalled && !h.gate.want(club) {
			idle = true
		}
	}
	kicked := idle && h.kickIntakeSource(ctx, club)
	// Asked again while it records none: a club that did not answer when its
	// link came up, or when keepNumbered made its intake again, would otherwise
	// be asked only at its link's next coming up.
	switch {
	case kicked:
		learn.asked(club)
	case sourcedCreated(info.Config).IsZero():
		learn.learn(ctx, club, fresh)
	}
	return kicked
}

// keepNumbered keeps a club's intake numbered as the club's history (accounts.go,
// intakeConfig), which a hub restarted relies on. Its source's start is dropped
// from its config once the source has taken a unit from there: nats-server starts
// a source from its config again when the club's stream is a new one (its state
// dir wiped), which is then to be taken from its first unit. An intake numbered
// otherwise than the club's history (the club's stream new, or its first units gone
// before the hub took them) and empty, its stream at the hub holding all it took,
// is made again, numbered after the club's sequence it took last.
func (h *Hub) keepNumbered(ctx context.Context, club string, info *jetstream.StreamInfo) {
	if !isIntake(info.Config) || len(info.Config.Sources) != 1 || len(info.Sources) != 1 {
		return
	}
	took := info.Sources[0].Seq
	if took == 0 {
		return
	}
	c, ok := h.clubOf(club)
	if !ok {
		return
	}
	ijs, err := h.intakeJS(club)
	if err != nil {
		return
	}
	cfg := info.Config
	switch {
	case info.State.Msgs == 0 && took != info.State.LastSeq:
		stream := jetstream.StreamConfig{Name: ClubStream(club), MaxAge: cfg.MaxAge, MaxMsgSize: cfg.MaxMsgSize, Duplicates: cfg.Duplicates, Replicas: cfg.Replicas}
		again := intakeConfig(c, stream, intakeStart{next: took + 1})
		// The source may have gone on to a new club's stream (nats-server tells
		// one by its identity): the one it reads now is recorded, asked again.
		if cs, ok := h.clubStreamState(ctx, c); ok {
			again.Metadata = withCreated(nil, cs.created)
		}
		err = ijs.DeleteStream(ctx, cfg.Name)
		if err == nil {
			_, err = ijs.CreateStream(ctx, again)
		}
		if err == nil {
			h.log.Info().Str("club", club).Uint64("club_seq", took).Uint64("intake_seq", info.State.LastSeq).Msg("league: the club's intake numbered again as the club's history")
			h.kickSource(ctx, club)
		}
	case cfg.Sources[0].OptStartSeq > 0 && took >= cfg.Sources[0].OptStartSeq:
		src := *cfg.Sources[0]
		src.OptStartSeq = 0
		cfg.Sources = []*jetstream.StreamSource{&src}
		err = h.updateStream(ctx, ijs, cfg)
	}
	if err != nil {
		h.log.Warn().Err(err).Str("club", club).Msg("league: the club's intake could not be kept numbered as its history; trying again")
	}
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
	if err := h.makeIntake(ctx, c, s.CachedInfo().Config, false); err != nil {
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
	if !h.kick(ctx, club, h.js, ClubStream(club), source) {
		return false
	}
	h.dropTaken(ctx, club)
	return true
}

// dropTaken purges from a club's intake the units its stream at the hub holds
// already. Its source's consumer on the intake lets a unit go when a flow control
// reply says it is stored; a source removed before that reply leaves them, and the
// source added again starts after the stream's last unit, so no consumer would
// ever let them go: they would fill the intake. Where the stream stands in the
// intake is its source's seq, which nats-server says only of the intake it took
// it from (not of one made again since, numbered anew).
func (h *Hub) dropTaken(ctx context.Context, club string) {
	s, err := h.js.Stream(ctx, ClubStream(club))
	if err != nil {
		return
	}
	var took uint64
	for _, si := range s.CachedInfo().Sources {
		if si.External != nil && si.External.APIPrefix == intakeAPI(club) {
			took = si.Seq
		}
	}
	ijs, err := h.intakeJS(club)
	if took == 0 || err != nil {
		return
	}
	in, err := ijs.Stream(ctx, IntakeStream(club))
	if err != nil || !isIntake(in.CachedInfo().Config) {
		return
	}
	if st := in.CachedInfo().State; st.Msgs == 0 || st.FirstSeq > took || st.LastSeq < took {
		return
	}
	if err := in.Purge(ctx, jetstream.WithPurgeSequence(took+1)); err != nil {
		h.log.Warn().Err(err).Str("club", club).Msg("league: the units the club's stream holds could not be purged from its intake; the next look tries again")
	}
}

// clubOf is the club of that name in the league.
func (h *Hub) clubOf(name string) (Club, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.club(name)
}

// kickIntakeSource does the same to the club's intake's source, the club's
// history, where its source goes on from (resumeIntake) asked of the club across
// its link: an ask that waits up to 2 s, which a club that never answers makes it
// wait each time. So the club is asked with h.mu let go of (the hub's other clubs,
// its reloads and its page take it meanwhile), the intake held (holdIntake:
// SetClubs leaves it parked, another kick of it waits), then h.mu taken again and
// the intake's config read again to give its source back: a club removed
// meanwhile has its intake parked, as SetClubs parks it; a club changed (its
// credentials) has its answer dropped, the source given back as when the club
// cannot be asked.
func (h *Hub) kickIntakeSource(ctx context.Context, club string) bool {
	ijs, err := h.intakeJS(club)
	if err != nil {
		return false
	}
	name := IntakeStream(club)
	h.mu.Lock()
	defer h.mu.Unlock()
	held, ok := h.holdIntake(ctx, club)
	if !ok {
		return false
	}
	defer h.releaseIntake(club, held)
	c, ok := h.club(club)
	if !ok {
		return false // the club was removed meanwhile: its intake parked
	}
	before, back, ok := h.takeSourceOff(ctx, c, ijs, name, clubSource)
	if !ok {
		return false
	}
	if !isIntake(before.Config) { // an earlier hub's, on disk: its units say where it is
		return h.giveSourceBack(ctx, club, ijs, before.Config, back)
	}
	back = &jetstream.StreamSource{Name: back.Name, External: back.External, SubjectTransforms: back.SubjectTransforms,
		FilterSubject: back.FilterSubject, OptStartSeq: back.OptStartSeq}
	held.parked = true
	h.mu.Unlock()
	cs, known := h.clubStreamState(ctx, c)
	h.mu.Lock()
	if now, ok := h.club(club); !ok {
		return false // removed meanwhile: its intake stays parked, as SetClubs left it
	} else if now != c {
		known = false // the answer is of the club's link before its change
	}
	s, err := ijs.Stream(ctx, name)
	if err != nil {
		h.log.Warn().Err(err).Str("club", club).Msg("league: the club's intake could not be read again to give its source back; the next look at it does")
		return false
	}
	cfg := s.CachedInfo().Config
	if len(cfg.Sources) > 0 || !s.CachedInfo().Created.Equal(before.Created) {
		return false // made again meanwhile (deleted from the club's account), with a source of its own
	}
	h.resumeIntake(club, before, s.CachedInfo().State, &cfg, back, cs, known)
	return h.giveSourceBack(ctx, club, ijs, cfg, back)
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
	info, back, ok := h.takeSourceOff(ctx, c, js, name, src)
	if !ok {
		return false
	}
	return h.giveSourceBack(ctx, club, js, info.Config, back)
}

// takeSourceOff takes the one source of a stream off, parking it, and says the
// stream's info before and the source to give it back: its own as it was (where
// it starts from, if said), or src's if it had none. Called with h.mu held.
func (h *Hub) takeSourceOff(ctx context.Context, c Club, js jetstream.JetStream, name string, src func(Club) *jetstream.StreamSource) (*jetstream.StreamInfo, *jetstream.StreamSource, bool) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return nil, nil, false
	}
	info := s.CachedInfo()
	cfg := info.Config
	switch len(cfg.Sources) {
	case 0:
		h.log.Warn().Str("club", c.Name).Str("stream", name).Msg("league: the stream was left without its source; it is given it back")
		return info, src(c), true
	case 1:
		// Parked without it a moment (a stream with neither subjects nor sources
		// is refused), then given it back.
		back := cfg.Sources[0]
		cfg.Sources, cfg.Subjects = nil, []string{parked(cfg.Name)}
		if err := h.updateStream(ctx, js, cfg); err != nil {
			h.log.Warn().Err(err).Str("club", c.Name).Str("stream", name).Msg("league: could not set the source up again")
			return nil, nil, false
		}
		return info, back, true
	}
	return nil, nil, false
}

// giveSourceBack updates a stream to cfg with its one source back, and no
// subjects. Called with h.mu held.
func (h *Hub) giveSourceBack(ctx context.Context, club string, js jetstream.JetStream, cfg jetstream.StreamConfig, back *jetstream.StreamSource) bool {
	cfg.Sources, cfg.Subjects = []*jetstream.StreamSource{back}, nil
	if err := h.updateStream(ctx, js, cfg); err != nil {
		h.log.Error().Err(err).Str("club", club).Str("stream", cfg.Name).Msg("league: the source is removed and could not be added again; the next look at the streams adds it")
		return false
	}
	h.log.Info().Str("club", club).Str("stream", cfg.Name).Msg("league: the club's link is up and its source was idle: set up again")
	return true
}

// updateStream updates a stream; updateFault, set by a test, fails it first.
func (h *Hub) updateStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	if f := h.updateFault.Load(); f != nil && *f != nil {
		if err := (*f)(cfg); err != nil {
			return err
		}
	}
	_, err := js.UpdateStream(ctx, cfg)
	return err
}

// kickers is how many clubs' intakes the hub looks at at once.
const kickers = 16

// seenSeqs are the clubs' intakes' last sequences as the hub saw them; the looks
// at several clubs share them.
type seenSeqs struct {
	mu sync.Mutex
	m  map[string]seenSeq
}

// grew says when a club's intake last grew, as the hub saw it: last is its
// last sequence now.
func (s *seenSeqs) grew(stream string, last uint64) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seen, ok := s.m[stream]; ok && seen.last == last {
		return seen.at
	}
	if s.m == nil {
		s.m = map[string]seenSeq{}
	}
	s.m[stream] = seenSeq{last: last, at: time.Now()}
	return time.Now()
}

// seenSeq is a stream's last sequence, and when it was first seen so.
type seenSeq struct {
	last uint64
	at   time.Time
}
