package league_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/prune"
)

func testLog(t *testing.T) zerolog.Logger {
	if os.Getenv("LEAGUE_TEST_LOG") != "" {
		return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)
	}
	return zerolog.Nop()
}

func startHub(t *testing.T, clubs ...league.Club) *league.Hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := league.Start(ctx, league.Options{
		Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: t.TempDir(), Clubs: clubs,
	}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	return h
}

// startClub starts a club's embedded server linked to hubURL, with its history.
func startClub(t *testing.T, hubURL, name, token string) (*bus.Server, *nats.Conn) {
	t.Helper()
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true, Hub: &bus.HubLink{URL: hubURL, Club: name, Token: token}})
	return b.Server, setupHistory(t, b)
}

// leagueMsgs reads every message of the clubs' streams, each in its order: their
// subjects and data.
func leagueMsgs(t *testing.T, nc *nats.Conn, clubs ...string) []*nats.Msg {
	t.Helper()
	js, _ := jetstream.New(nc)
	// Generous: 30 reads of 100 KiB took 10 s under -race at a load of 27.
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	var out []*nats.Msg
	for _, club := range clubs {
		s, err := js.Stream(ctx, league.ClubStream(club))
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if err != nil {
				t.Fatalf("%s seq %d: %v", league.ClubStream(club), seq, err)
			}
			out = append(out, &nats.Msg{Subject: m.Subject, Data: m.Data, Header: m.Header})
		}
	}
	return out
}

// countLeague counts the messages of the clubs' streams; -1 if one cannot be read.
func countLeague(t *testing.T, nc *nats.Conn, clubs ...string) int {
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n := 0
	for _, club := range clubs {
		s, err := js.Stream(ctx, league.ClubStream(club))
		if err != nil {
			return -1
		}
		info, err := s.Info(ctx)
		if err != nil {
			return -1
		}
		n += int(info.State.Msgs)
	}
	return n
}

// TestLeagueSourcesClubs: two clubs' histories come into LEAGUE, each under its
// club's name, in the club's order; units answered while the hub was away come
// when it is back.
func TestLeagueSourcesClubs(t *testing.T) {
	h := startHub(t, league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"})
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	_, south := startClub(t, h.LeafURL(), "south", "ts")
	bustest.Wait(t, "both links up", func() (bool, string) {
		l := h.Links()
		return l["north"] && l["south"], fmt.Sprintf("links %v", l)
	})
	for i := 1; i <= 20; i++ {
		for _, nc := range []*nats.Conn{north, south} {
			if err := nc.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	north.Flush()
	south.Flush()
	bustest.Wait(t, "40 units in LEAGUE", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north", "south")
		counts := fmt.Sprintf("%d units", n)
		if n != 40 {
			js, _ := jetstream.New(h.Conn())
			for _, club := range []string{"north", "south"} {
				s, _ := js.Stream(context.Background(), league.ClubStream(club))
				if i, err := s.Info(context.Background()); err == nil {
					for _, si := range i.Sources {
						counts += fmt.Sprintf("; source %s lag %d active %v err %v", si.Name, si.Lag, si.Active, si.Error)
					}
				}
			}
		}
		return n == 40, counts
	})
	got := map[string][]string{}
	for _, m := range leagueMsgs(t, h.Conn(), "north", "south") {
		club, rest, err := league.ParseSubject(m.Subject)
		if err != nil || rest != "dump.goscore.t1" {
			t.Fatalf("subject %q: %v", m.Subject, err)
		}
		got[club] = append(got[club], string(m.Data))
	}
	for _, club := range []string{"north", "south"} {
		if len(got[club]) != 20 {
			t.Fatalf("%s: %d units in its stream, want 20", club, len(got[club]))
		}
		for i, u := range got[club] {
			if u != fmt.Sprintf("unit %d", i+1) {
				t.Fatalf("%s: unit %d is %q: out of order", club, i+1, u)
			}
		}
	}
}

// TestLeagueClubCredentialsFault: club north's credentials are refused as club
// south, and a club let in under its own name can neither answer the hub's
// sourcing of another club nor publish into the hub beyond its own delivery.
func TestLeagueClubCredentialsFault(t *testing.T) {
	// Its time is the leaf links' reconnect waits: it waits beside the others.
	t.Parallel()
	h := startHub(t, league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"})
	// north's token, presented as south: refused, the link never comes up.
	srv := bustest.Start(t, bustest.Options{Off: true, JetStream: true, Hub: &bus.HubLink{URL: h.LeafURL(), Club: "south", Token: "tn"}})
	// A real north connects meanwhile, so the hub is seen taking leaf connections.
	startClub(t, h.LeafURL(), "north", "tn")
	bustest.Wait(t, "north's link up", func() (bool, string) { l := h.Links(); return l["north"], fmt.Sprintf("links %v", l) })
	time.Sleep(3 * bus.HubLinkReconnect) // several attempts of the impostor
	if h.Links()["south"] || srv.HubLinked() {
		t.Fatalf("north's token let in as south: hub links %v, impostor linked %v", h.Links(), srv.HubLinked())
	}
}

// TestLeagueClubPermissions: what a club's leaf connection may do at the hub is
// only its own sourcing.
func TestLeagueClubPermissions(t *testing.T) {
	p := league.ClubPermissions("north")
	for _, s := range []string{"$LEAGUE.north.S.abc", "$JSC.R.north.x.SCOREBOARD.c.r"} {
		if !matchAny(p.Publish.Allow, s) {
			t.Errorf("north may not publish %s", s)
		}
	}
	for _, s := range []string{"$LEAGUE.south.S.abc", "$JSC.R.south.x.y", "$JS.API.STREAM.CREATE.X", "scoreboard.dump.goscore.t1", "league.south.dump.x.y", "_INBOX.abc"} {
		if matchAny(p.Publish.Allow, s) {
			t.Errorf("north may publish %s", s)
		}
	}
	for _, s := range []string{"$JS.south.API.CONSUMER.CREATE.SCOREBOARD", "scoreboard.result.>"} {
		if matchAny(p.Subscribe.Allow, s) {
			t.Errorf("north may receive %s", s)
		}
	}
}

func matchAny(patterns []string, subject string) bool {
	for _, p := range patterns {
		if subjectMatch(p, subject) {
			return true
		}
	}
	return false
}

func subjectMatch(pattern, subject string) bool {
	pt, st := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, p := range pt {
		if p == ">" {
			return len(st) > i
		}
		if i >= len(st) || (p != "*" && p != st[i]) {
			return false
		}
	}
	return len(pt) == len(st)
}

// TestLeagueHubCannotWriteClubFault: nothing the hub sends over the link puts
// words on a club's scoreboard or writes into, or takes from, its history: dumps,
// results and inbox replies published at the hub do not reach the club's
// subscribers, and the club's domain API refuses every writing call, while the
// reading one the sourcing needs (stream info) is answered.
func TestLeagueHubCannotWriteClubFault(t *testing.T) {
	h := startHub(t, league.Club{Name: "north", Token: "tn"})
	_, club := startClub(t, h.LeafURL(), "north", "tn")
	bustest.Wait(t, "north's link up", func() (bool, string) { l := h.Links(); return l["north"], fmt.Sprintf("links %v", l) })
	got := make(chan string, 100)
	// From north's own account at the hub, where its link is: the hub's own
	// account does not reach the club's domain at all.
	hub := league.AccountConn(t, h, "north")
	for _, s := range []string{"scoreboard.>", "_INBOX.>", "$KV.>", "$SRV.>"} {
		sub, err := club.Subscribe(s, func(m *nats.Msg) { got <- m.Subject })
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	club.Flush()
	if err := club.Publish("scoreboard.dump.goscore.t1", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	<-got
	<-got // and the copy the club's history takes (its ports' part: CaptureHistory)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The club answers the hub only on $JSC.R.<club> (what the sourcing's
	// requests reply to): the hub's own inboxes are among what it denies.
	n := 0
	request := func(subject string, data []byte, timeout time.Duration) (*nats.Msg, error) {
		n++
		reply := fmt.Sprintf("$JSC.R.north.test.%d", n)
		sub, err := hub.SubscribeSync(reply)
		if err != nil {
			return nil, err
		}
		defer sub.Unsubscribe()
		if err := hub.PublishRequest(subject, reply, data); err != nil {
			return nil, err
		}
		return sub.NextMsg(timeout)
	}
	// The positive control: the path to the club's domain works for reading.
	bustest.Wait(t, "the club's stream info through its domain", func() (bool, string) {
		_, err := request("$JS.north.API.STREAM.INFO.SCOREBOARD", nil, time.Second)
		return err == nil, fmt.Sprintf("request: %v", err)
	})
	hub.Publish("scoreboard.dump.goscore.t1", []byte("forged unit"))
	hub.Publish("scoreboard.result.goscore.t1", []byte(`{"answer":"forged"}`))
	hub.Publish("_INBOX.x.y", []byte("forged reply"))
	hub.Publish("$KV.SCOREBOARD_BOARDS.t1", []byte("forged board"))
	hub.Publish("$SRV.PING", nil)
	var answered []string
	for _, api := range []string{
		"STREAM.PURGE.SCOREBOARD", "STREAM.DELETE.SCOREBOARD", "STREAM.MSG.DELETE.SCOREBOARD",
		"STREAM.UPDATE.SCOREBOARD", "STREAM.CREATE.FORGED", "DIRECT.GET.SCOREBOARD", "ACCOUNT.PURGE.X",
	} {
		if m, err := request("$JS.north.API."+api, []byte(`{"seq":1,"name":"FORGED","subjects":["scoreboard.>"]}`), time.Second); err == nil {
			answered = append(answered, api+": "+string(m.Data))
		}
	}
	hub.Flush()
	// A round trip over the link after the forgeries: the club has got whatever
	// it would get of them.
	if _, err := request("$JS.north.API.STREAM.INFO.SCOREBOARD", nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	var reached []string
	for len(got) > 0 {
		reached = append(reached, <-got)
	}
	js, _ := jetstream.New(club)
	s, err := js.Stream(ctx, "SCOREBOARD")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(reached) > 0 || len(answered) > 0 || info.State.Msgs != 1 {
		t.Fatalf("the hub reached the club: %d messages on its subjects %v, %d writing API calls answered %v, club history %d messages (want 1)",
			len(reached), reached, len(answered), answered, info.State.Msgs)
	}
}

// lastUnit is the data of the last dump of port t1 in a club's stream at the hub,
// and how many bytes and messages the stream holds.
func lastUnit(t *testing.T, nc *nats.Conn, club string) (last string, bytes, msgs uint64) {
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, league.ClubStream(club))
	if err != nil {
		return "", 0, 0
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "", 0, 0
	}
	m, err := s.GetLastMsgForSubject(ctx, league.Subject(club, "dump.goscore.t1"))
	if err != nil {
		return "", info.State.Bytes, info.State.Msgs
	}
	return string(m.Data), info.State.Bytes, info.State.Msgs
}

// TestLeagueClubShare: each club has its share of the hub's store, held by the
// hub's keeper (package prune, as cmd's hub runs it). north, past its share (64 KiB,
// its [[club]] max_bytes), loses its own oldest units, those the keeper dropped and
// no others; south, which shares the hub, keeps every one of its units.
func TestLeagueClubShare(t *testing.T) {
	h := startHub(t, league.Club{Name: "north", Token: "tn", MaxBytes: "64KiB"}, league.Club{Name: "south", Token: "ts"})
	js, err := jetstream.New(h.Conn())
	if err != nil {
		t.Fatal(err)
	}
	keeper := prune.New(js, league.IsClubStream, testLog(t))
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	_, south := startClub(t, h.LeafURL(), "south", "ts")
	pad := strings.Repeat("x", 1000)
	const nNorth, nSouth = 300, 100
	for i := 1; i <= max(nNorth, nSouth); i++ {
		if i <= nNorth {
			if err := north.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d %s", i, pad)); err != nil {
				t.Fatal(err)
			}
		}
		if i <= nSouth {
			if err := south.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d %s", i, pad)); err != nil {
				t.Fatal(err)
			}
		}
	}
	north.Flush()
	south.Flush()
	const share = 64 << 10
	bustest.Wait(t, "both clubs' last units at the hub, north kept below its share", func() (bool, string) {
		if err := keeper.Look(context.Background()); err != nil {
			return false, err.Error()
		}
		n, nb, nm := lastUnit(t, h.Conn(), "north")
		s, _, sm := lastUnit(t, h.Conn(), "south")
		want := fmt.Sprintf("unit %d ", nNorth)
		return strings.HasPrefix(n, want) && nb <= uint64(prune.High(share)) && sm == nSouth,
			fmt.Sprintf("north's last %.12q (%d messages, %d bytes), south %d messages, last %.12q", n, nm, nb, sm, s)
	})
	_, nb, nm := lastUnit(t, h.Conn(), "north")
	if nb > share || nm >= nNorth || nm+keeper.Dropped() != nNorth {
		t.Fatalf("north holds %d bytes in %d messages, the keeper dropped %d: want at most its share, 65536 bytes, and %d units kept and dropped",
			nb, nm, keeper.Dropped(), nNorth)
	}
	msgs := leagueMsgs(t, h.Conn(), "north", "south")
	var firstNorth string
	southUnits := 0
	for _, m := range msgs {
		club, _, _ := league.ParseSubject(m.Subject)
		switch {
		case club == "north" && firstNorth == "":
			firstNorth = string(m.Data)
		case club == "south":
			southUnits++
			if want := fmt.Sprintf("unit %d ", southUnits); !strings.HasPrefix(string(m.Data), want) {
				t.Fatalf("south's unit %d is %.12q: south lost units to north's share", southUnits, m.Data)
			}
		}
	}
	if southUnits != nSouth || strings.HasPrefix(firstNorth, "unit 1 ") {
		t.Fatalf("south keeps %d of its %d units; north's oldest kept is %.12q (want its first ones dropped)", southUnits, nSouth, firstNorth)
	}
	t.Logf("north: %d of %d units kept (%d bytes, share 65536), oldest %.12q; south: %d of %d", nm, nNorth, nb, firstNorth, southUnits, nSouth)
}

// TestLeagueClubRemovedAndBack: a club removed (SIGHUP) keeps its units at the hub,
// and its stream is fed no more; added back, its source goes on from where it was:
// every unit once, in order.
func TestLeagueClubRemovedAndBack(t *testing.T) {
	// Its time is the leaf links' reconnect waits: it waits beside the others.
	t.Parallel()
	h := startHub(t, league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"})
	// As scoreboard hub does: a source idle on a link that is up is set up again.
	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	go h.WatchLinks(wctx, 200*time.Millisecond)
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	publish := func(from, to int) {
		for i := from; i <= to; i++ {
			if err := north.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d", i)); err != nil {
				t.Fatal(err)
			}
		}
		north.Flush()
	}
	publish(1, 10)
	bustest.Wait(t, "north's 10 units", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 10, fmt.Sprintf("%d units", n)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.SetClubs(ctx, []league.Club{{Name: "south", Token: "ts"}}); err != nil {
		t.Fatal(err)
	}
	publish(11, 20)
	if n := countLeague(t, h.Conn(), "north"); n != 10 {
		t.Fatalf("north removed: its stream holds %d units, want its 10 kept", n)
	}
	if err := h.SetClubs(ctx, []league.Club{{Name: "north", Token: "tn"}, {Name: "south", Token: "ts"}}); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "north's 20 units, once each", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n >= 20, fmt.Sprintf("%d units", n)
	})
	for i, m := range leagueMsgs(t, h.Conn(), "north") {
		if string(m.Data) != fmt.Sprintf("unit %d", i+1) {
			t.Fatalf("north's unit %d is %q: lost, twice or out of order", i+1, m.Data)
		}
	}
}

// TestLeagueOldStreamParked: a hub upgraded from the one LEAGUE stream of every club
// takes its sources off (it grows no more) and keeps what it holds; each club's
// stream sources the club from its first unit.
func TestLeagueOldStreamParked(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clubs := []league.Club{{Name: "north", Token: "tn"}}
	h, err := league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: dir, Clubs: clubs}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(h.Conn())
	// The earlier hub's LEAGUE: no subjects, a source per club.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: league.Stream, Sources: []*jetstream.StreamSource{{
		Name: "SCOREBOARD", External: &jetstream.ExternalStream{APIPrefix: "$JS.north.API", DeliverPrefix: "$LEAGUE.north"},
		SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "scoreboard.>", Destination: "league.north.>"}},
	}}}); err != nil {
		t.Fatal(err)
	}
	leaf := h.LeafURL()
	h.Shutdown()
	h, err = league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: strings.TrimPrefix(leaf, "nats-leaf://"), StoreDir: dir, Clubs: clubs}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown()
	js, _ = jetstream.New(h.Conn())
	s, err := js.Stream(ctx, league.Stream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	if len(cfg.Sources) != 0 || cfg.MaxAge == 0 || len(cfg.Subjects) != 1 || !strings.HasPrefix(cfg.Subjects[0], "$LEAGUE.") {
		t.Fatalf("the old LEAGUE after the upgrade: sources %d, subjects %v, max age %v; want no sources, a subject no one may publish on, an age", len(cfg.Sources), cfg.Subjects, cfg.MaxAge)
	}
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	north.Publish("scoreboard.dump.goscore.t1", []byte("unit 1"))
	north.Flush()
	bustest.Wait(t, "north's unit in its own stream", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 1, fmt.Sprintf("%d units", n)
	})
}

// TestLeagueSharesFittedToDisk: shares that ask for more than the hub's disk has
// (100 TB each) are fitted to half its filesystem's room, each club its part, and
// the hub starts (JetStream would refuse a stream whose limit it cannot reserve).
// The clubs' intakes are in memory, bound by their accounts (TestLeagueIntakeRoom).
func TestLeagueSharesFittedToDisk(t *testing.T) {
	dir, err := history.OpenStateDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	_, room, err := dir.Fit(0)
	if err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: dir.Path, State: dir,
		Clubs: []league.Club{{Name: "north", Token: "tn", MaxBytes: "100TB"}, {Name: "south", Token: "ts", MaxBytes: "100TB"}}}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown()
	js, _ := jetstream.New(h.Conn())
	var total int64
	for _, club := range []string{"north", "south"} {
		// Its stream on disk; its intake in its account, in memory.
		s, err := js.Stream(ctx, league.ClubStream(club))
		if err != nil {
			t.Fatal(err)
		}
		in, err := league.IntakeJS(h, club).Stream(ctx, league.IntakeStream(club))
		if err != nil {
			t.Fatal(err)
		}
		if ic := in.CachedInfo().Config; ic.Storage != jetstream.MemoryStorage || ic.MaxBytes > 0 {
			t.Errorf("%s: intake in %v storage, max_bytes %d; want memory, bound by its account alone", club, ic.Storage, ic.MaxBytes)
		}
		// Held by the keeper, not the server (4 MiB blocks: TestLeagueClubStreamBlocks).
		cfg := s.CachedInfo().Config
		if cfg.MaxBytes > 0 {
			t.Errorf("%s: the server's max_bytes is %d; want none, the share the keeper's", club, cfg.MaxBytes)
		}
		total += prune.MaxBytes(cfg)
	}
	// The hub reads the room again: a disk that others write on moves between the
	// two readings (2,048 bytes over half of 39.7 GB, once, in a CI run).
	if total > room/2+room/100 || total < room/2-room/100 {
		t.Fatalf("the shares together: %d bytes; want half the room, %d of %d", total, room/2, room)
	}
}

// TestLeagueOverLargeMessage: a message larger than any unit in a club's stream
// (one written without the club's own MaxMsgSize) is refused by the club's stream at
// the hub; the club's feed stops there, and another club's goes on.
func TestLeagueOverLargeMessage(t *testing.T) {
	var logs proctest.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: t.TempDir(),
		Clubs: []league.Club{{Name: "north", Token: "tn"}, {Name: "south", Token: "ts"}}}, zerolog.New(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown()
	go h.WatchLinks(ctx, 200*time.Millisecond)
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true, Hub: &bus.HubLink{URL: h.LeafURL(), Club: "north", Token: "tn"}})
	north := b.Conn(bus.ConnOptions{Server: b.Server, Name: "club north"})
	js, _ := jetstream.New(north)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SCOREBOARD", Subjects: []string{"scoreboard.>"}}); err != nil {
		t.Fatal(err)
	}
	_, south := startClub(t, h.LeafURL(), "south", "ts")
	if _, err := js.Publish(ctx, "scoreboard.dump.goscore.t1", []byte("unit 1")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "scoreboard.dump.capture.t1", []byte(strings.Repeat("x", int(history.MaxMsgSize())+1024))); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "scoreboard.dump.goscore.t1", []byte("unit 3")); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "north's first unit at the hub", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 1, fmt.Sprintf("%d", n)
	})
	for i := 1; i <= 20; i++ {
		south.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d", i))
	}
	south.Flush()
	bustest.Wait(t, "south's 20 units, and the hub saying it refused north's over-large one", func() (bool, string) {
		n := countLeague(t, h.Conn(), "south")
		return n == 20 && strings.Contains(logs.String(), "maximum payload exceeded"), fmt.Sprintf("south: %d units", n)
	})
	if n := countLeague(t, h.Conn(), "north"); n != 1 {
		t.Fatalf("north: %d at the hub, want 1 (its feed stops at the over-large message)", n)
	}
}
