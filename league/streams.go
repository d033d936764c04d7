package league

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/prune"
)

// Defaults of a club's share of the hub's store, when neither its [[club]] table
// nor the hub's [league] says: the club's own history's defaults.
const (
	DefaultClubMaxBytes = "1GiB"
	DefaultClubMaxAge   = "90d"
)

// clubDuplicates is a club's stream's deduplication window. A source resumes from
// the last sequence the stream holds of it, so the window only has to cover a
// source set up again; every id costs the hub memory for that long, and a club
// choosing its ids could otherwise hold the hub's memory (a flood of 100,000
// results in 10 s is 100,000 ids).
const clubDuplicates = 10 * time.Second

// ClubStream is the hub's stream of a club's history: LEAGUE_<CLUB> (the club's
// name in upper case, '-' made '_'), the stream of the prefix league.<club> that
// its subjects are under, so a tool scoped to a club (history --club, the page's
// tile) finds it by the prefix's rule (bus.Subjects.Stream).
func ClubStream(club string) string {
	return bus.Subjects{Prefix: SubjectPrefix + "." + club}.Stream()
}

// IsClubStream says whether a stream of the hub's is a club's (ClubStream): the
// streams whose shares the hub keeps below their limits (package prune).
func IsClubStream(name string) bool {
	return strings.HasPrefix(name, ClubStream("")) && len(name) > len(ClubStream(""))
}

// WithDefaults gives each club without a share of its own the hub's defaults
// (league.club_max_bytes, league.club_max_age); empty defaults leave the club as it
// is (then DefaultClubMaxBytes and DefaultClubMaxAge).
func WithDefaults(clubs []Club, maxBytes, maxAge string) []Club {
	out := make([]Club, len(clubs))
	for i, c := range clubs {
		if c.MaxBytes == "" {
			c.MaxBytes = maxBytes
		}
		if c.MaxAge == "" {
			c.MaxAge = maxAge
		}
		out[i] = c
	}
	return out
}

// share is the club's share of the hub's store: its stream's size and age.
func (c Club) share() (maxBytes int64, maxAge time.Duration, err error) {
	b, a := c.MaxBytes, c.MaxAge
	if b == "" {
		b = DefaultClubMaxBytes
	}
	if a == "" {
		a = DefaultClubMaxAge
	}
	if maxBytes, err = history.ParseSize(b); err != nil || maxBytes <= 0 {
		return 0, 0, fmt.Errorf("max_bytes %q: want a positive size such as 1GiB, 512MiB or 100MB", b)
	}
	if maxAge, err = history.ParseAge(a); err != nil || maxAge <= 0 {
		return 0, 0, fmt.Errorf("max_age %q: want a positive duration such as 90d, 36h or 1d12h", a)
	}
	return maxBytes, maxAge, nil
}

// checkShare says what is wrong with a club's share, or that its stream's name is
// another club's (north-1 and north_1 are both LEAGUE_NORTH_1).
func (c Club) checkShare(where string, streams map[string]string) error {
	var errs []error
	if _, _, err := c.share(); err != nil {
		errs = append(errs, fmt.Errorf("%s %w", where, err))
	}
	if bus.ValidToken(c.Name) {
		s := ClubStream(c.Name)
		if other, ok := streams[s]; ok && other != c.Name {
			errs = append(errs, fmt.Errorf("%s name: its stream %s would be club %q's too ('-' and '_' are one in a stream's name); give it another name", where, s, other))
		}
		streams[s] = c.Name
	}
	return errors.Join(errs...)
}

// parked is the subject a stream without a source takes (JetStream gives a stream
// neither subjects nor sources its own name as a subject, which a tool could
// publish on): a club's stream whose club was removed, or the LEAGUE of a hub from
// before the per-club streams. No one may publish on it: the tools are refused
// $LEAGUE.>, and a club may publish only under its own lowercase name.
func parked(stream string) string { return "$LEAGUE.PARKED." + stream }

// clubStreamConfig is a club's stream: its share of the store (size and age, the
// oldest units dropped first: its own, never another club's), the largest message
// any problem's unit needs (as the club's own stream: a larger one is refused), and
// its one source, the club's history across its domain.
//
// Its size is held by the hub's keeper (package prune), not by the server's
// max_bytes: with one, a share of 32 MiB or more has 8 MiB blocks, and each club
// written to holds its last block's 8 MiB write cache, 1.6 GiB at 200 clubs; with
// none, 4 MiB (prune.WithShare; BENCHMARKS.md, "Memory budget"). The keeper
// drops the club's oldest units from 15/16 of its share, and looks every 10 s.
func (h *Hub) clubStreamConfig(c Club, maxBytes int64, maxAge time.Duration) jetstream.StreamConfig {
	return prune.WithShare(jetstream.StreamConfig{
		Name:        ClubStream(c.Name),
		Description: "scoreboard league: club " + c.Name + "'s history, the club's name in the subject",
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      maxAge,
		MaxMsgSize:  history.MaxMsgSize(),
		Duplicates:  min(clubDuplicates, maxAge),
		Storage:     jetstream.FileStorage,
		Replicas:    max(h.replicas, 1),
		Sources:     []*jetstream.StreamSource{source(c)},
	}, maxBytes)
}

// setStreams makes each club's stream, fitted to the hub's disk, sourcing the club,
// or none: a stream that cannot be set up undoes those set up before it (a reload
// is applied whole or not at all). Called with h.mu held.
func (h *Hub) setStreams(ctx context.Context, clubs []Club) error {
	want := make([]int64, len(clubs))
	ages := make([]time.Duration, len(clubs))
	var total int64
	for i, c := range clubs {
		b, a, err := c.share()
		if err != nil {
			return fmt.Errorf("hub: club %s: %w", c.Name, err)
		}
		want[i], ages[i], total = b, a, total+b
	}
	if h.state != nil && total > 0 {
		// As a club's history is fitted (history.FitStore): at most half the room
		// of the state dir's filesystem. The other half is the headroom of shares
		// the keeper holds, a look (10 s) of writes past them at most (the clubs'
		// intakes are in memory: accounts.go).
		size, room, err := h.state.Fit(total)
		switch {
		case err != nil:
			h.log.Warn().Err(err).Msg("league: the state dir's free space is unknown: each club keeps the share asked")
		case size < history.MinBytes:
			return fmt.Errorf("hub: the state dir %s has %d bytes of room, none for the clubs' streams; free some space, or give another --league-state-dir", h.state.Path, room)
		case size < total:
			// Each club keeps its part of what fits, at least the least a history is.
			for i := range want {
				want[i] = max(history.MinBytes, int64(float64(want[i])*float64(size)/float64(total)))
			}
			h.log.Warn().Str("store", h.state.Path).Int64("asked_bytes", total).Int64("fitted_bytes", size).Int64("room_bytes", room).
				Msg("league: the clubs' shares fitted to the hub's disk: together at most half the room of its filesystem, each club its part")
		}
	}
	var done []streamWas
	for i, c := range clubs {
		name := ClubStream(c.Name)
		cfg := h.clubStreamConfig(c, want[i], ages[i])
		ijs, err := h.intakeJS(c.Name)
		var was, intakeWas *jetstream.StreamConfig
		if err == nil {
			intakeWas, err = streamConfig(ctx, ijs, IntakeStream(c.Name))
		}
		if err == nil {
			// The intake first: the stream sources it, and a new intake starts where
			// the stream stands.
			err = h.makeIntake(ctx, c, cfg, h.sourceOff(c.Name))
		}
		if err == nil {
			done = append(done, streamWas{ijs, IntakeStream(c.Name), intakeWas})
			was, err = streamConfig(ctx, h.js, name)
		}
		if err == nil {
			_, err = h.js.CreateOrUpdateStream(ctx, cfg)
		}
		if err != nil {
			h.undoStreams(ctx, done)
			return fmt.Errorf("hub: stream %s: %w (no club of the new set is taken; the running clubs are kept)", name, err)
		}
		done = append(done, streamWas{h.js, name, was})
	}
	return nil
}

// streamWas is a stream's config before setStreams changed it; nil: it was not there.
type streamWas struct {
	js   jetstream.JetStream // the hub's, or the club's account's (its intake)
	name string
	cfg  *jetstream.StreamConfig
}

// streamConfig is a stream's config, nil if there is no such stream.
func streamConfig(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamConfig, error) {
	s, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cfg := s.CachedInfo().Config
	return &cfg, nil
}

// undoStreams puts the streams set up back as they were: a stream made is
// deleted (no club's units are in it: its club was not let in yet), one changed
// gets its config back.
func (h *Hub) undoStreams(ctx context.Context, done []streamWas) {
	for _, d := range slices.Backward(done) {
		var err error
		if d.cfg == nil {
			err = d.js.DeleteStream(ctx, d.name)
		} else {
			_, err = d.js.UpdateStream(ctx, *d.cfg)
		}
		if err != nil {
			h.log.Warn().Err(err).Str("stream", d.name).Msg("league: a reload not taken could not put the stream back as it was")
		}
	}
}

// parkRemoved parks the stream of each club removed (its units kept until its
// age drops them, its source off: added again, it resumes where it was), and the
// LEAGUE of a hub from before (migrate). Called with h.mu held, after the clubs'
// credentials are swapped.
func (h *Hub) parkRemoved(ctx context.Context, clubs []Club) {
	kept := map[string]bool{}
	for _, c := range clubs {
		kept[c.Name] = true
	}
	for _, old := range h.clubs {
		if !kept[old.Name] {
			h.park(ctx, h.js, ClubStream(old.Name), 0)
			if ijs, err := h.intakeJS(old.Name); err == nil {
				h.park(ctx, ijs, IntakeStream(old.Name), 0)
			}
		}
	}
	if !h.migrated {
		_, maxAge, _ := Club{}.share()
		h.park(ctx, h.js, Stream, maxAge)
		h.migrated = true
	}
}

// park takes a stream's sources off, so it grows no more and keeps what it has
// (maxAge, if not 0, ages it out). A stream not there is left so.
func (h *Hub) park(ctx context.Context, js jetstream.JetStream, name string, maxAge time.Duration) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return
	}
	cfg := s.CachedInfo().Config
	if len(cfg.Sources) == 0 {
		return
	}
	cfg.Sources, cfg.Subjects = nil, []string{parked(name)}
	if maxAge > 0 {
		cfg.MaxAge = maxAge
	}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		h.log.Warn().Err(err).Str("stream", name).Msg("league: could not take the stream's sources off")
		return
	}
	if name == Stream {
		h.log.Warn().Str("stream", name).Dur("max_age_ms", maxAge).
			Msg("league: the one LEAGUE stream of an earlier hub is fed no more: each club has its stream LEAGUE_<CLUB>, sourced from the first unit the club holds; LEAGUE is kept, read-only, until its units age out (docs/league.md)")
		return
	}
	h.log.Info().Str("stream", name).Msg("league: a removed club's stream is fed no more; its units are kept until they age out")
}
