package league_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/league"
)

// forgedInfo answers the hub's asks of a club's history stream (its info) on the
// club's server: it reads the stream's true info there and says what forge makes
// of it, as a club running a server of its own making may; nothing, if forge
// says nil (a club that does not answer).
func forgedInfo(t *testing.T, nc *nats.Conn, forge func(info map[string]any) []byte) {
	t.Helper()
	js, _ := jetstream.New(nc)
	sub, err := nc.Subscribe("forged.info", func(m *nats.Msg) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, "SCOREBOARD")
		if err != nil {
			return
		}
		b, _ := json.Marshal(s.CachedInfo())
		var info map[string]any
		_ = json.Unmarshal(b, &info)
		info["type"] = "io.nats.jetstream.api.v1.stream_info_response"
		if b := forge(info); b != nil {
			_ = m.Respond(b)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
}

// TestLeagueIntakeForgedCreated: a club says what it likes of its own history
// stream when the hub asks it (its Created time, where it begins and ends): north's
// server sends the hub's asks to the test's responder (an account mapping made
// before its JetStream's own of its domain). A Created new at each ask makes each
// kick of north's intake's source take north's units again from its first: north's
// own units, twice at the hub, nothing of south's. Junk (a Created that is no time,
// empty, zero, a number, an object, 64 KB long; sequences out of range) changes
// nothing: the hub goes on, north's next units come after its last, once each.
// recordedCreated is the Created time of the club's history stream that its intake
// at the hub records (clubCreatedKey), or why it could not be read.
func recordedCreated(h *league.Hub, club string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := league.IntakeJS(h, club).Stream(ctx, league.IntakeStream(club))
	if err != nil {
		return err.Error()
	}
	return s.CachedInfo().Config.Metadata[league.ClubCreatedKey]
}

func TestLeagueIntakeForgedCreated(t *testing.T) {
	t.Parallel()
	h, _ := startLoggedHub(t, league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"})
	_, nc := clubLeafBefore(t, h.LeafURL(), "north", "tn", t.TempDir(), func(ns *server.Server) {
		if err := ns.GlobalAccount().AddMapping("$JS.north.API.STREAM.INFO.SCOREBOARD", "forged.info"); err != nil {
			t.Fatal(err)
		}
	})
	var forged atomic.Int64 // asks answered
	var junk atomic.Value   // the junk answer, once set
	forgedInfo(t, nc, func(info map[string]any) []byte {
		n := forged.Add(1)
		if j, ok := junk.Load().(string); ok {
			return []byte(j)
		}
		info["created"] = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Hour)
		b, _ := json.Marshal(info)
		return b
	})
	clubHistory(t, nc, 0)
	_, south := startClub(t, h.LeafURL(), "south", "ts")
	publishUnits(t, nc, 1, 5)
	publishUnits(t, south, 1, 5)
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	recorded := func() string { return recordedCreated(h, "north") }
	bustest.Wait(t, "both clubs' 5 units; north's forged Created recorded", func() (bool, string) {
		n, s := countLeague(t, h.Conn(), "north"), countLeague(t, h.Conn(), "south")
		return n == 5 && s == 5 && strings.HasPrefix(recorded(), "2020-"), fmt.Sprintf("north %d, south %d; recorded %q, %d asks", n, s, recorded(), forged.Load())
	})
	// Each kick: another Created, north's units again from its first, once its
	// intake is numbered as its history again.
	for kick := 1; kick <= 2; kick++ {
		bustest.Wait(t, "north's intake numbered as its history", func() (bool, string) {
			st := intakeState(h, "north")
			return st.Msgs == 0 && st.LastSeq == 5, fmt.Sprintf("%d units, last seq %d", st.Msgs, st.LastSeq)
		})
		if !league.KickIntake(ctx, h, "north") {
			t.Fatalf("kick %d: north's intake's source not set up again", kick)
		}
		bustest.Wait(t, fmt.Sprintf("north's units taken again, kick %d", kick), func() (bool, string) {
			n := countLeague(t, h.Conn(), "north")
			return n == 5*(kick+1), fmt.Sprintf("%d units; recorded %q, %d asks", n, recorded(), forged.Load())
		})
	}
	msgs := leagueMsgs(t, h.Conn(), "north")
	for i, m := range msgs {
		if want := fmt.Sprintf("unit %d", i%5+1); string(m.Data) != want {
			t.Fatalf("north's message %d of %d at the hub is %q, want %q (its own units, again from its first)", i+1, len(msgs), m.Data, want)
		}
	}
	// Junk: none of it is recorded, none takes north's units again.
	bustest.Wait(t, "north's intake numbered as its history, a forged Created recorded", func() (bool, string) {
		st := intakeState(h, "north")
		return st.Msgs == 0 && st.LastSeq == 5 && strings.HasPrefix(recorded(), "2020-"), fmt.Sprintf("%d units, last seq %d; recorded %q", st.Msgs, st.LastSeq, recorded())
	})
	was := recorded()
	for _, j := range []string{
		`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"SCOREBOARD"},"created":"garbage","state":{"first_seq":1,"last_seq":5}}`,
		`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"SCOREBOARD"},"created":"","state":{"first_seq":1,"last_seq":5}}`,
		`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"SCOREBOARD"},"created":"0001-01-01T00:00:00Z","state":{"first_seq":1,"last_seq":5}}`,
		`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"SCOREBOARD"},"created":12345,"state":{"first_seq":1,"last_seq":5}}`,
		`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"SCOREBOARD"},"created":{"a":[1,2]},"state":{"first_seq":1,"last_seq":5}}`,
		`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"SCOREBOARD"},"created":"2020-01-01T00:00:00Z","state":{"first_seq":-1,"last_seq":5}}`,
		`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"SCOREBOARD"},"created":"` + strings.Repeat("9", 64<<10) + `","state":{"first_seq":1,"last_seq":5}}`,
		`{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{"name":"SCOREBOARD"},"created":"2020-01-01T00:00:00Z","state":{"first_seq":1,"last_seq":18446744073709551616}}`,
		`not json`,
	} {
		junk.Store(j)
		before := forged.Load()
		if !league.KickIntake(ctx, h, "north") {
			t.Fatalf("north's intake's source not set up again, its stream's info %.60s", j)
		}
		if forged.Load() == before {
			t.Fatalf("the kick did not ask north's stream (%.60s)", j)
		}
		if r := recorded(); r != was {
			t.Fatalf("north's stream's info %.60s: the intake records %q, not %q as before", j, r, was)
		}
	}
	publishUnits(t, nc, 6, 7)
	publishUnits(t, south, 6, 10)
	bustest.Wait(t, "north's units 6 and 7 after its junk; south's 10", func() (bool, string) {
		n, s := countLeague(t, h.Conn(), "north"), countLeague(t, h.Conn(), "south")
		return n == 17 && s == 10, fmt.Sprintf("north %d (want 15 and 2), south %d", n, s)
	})
	msgs = leagueMsgs(t, h.Conn(), "north")
	if a, b := string(msgs[15].Data), string(msgs[16].Data); a != "unit 6" || b != "unit 7" {
		t.Fatalf("north's last two units at the hub %q, %q; want unit 6, unit 7", a, b)
	}
	if says := onceEach(t, h.Conn(), "south", 10); says != "" {
		t.Fatalf("south's units beside north's forged stream info: %s", says)
	}
}

// TestLeagueIntakeLearnsCreatedLater: a club that does not answer the hub's ask of
// its history stream when its link comes up (busy, or its answer lost) leaves its
// intake without a record of which of its streams it sources, by which the hub
// tells a club's state dir wiped on its next kick. The hub asks again while the
// link stays up, and records the answer once the club gives one.
func TestLeagueIntakeLearnsCreatedLater(t *testing.T) {
	t.Parallel()
	h, hlog := startLoggedHub(t, league.Club{Name: "north", Token: "tn"})
	_, nc := clubLeafBefore(t, h.LeafURL(), "north", "tn", t.TempDir(), func(ns *server.Server) {
		if err := ns.GlobalAccount().AddMapping("$JS.north.API.STREAM.INFO.SCOREBOARD", "forged.info"); err != nil {
			t.Fatal(err)
		}
	})
	var asks atomic.Int64
	var answer atomic.Bool
	forgedInfo(t, nc, func(info map[string]any) []byte {
		asks.Add(1)
		if !answer.Load() {
			return nil
		}
		b, _ := json.Marshal(info)
		return b
	})
	clubHistory(t, nc, 0)
	publishUnits(t, nc, 1, 5)
	bustest.Wait(t, "north's 5 units at the hub, its stream asked once at least", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 5 && asks.Load() > 0, fmt.Sprintf("%d units, %d asks", n, asks.Load())
	})
	if r := recordedCreated(h, "north"); r != "" {
		t.Fatalf("north answered no ask, and its intake records its stream's Created %q", r)
	}
	// A kick records too: the learner's own line says it was the ask again.
	learned := func() int {
		return strings.Count(hlog.String(), `"club":"north","created":`)
	}
	ups := func() int { return strings.Count(hlog.String(), `"club":"north","link_up"`) }
	linked := ups()
	answer.Store(true)
	bustest.Wait(t, "north's stream's Created recorded by an ask again once north answers, its link up all along", func() (bool, string) {
		r := recordedCreated(h, "north")
		_, err := time.Parse(time.RFC3339Nano, r)
		return err == nil && learned() == 1, fmt.Sprintf("recorded %q after %d asks; %d lines of the learner's", r, asks.Load(), learned())
	})
	if l := ups(); l != linked {
		t.Fatalf("north's link changed %d times while its Created came to be recorded: not the asks again", l-linked)
	}
	if n := countLeague(t, h.Conn(), "north"); n != 5 {
		t.Fatalf("north's units at the hub: %d, want 5", n)
	}
}
