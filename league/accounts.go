package league

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
)

// A club's account at the hub (review F7). nats-server's sourcing answers a flow
// control request, or a heartbeat saying the consumer is stalled, by publishing from
// the sourcing stream's own internal client, with every right of its account, on
// the subject the club's message names: its reply subject, or its
// Nats-Consumer-Stalled header. No permission sees either. So the stream that takes
// a club's deliveries, its intake (INTAKE_<CLUB>), is in an account of the club's
// own, with the club's leaf connection, and nothing else: whatever a forged control
// makes it publish stays in that account, where the only stream is the intake. The
// hub's account sources each club's stream (LEAGUE_<CLUB>) from the intake, through
// what the club's account exports to the hub's alone:
//
//   - its JetStream API, imported as $JSIN.<club>.API (the hub sets up the intake and
//     its source's consumer there);
//   - the intake's source's deliveries, $LEAGUEIN.<club>.> (a stream), on which the
//     club's leaf may not publish: its rights stay $LEAGUE.<club>.> and $JSC.R.<club>.>;
//   - the flow control of the intake's consumers, $JS.FC.INTAKE_<CLUB>.> (a service),
//     where the hub's source answers.
//
// A forged control's answer in the club's account can reach the intake (purge or
// delete it: the hub makes it again and resumes where its stream was), the club's
// own leaf, or the intake's deliveries with neither a reply nor a status, which a
// source drops. The hub's account imports nothing the club can publish on.

// clubAccount is the name of a club's account at the hub.
func clubAccount(club string) string { return "club-" + club }

// IntakeStream is the stream in a club's account at the hub that sources the club's
// history across its domain, its subjects put under league.<club>: INTAKE_<CLUB>.
func IntakeStream(club string) string {
	return bus.Subjects{Prefix: "intake." + club}.Stream()
}

// intakeAPI is the JetStream API of a club's account, as the hub's account reaches it.
func intakeAPI(club string) string { return "$JSIN." + club + ".API" }

// intakeDeliver is where the intake's consumers deliver to the hub's account.
func intakeDeliver(club string) string { return "$LEAGUEIN." + club }

// intakeFC is the flow control of the intake's consumers.
func intakeFC(club string) string { return "$JS.FC." + IntakeStream(club) + ".>" }

// linkAccounts gives each club an account of its own at the hub's server, with
// JetStream, its exports to the hub's account and the hub's imports of them; a club
// set up before is left as it is. An account and its imports stay for the server's
// life (nats-server has no call to take an import away): a club removed keeps them,
// unused, its leaf refused.
func (h *Hub) linkAccounts(clubs []Club) error {
	if h.ns == nil {
		return nil // the server's own configuration has the accounts
	}
	hub := h.ns.GlobalAccount()
	for _, c := range clubs {
		if _, ok := h.accounts[c.Name]; ok {
			continue
		}
		acc, err := h.linkAccount(hub, c.Name, h.gate.room(len(clubs)))
		if err != nil {
			return fmt.Errorf("hub: club %s's account: %w", c.Name, err)
		}
		h.accounts[c.Name] = acc
	}
	h.auth.setAccounts(h.accounts)
	return nil
}

// linkAccount: the account's JetStream holds the intake alone, in memory, within
// room (the gate's).
func (h *Hub) linkAccount(hub *server.Account, club string, room int64) (*server.Account, error) {
	acc, _ := h.ns.LookupOrRegisterAccount(clubAccount(club))
	if !acc.JetStreamEnabled() {
		if err := acc.EnableJetStream(accountRoom(room), nil); err != nil {
			return nil, fmt.Errorf("JetStream: %w", err)
		}
	}
	only := []*server.Account{hub}
	for _, err := range []error{
		acc.AddServiceExport("$JS.API.>", only),
		acc.AddStreamExport(intakeDeliver(club)+".>", only),
		acc.AddServiceExport(intakeFC(club), only),
		hub.AddServiceImport(acc, intakeAPI(club)+".>", "$JS.API.>"),
		hub.AddStreamImport(acc, intakeDeliver(club)+".>", ""),
		hub.AddServiceImport(acc, intakeFC(club), intakeFC(club)),
	} {
		if err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// intakeJS is the JetStream API of a club's account, through the hub's import.
func (h *Hub) intakeJS(club string) (jetstream.JetStream, error) {
	return jetstream.NewWithAPIPrefix(h.nc, intakeAPI(club))
}

// clubSource is the intake's source: the club's history stream across the club's
// domain, its subjects put under league.<club>.
func clubSource(c Club) *jetstream.StreamSource {
	p := c.prefix()
	return &jetstream.StreamSource{
		Name: bus.Subjects{Prefix: p}.Stream(),
		External: &jetstream.ExternalStream{
			APIPrefix:     apiPrefix(c.Name),
			DeliverPrefix: deliverPrefix(c.Name),
		},
		SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: p + ".>", Destination: Subject(c.Name, ">")}},
	}
}

// source is a club's stream's source at the hub: the club's intake, in the club's account.
func source(c Club) *jetstream.StreamSource {
	return &jetstream.StreamSource{
		Name: IntakeStream(c.Name),
		External: &jetstream.ExternalStream{
			APIPrefix:     intakeAPI(c.Name),
			DeliverPrefix: intakeDeliver(c.Name),
		},
	}
}

// streamSourceHeader is where nats-server's sourcing says which stream and
// sequence a message came from: "<stream>[:<hash>] <seq> ...".
const streamSourceHeader = "Nats-Stream-Source"

// sourcePosition is where a club's stream at the hub stands, read from its last
// message's Nats-Stream-Source header: the sequence of the club's history it came
// from (a hub from before the intakes sourced the club directly), or of the intake.
// Both zero: the stream is empty or its position is not known.
func sourcePosition(last *jetstream.RawStreamMsg, c Club) (clubSeq, intakeSeq uint64) {
	if last == nil {
		return 0, 0
	}
	f := strings.Fields(last.Header.Get(streamSourceHeader))
	if len(f) < 2 {
		return 0, 0
	}
	seq, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, 0
	}
	// The stream's name, then ':' and a hash of its external API prefix.
	name, _, _ := strings.Cut(f[0], ":")
	switch name {
	case bus.Subjects{Prefix: c.prefix()}.Stream():
		return seq, 0
	case IntakeStream(c.Name):
		return 0, seq
	}
	return 0, 0
}

// intakeMaxBytes is a club's intake's room, the club's account's memory (as
// configs/league-hub.conf has it): at least two of the largest units
// (history.MaxMsgSize; TestLeagueIntakeRoom), so a unit of any size fits once the
// one before is taken. The intake is transit: the club's stream at the hub takes
// each unit off as it stores it (a work queue, its source's flow control replies
// acking), and when it lags the intake is full and refuses the next unit, which
// nats-server's source tries again from that unit on: back-pressure on the club's
// link, nothing dropped. In memory, not on disk: an intake on disk cost the hub a
// file store's write cache, 8 MiB a club (BENCHMARKS.md, "Memory budget"). The
// account's limit, not the stream's max_bytes: JetStream reserves a memory
// stream's max_bytes against the server's memory when it is made, a quarter of
// memory.budget (384 MiB of 1.5 GiB), which 200 intakes would take whole; the
// account's is checked against what its intake holds.
const intakeMaxBytes = 4 << 20

// intakeReserveClubs is how many clubs' accounts the server's JetStream memory
// has room for beside memory.budget's quarter (hub.go): JetStream reserves each
// account's limit when the account is set up, and refuses one past its memory;
// a hub of more clubs than this under a budget would refuse the last ones. It is
// a reservation: a club's intake holds units in flight alone, nothing most of the
// time, at most intakeMaxBytes.
const intakeReserveClubs = 1024

// intakeStart is where a new intake starts in its club's history.
type intakeStart struct {
	next  uint64     // the club's sequence it starts at; 0: the club's first
	since *time.Time // next not known: the club's units from then (may lose a unit in flight)
	first uint64     // then: the intake's first sequence, after its stream's last unit's
}

// intakeConfig is a club's intake, sourcing the club from start. It is numbered
// from the club's sequence it starts at, so each unit's sequence in the intake is
// its sequence in the club's history, the club's stream at the hub naming it in
// its Nats-Stream-Source header: the hub, restarted with its intakes (in memory)
// gone, starts each after the last unit its stream holds, exactly. A gap in the
// club's history (units it dropped before the hub took them) numbers the intake
// behind the club, never ahead: a start from the intake's number then takes a
// unit again, never skips one.
func intakeConfig(c Club, stream jetstream.StreamConfig, start intakeStart) jetstream.StreamConfig {
	src := clubSource(c)
	cfg := jetstream.StreamConfig{
		Name:        IntakeStream(c.Name),
		Description: "scoreboard league: club " + c.Name + "'s units in flight, taken by " + stream.Name,
		Retention:   jetstream.WorkQueuePolicy,
		Discard:     jetstream.DiscardNew,
		MaxAge:      stream.MaxAge,
		MaxMsgSize:  stream.MaxMsgSize,
		Duplicates:  stream.Duplicates,
		Storage:     jetstream.MemoryStorage,
		Replicas:    stream.Replicas,
		Sources:     []*jetstream.StreamSource{src},
	}
	switch {
	case start.next > 1:
		src.OptStartSeq, cfg.FirstSeq = start.next, start.next
	case start.since != nil:
		src.OptStartTime, cfg.FirstSeq = start.since, start.first
	}
	return cfg
}

// isIntake says whether a stream is an intake as this hub makes them (an earlier
// hub's was a file stream keeping the club's units).
func isIntake(cfg jetstream.StreamConfig) bool {
	return cfg.Storage == jetstream.MemoryStorage && cfg.Retention == jetstream.WorkQueuePolicy
}

// startAfter is where a new intake starts: after the club's sequence of the last
// unit its stream at the hub holds. The unit's Nats-Stream-Source header names
// the club's history (a hub from before the intakes), or the intake: this hub's
// are numbered as the club's history; an earlier hub's intake (old, on disk, still
// there) says in its own unit's header which of the club's it was. Only when that
// unit is gone from it does the start fall back to the time of the stream's last
// unit, as the earlier hub did.
func startAfter(ctx context.Context, c Club, last *jetstream.RawStreamMsg, old jetstream.Stream) intakeStart {
	clubSeq, intakeSeq := sourcePosition(last, c)
	switch {
	case clubSeq > 0 && clubSeq < ^uint64(0):
		return intakeStart{next: clubSeq + 1}
	case intakeSeq == 0 || intakeSeq == ^uint64(0):
		return intakeStart{}
	case old == nil || isIntake(old.CachedInfo().Config):
		return intakeStart{next: intakeSeq + 1}
	}
	if m, err := old.GetMsg(ctx, intakeSeq); err == nil {
		if clubSeq, _ := sourcePosition(m, c); clubSeq > 0 && clubSeq < ^uint64(0) {
			return intakeStart{next: clubSeq + 1}
		}
	}
	t := last.Time
	return intakeStart{since: &t, first: intakeSeq + 1}
}

// lastMsg is a stream's last message; nil if it has none, or no such stream.
func lastMsg(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.RawStreamMsg, error) {
	s, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	info := s.CachedInfo()
	if info.State.Msgs == 0 {
		return nil, nil
	}
	m, err := s.GetMsg(ctx, info.State.LastSeq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	return m, err
}

// makeIntake makes a club's intake, or sets an intake there up as the club's
// stream's config says, keeping its source, or giving it back the club's if it was
// parked. An earlier hub's intake (on disk) is replaced, the new one starting after
// the club's unit its stream holds last. stream is the club's stream's config at
// the hub. sourceOff: a kick took the intake's source off and gives it back
// (intakeHold): a parked intake is left so.
func (h *Hub) makeIntake(ctx context.Context, c Club, stream jetstream.StreamConfig, sourceOff bool) error {
	ijs, err := h.intakeJS(c.Name)
	if err != nil {
		return err
	}
	name := IntakeStream(c.Name)
	s, err := ijs.Stream(ctx, name)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return err
	}
	if err == nil && isIntake(s.CachedInfo().Config) {
		cfg := intakeConfig(c, stream, intakeStart{})
		switch old := s.CachedInfo().Config; {
		case len(old.Sources) == 1:
			cfg.Sources, cfg.FirstSeq = old.Sources, old.FirstSeq
			cfg.Metadata = withCreated(nil, sourcedCreated(old))
		case len(old.Sources) == 0 && sourceOff:
			cfg.Sources, cfg.Subjects, cfg.FirstSeq = nil, old.Subjects, old.FirstSeq
			cfg.Metadata = withCreated(nil, sourcedCreated(old))
		}
		_, err = ijs.UpdateStream(ctx, cfg)
		return err
	}
	if err != nil {
		s = nil
	}
	last, err := lastMsg(ctx, h.js, stream.Name)
	if err != nil {
		return fmt.Errorf("the last unit of %s: %w", stream.Name, err)
	}
	start := startAfter(ctx, c, last, s)
	if s != nil {
		if err := ijs.DeleteStream(ctx, name); err != nil {
			return fmt.Errorf("an earlier hub's intake, on disk, to be made again in memory: %w", err)
		}
	}
	_, err = ijs.CreateStream(ctx, intakeConfig(c, stream, start))
	return err
}
