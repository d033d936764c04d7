package league

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

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

// clubAccountLimits: the intake alone. Its size and age are its stream's own.
var clubAccountLimits = map[string]server.JetStreamAccountLimits{
	"": {MaxMemory: -1, MaxStore: -1, MaxStreams: 1, MaxConsumers: -1},
}

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
		acc, err := h.linkAccount(hub, c.Name)
		if err != nil {
			return fmt.Errorf("hub: club %s's account: %w", c.Name, err)
		}
		h.accounts[c.Name] = acc
	}
	h.auth.setAccounts(h.accounts)
	return nil
}

func (h *Hub) linkAccount(hub *server.Account, club string) (*server.Account, error) {
	acc, _ := h.ns.LookupOrRegisterAccount(clubAccount(club))
	if !acc.JetStreamEnabled() {
		if err := acc.EnableJetStream(clubAccountLimits, nil); err != nil {
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

// intakeConfig is a club's intake: the club's share (a hostile club fills its own
// intake, no more), sourcing the club. A new intake beside a club's stream that
// holds units starts where the stream is: after the club's sequence it came from,
// or (an intake deleted: by the club's own forged control) its sequences going on
// from the stream's position, and the club's units from the stream's last time.
func intakeConfig(c Club, stream jetstream.StreamConfig, last *jetstream.RawStreamMsg) jetstream.StreamConfig {
	src := clubSource(c)
	cfg := jetstream.StreamConfig{
		Name:        IntakeStream(c.Name),
		Description: "scoreboard league: club " + c.Name + "'s units as they come, sourced by " + stream.Name,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxBytes:    stream.MaxBytes,
		MaxAge:      stream.MaxAge,
		MaxMsgSize:  stream.MaxMsgSize,
		Duplicates:  stream.Duplicates,
		Storage:     jetstream.FileStorage,
		Replicas:    stream.Replicas,
		Sources:     []*jetstream.StreamSource{src},
	}
	switch clubSeq, intakeSeq := sourcePosition(last, c); {
	case clubSeq > 0:
		src.OptStartSeq = clubSeq + 1
	case intakeSeq > 0:
		cfg.FirstSeq = intakeSeq + 1
		t := last.Time
		src.OptStartTime = &t
	}
	return cfg
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
// stream's config says (its share), keeping its source, or giving it back the
// club's if it was parked. stream is the club's stream's config at the hub.
func (h *Hub) makeIntake(ctx context.Context, c Club, stream jetstream.StreamConfig) error {
	ijs, err := h.intakeJS(c.Name)
	if err != nil {
		return err
	}
	name := IntakeStream(c.Name)
	s, err := ijs.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		last, err := lastMsg(ctx, h.js, stream.Name)
		if err != nil {
			return fmt.Errorf("the last unit of %s: %w", stream.Name, err)
		}
		_, err = ijs.CreateStream(ctx, intakeConfig(c, stream, last))
		return err
	}
	if err != nil {
		return err
	}
	cfg := intakeConfig(c, stream, nil)
	if old := s.CachedInfo().Config.Sources; len(old) == 1 {
		cfg.Sources = old
	}
	_, err = ijs.UpdateStream(ctx, cfg)
	return err
}
