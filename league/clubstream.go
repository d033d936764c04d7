package league

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
)

// What the hub asks of a club's history stream across the club's link, and what it
// records of it in the club's intake: which stream of the club's its source reads.

// clubCreatedKey is where a club's intake's config metadata keeps the identity of
// the club's history stream its source reads, the stream's Created time (RFC 3339,
// UTC), as the club last said it: nats-server keeps that identity with the source,
// and tells a stream made anew (the club's state dir wiped) by it, but forgets it
// when the hub removes the source and adds it again (kick), and knows none for an
// intake made anew (the hub restarted).
const clubCreatedKey = "scoreboard_club_stream_created"

// sourcedCreated is the Created time of the club's stream an intake's config
// records; zero if none.
func sourcedCreated(cfg jetstream.StreamConfig) time.Time {
	t, err := time.Parse(time.RFC3339Nano, cfg.Metadata[clubCreatedKey])
	if err != nil {
		return time.Time{}
	}
	return t
}

// withCreated is a copy of an intake's config metadata recording created as its
// club's stream's Created time (none, if zero).
func withCreated(md map[string]string, created time.Time) map[string]string {
	out := maps.Clone(md)
	if out == nil {
		out = map[string]string{}
	}
	delete(out, clubCreatedKey)
	if !created.IsZero() {
		out[clubCreatedKey] = created.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// learnClubStream records in a club's intake which club's stream its source reads
// (clubCreatedKey), when its config records none, asked of the club (learner: as
// the club's link comes up, and again while none is recorded) for an intake whose
// source nats-server set up itself (one made at the hub's start, or made again)
// and the hub has not kicked since. A kick asks anyway, and records what it sets
// the source up on. The club is asked with h.mu let go of (a club that never
// answers would hold the hub's other clubs and its reloads 2 s each time), the
// intake not held (a kick of it meanwhile would wait for the ask, and its look
// with it), and what it says recorded only if the club and its intake are as
// they were: its club not changed, the intake not made again, its source not
// taken off (a kick's, under way: it records what it finds itself), nothing
// recorded meanwhile. It says false if the club was asked and gave nothing to
// record (no answer, or no Created time).
func (h *Hub) learnClubStream(ctx context.Context, club string) bool {
	if h.ns == nil {
		return true // a hub on an external server cannot ask its clubs (clubStreamState)
	}
	ijs, err := h.intakeJS(club)
	if err != nil {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sourceOff(club) {
		return true // a kick's under way
	}
	c, ok := h.club(club)
	if !ok {
		return true
	}
	was, ok := h.unlearned(ctx, ijs, club)
	if !ok {
		return true
	}
	h.mu.Unlock()
	cs, known := h.clubStreamState(ctx, c)
	h.mu.Lock()
	if !known || cs.created.IsZero() {
		return false
	}
	if now, ok := h.club(club); !ok || now != c {
		return true
	}
	info, ok := h.unlearned(ctx, ijs, club)
	if !ok || !info.Created.Equal(was.Created) || h.sourceOff(club) {
		return true
	}
	cfg := info.Config
	cfg.Metadata = withCreated(cfg.Metadata, cs.created)
	if _, err := ijs.UpdateStream(ctx, cfg); err != nil {
		h.log.Warn().Err(err).Str("club", club).Msg("league: which club's stream the intake sources could not be recorded; the club is asked again")
		return true
	}
	h.log.Debug().Str("club", club).Time("created", cs.created).Msg("league: the club's stream its intake sources recorded, as the club said it")
	return true
}

// relearnEvery is how soon the hub asks a club again which history stream its
// intake sources, while the intake records none (learner); relearnMax, how soon
// at the latest, for a club that gave nothing to record when asked before.
const (
	relearnEvery = 10 * time.Second
	relearnMax   = 5 * time.Minute
)

// learner asks clubs which history stream their intakes source (learnClubStream)
// beside the hub's looks at the clubs' sources, never inside them: an ask of a club
// that never answers takes 2 s, which a look waited for, and a round of looks for
// its slowest. Up to kickers asks at once; a club asked again while its intake
// records none, relearnEvery after an answer, and, after asks it gave nothing to
// record, twice as long each time, up to relearnMax: a club that never answers
// costs the hub an ask every 5 minutes, and one each time its link comes up.
type learner struct {
	h     *Hub
	slots chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	clubs map[string]*learning
}

// learning is what the learner knows of asking a club.
type learning struct {
	asking bool          // an ask of it is under way
	next   time.Time     // when it is asked again, unless its link comes up before
	every  time.Duration // how long after an ask it gives nothing to record it waits
}

func newLearner(h *Hub) *learner {
	return &learner{h: h, slots: make(chan struct{}, kickers), clubs: map[string]*learning{}}
}

// learn asks club in the background when it is due (fresh: its link just came
// up; every time, then), unless an ask of it is under way.
func (l *learner) learn(ctx context.Context, club string, fresh bool) {
	l.mu.Lock()
	c := l.of(club)
	// A link coming up asks at once, as it did inside the looks: a club that flaps
	// its link and never answers holds one slot 2 s at each coming up, no look.
	if c.asking || !fresh && time.Now().Before(c.next) {
		l.mu.Unlock()
		return
	}
	c.asking = true
	l.mu.Unlock()
	l.wg.Go(func() {
		answered := false
		select {
		case l.slots <- struct{}{}:
			answered = l.h.learnClubStream(ctx, club)
			<-l.slots
		case <-ctx.Done():
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		c.asking = false
		if answered {
			c.next, c.every = time.Now().Add(relearnEvery), relearnEvery
		} else {
			c.next, c.every = time.Now().Add(c.every), min(2*c.every, relearnMax)
		}
	})
}

// asked notes that club was asked otherwise (a kick of its intake's source asks
// it, and records what it says).
func (l *learner) asked(club string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.of(club).next = time.Now().Add(relearnEvery)
}

// of is what the learner knows of club; called with l.mu held.
func (l *learner) of(club string) *learning {
	c, ok := l.clubs[club]
	if !ok {
		c = &learning{every: relearnEvery}
		l.clubs[club] = c
	}
	return c
}

// wait waits for the asks under way, which end with the context they were given.
func (l *learner) wait() { l.wg.Wait() }

// unlearned is a club's intake's info if it is one whose source's club's stream
// is to be learned (learnClubStream): one source, none recorded.
func (h *Hub) unlearned(ctx context.Context, ijs jetstream.JetStream, club string) (*jetstream.StreamInfo, bool) {
	s, err := ijs.Stream(ctx, IntakeStream(club))
	if err != nil {
		return nil, false
	}
	cfg := s.CachedInfo().Config
	if !isIntake(cfg) || len(cfg.Sources) != 1 || !sourcedCreated(cfg).IsZero() {
		return nil, false
	}
	return s.CachedInfo(), true
}

// intakeHold is a kick's hold of a club's intake while it asks the club across its
// link, h.mu let go of: the next one waits for done.
// parked: the kick took the intake's source off and gives it back, so SetClubs
// leaves it parked (a source it gave anew would lose where the kick sets it to go
// on from, and the club's stream it records; the kick would find it so and give
// up).
type intakeHold struct {
	done   chan struct{}
	parked bool
}

// holdIntake waits until no other kick holds club's intake, and holds
// it. Called with h.mu held, which it lets go of while it waits; false: ctx ended.
func (h *Hub) holdIntake(ctx context.Context, club string) (*intakeHold, bool) {
	for {
		held, busy := h.intakeHolds[club]
		if !busy {
			if h.intakeHolds == nil {
				h.intakeHolds = map[string]*intakeHold{}
			}
			held = &intakeHold{done: make(chan struct{})}
			h.intakeHolds[club] = held
			return held, true
		}
		h.mu.Unlock()
		select {
		case <-held.done:
		case <-ctx.Done():
		}
		h.mu.Lock()
		if ctx.Err() != nil {
			return nil, false
		}
	}
}

// releaseIntake lets go of a club's intake held; called with h.mu held.
func (h *Hub) releaseIntake(club string, held *intakeHold) {
	delete(h.intakeHolds, club)
	close(held.done)
}

// sourceOff says whether a kick took club's intake's source off and gives it back
// (intakeHold); called with h.mu held.
func (h *Hub) sourceOff(club string) bool {
	held, ok := h.intakeHolds[club]
	return ok && held.parked
}

// resumeIntake sets where an intake's source, removed to be added again, goes on:
// nats-server forgets a removed source's position, and finds it again in the
// stream's units, but an intake holds none once its club's stream has taken them.
// before is the intake's info before its source was removed: the club's sequence
// of the last unit it took (its source's seq) and its own; units taken since (its
// own last sequence grew) were the club's next ones; now is its state, its source
// off. cfg, the intake's config to be updated with back, records the club's stream
// the source reads from then on: club, as the club said it after the source was
// taken off (known: it said it).
func (h *Hub) resumeIntake(clubName string, before *jetstream.StreamInfo, now jetstream.StreamState, cfg *jetstream.StreamConfig, back *jetstream.StreamSource, club clubStream, known bool) {
	if known && !club.created.IsZero() {
		cfg.Metadata = withCreated(cfg.Metadata, club.created)
	}
	if now.Msgs > 0 {
		return // nats-server reads the position, and the stream's identity, from the intake's last unit
	}
	var took uint64
	for _, si := range before.Sources {
		took = max(took, si.Seq)
	}
	switch {
	case took > 0 && now.LastSeq >= before.State.LastSeq:
		back.OptStartSeq = took + now.LastSeq - before.State.LastSeq + 1
	case now.LastSeq > 0:
		back.OptStartSeq = now.LastSeq + 1
	}
	if !known {
		return
	}
	// nats-server would find the club's stream new (its state dir wiped) by its
	// identity, which the removed source's state had: it is told by the club's
	// stream ending before where the intake was, or by its Created time differing
	// from the one the intake records while the intake is numbered as the club's
	// history still (nothing taken since it was, or the club's sequence it took
	// last its own last: a source that went on to a new stream by itself, from its
	// first unit, took it under the intake's next numbers), and taken from its
	// first unit.
	was := sourcedCreated(before.Config)
	renewed := !was.IsZero() && !club.created.IsZero() && !was.Equal(club.created) &&
		(took == 0 || took == before.State.LastSeq)
	if back.OptStartSeq > club.last+1 || renewed {
		back.OptStartSeq = club.first
	}
	if renewed {
		h.log.Warn().Str("club", clubName).Time("was_created", was).Time("created", club.created).Uint64("club_first", club.first).Uint64("club_last", club.last).
			Msg("league: the club's history stream is a new one (its state dir wiped?): taken from its first unit")
	}
}

// clubStream is the club's history stream as the club says it is (it may say
// anything of its own stream): where it begins and ends, and when it was made.
type clubStream struct {
	first, last uint64
	created     time.Time
}

// clubStreamState is the club's history stream, asked of the club across its link
// (stream info, which the club lets the hub's sourcing ask) from a connection in
// the club's account; ok false if not known (the hub on an external server, the
// club's link down).
func (h *Hub) clubStreamState(ctx context.Context, c Club) (cs clubStream, ok bool) {
	if h.ns == nil {
		return cs, false
	}
	// Its replies come back as the sourcing's do, on $JSC.R.<club>.>: the only
	// replies the club's leaf may publish.
	nc, err := nats.Connect("", nats.InProcessServer(h.ns), nats.Name("scoreboard hub: club "+c.Name+"'s stream"),
		nats.UserInfo(clubAccount(c.Name), ""), nats.CustomInboxPrefix("$JSC.R."+c.Name+".hub"))
	if err != nil {
		return cs, false
	}
	defer nc.Close()
	js, err := jetstream.NewWithAPIPrefix(nc, apiPrefix(c.Name))
	if err != nil {
		return cs, false
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, bus.Subjects{Prefix: c.prefix()}.Stream())
	if err != nil {
		return cs, false
	}
	info := s.CachedInfo()
	return clubStream{first: info.State.FirstSeq, last: info.State.LastSeq, created: info.Created}, true
}
