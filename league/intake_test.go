package league_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
)

// lagStream takes a club's stream at the hub off its source, as a hub whose
// stream lags its intake: the club's units stay in the intake, in flight.
func lagStream(t *testing.T, h *league.Hub, club string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, _ := jetstream.New(h.Conn())
	s, err := js.Stream(ctx, league.ClubStream(club))
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.Sources, cfg.Subjects = nil, []string{"$LEAGUE.PARKED." + cfg.Name}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// intakeState is a club's intake's state at the hub; zero if it cannot be read.
func intakeState(h *league.Hub, club string) jetstream.StreamState {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := league.IntakeJS(h, club).Stream(ctx, league.IntakeStream(club))
	if err != nil {
		return jetstream.StreamState{}
	}
	return s.CachedInfo().State
}

// sizedUnit is a club's unit i, "unit i " filled with fill to size bytes, as
// onceEach reads it.
func sizedUnit(i, size int, fill string) []byte {
	unit := fmt.Appendf(nil, "unit %d ", i)
	return append(unit, strings.Repeat(fill, size-len(unit))...)
}

// onceEach says how a club's stream at the hub differs from units 1 to n of the
// club, in order, each once ("" if it does not), each unit's text "unit <i> ..."
// (sizedUnit).
func onceEach(t *testing.T, nc *nats.Conn, club string, n int) string {
	msgs := leagueMsgs(t, nc, club)
	var lost, twice, order int
	seen := map[int]int{}
	last := 0
	for _, m := range msgs {
		var i int
		if _, err := fmt.Sscanf(string(m.Data), "unit %d", &i); err != nil {
			return fmt.Sprintf("a unit %.20q not the club's", m.Data)
		}
		seen[i]++
		if seen[i] == 2 {
			twice++
		}
		if i < last {
			order++
		}
		last = i
	}
	for i := 1; i <= n; i++ {
		if seen[i] == 0 {
			lost++
		}
	}
	if lost+twice+order > 0 || len(msgs) != n {
		return fmt.Sprintf("%d units of %d: lost %d, twice %d, out of order %d", len(msgs), n, lost, twice, order)
	}
	return ""
}

// TestLeagueIntakeInFlightAtRestart: the clubs' intakes are in memory, so a hub
// restarted (or killed: cmd/scoreboard's TestLeagueStorm) comes back without the
// units that were in them and not yet in the clubs' streams. Each club's stream
// lags (its source taken off) while the club sends units 6 to 10, which stay in
// its intake; the hub stops and starts again on its store, on the same leaf port:
// each intake, new and empty, starts after the last unit its club's stream holds,
// and every club's units 1 to 15 are in its stream once each, in order.
func TestLeagueIntakeInFlightAtRestart(t *testing.T) {
	t.Parallel()
	clubs := []league.Club{{Name: "north", Token: "tn"}, {Name: "south", Token: "ts"}, {Name: "east", Token: "te"}}
	store := t.TempDir()
	leaf := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	start := func() *league.Hub {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h, err := league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: leaf, StoreDir: store, Clubs: clubs}, testLog(t))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := start()
	conns := map[string]*nats.Conn{}
	for _, c := range clubs {
		_, conns[c.Name] = startClub(t, "nats-leaf://"+leaf, c.Name, c.Token)
		publishUnits(t, conns[c.Name], 1, 5)
	}
	each := func(h *league.Hub, what string, cond func(club string) (bool, string)) {
		bustest.Wait(t, what, func() (bool, string) {
			var out []string
			ok := true
			for _, c := range clubs {
				done, says := cond(c.Name)
				ok = ok && done
				out = append(out, c.Name+": "+says)
			}
			return ok, strings.Join(out, "; ")
		})
	}
	each(h, "every club's units 1 to 5 at the hub", func(club string) (bool, string) {
		n := countLeague(t, h.Conn(), club)
		return n == 5, fmt.Sprintf("%d units", n)
	})
	for _, c := range clubs {
		lagStream(t, h, c.Name)
		publishUnits(t, conns[c.Name], 6, 10)
	}
	each(h, "every club's units 6 to 10 in flight, in its intake", func(club string) (bool, string) {
		st, n := intakeState(h, club), countLeague(t, h.Conn(), club)
		// Those the stream took before it lagged may be there still: the intake
		// lets a unit go when its stream's flow control reply says it is stored.
		return st.LastSeq == 10 && st.Msgs >= 5 && n == 5, fmt.Sprintf("intake %d units (last seq %d), stream %d", st.Msgs, st.LastSeq, n)
	})
	h.Shutdown()
	h = start()
	t.Cleanup(h.Shutdown)
	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	go h.WatchLinks(wctx, 200*time.Millisecond)
	for _, c := range clubs {
		publishUnits(t, conns[c.Name], 11, 15)
	}
	each(h, "every club's 15 units at the restarted hub", func(club string) (bool, string) {
		n := countLeague(t, h.Conn(), club)
		return n >= 15, fmt.Sprintf("%d units", n)
	})
	var bad []string
	for _, c := range clubs {
		if says := onceEach(t, h.Conn(), c.Name, 15); says != "" {
			bad = append(bad, c.Name+": "+says)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("after the restart, the clubs' streams at the hub: %s", strings.Join(bad, "; "))
	}
}

// TestLeagueIntakeFullBackPressure: a club's intake holds its account's memory
// (4 MiB) and refuses more while the club's stream at the hub lags: the
// club's 60 units of 100 KB (6 MB) wait at the club, the intake full, another club
// goes on, and once the stream takes units again all 40 come, once each, in order,
// and the intake is left empty.
func TestLeagueIntakeFullBackPressure(t *testing.T) {
	t.Parallel()
	h, _ := startLoggedHub(t, league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"})
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	_, south := startClub(t, h.LeafURL(), "south", "ts")
	publishUnits(t, north, 1, 1)
	bustest.Wait(t, "north's first unit", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 1, fmt.Sprintf("%d units", n)
	})
	lagStream(t, h, "north")
	const n, size = 60, 100 << 10
	for i := 2; i <= n; i++ {
		if err := north.Publish("scoreboard.dump.goscore.t1", sizedUnit(i, size, "x")); err != nil {
			t.Fatal(err)
		}
	}
	north.Flush()
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	cjs, _ := jetstream.New(north)
	room := int64(league.IntakeMaxBytes)
	bustest.Wait(t, "north's intake full, the rest of its units waiting at north", func() (bool, string) {
		st := intakeState(h, "north")
		s, err := cjs.Stream(ctx, "SCOREBOARD")
		club := uint64(0)
		if err == nil {
			club = s.CachedInfo().State.Msgs
		}
		return club == n && int64(st.Bytes)+size > room && st.Msgs < n-1,
			fmt.Sprintf("intake %d units, %d of %d bytes; north holds %d", st.Msgs, st.Bytes, room, club)
	})
	publishUnits(t, south, 1, 10)
	bustest.Wait(t, "south's 10 units beside north's full intake", func() (bool, string) {
		s := countLeague(t, h.Conn(), "south")
		return s == 10, fmt.Sprintf("LEAGUE_SOUTH %d", s)
	})
	var full atomic.Int64
	full.Store(int64(intakeState(h, "north").Msgs))
	if !league.KickSource(ctx, h, "north") {
		t.Fatal("north's stream not given its source back")
	}
	bustest.Wait(t, fmt.Sprintf("north's %d units, its intake drained (it held %d)", n, full.Load()), func() (bool, string) {
		c := countLeague(t, h.Conn(), "north")
		return c >= n, fmt.Sprintf("LEAGUE_NORTH %d; intake %d", c, intakeState(h, "north").Msgs)
	})
	if says := onceEach(t, h.Conn(), "north", n); says != "" {
		t.Fatalf("north's units after its full intake: %s", says)
	}
	// Nothing left behind in the intake, not even the unit its stream had taken
	// just before it lagged (its source removed before its flow control reply).
	bustest.Wait(t, "north's intake empty", func() (bool, string) {
		st := intakeState(h, "north")
		return st.Msgs == 0 && st.LastSeq == n, fmt.Sprintf("%d units, last seq %d", st.Msgs, st.LastSeq)
	})
	if says := onceEach(t, h.Conn(), "south", 10); says != "" {
		t.Fatalf("south's units: %s", says)
	}
}

// TestLeagueIntakeRoom: a club's intake holds two of the largest units of any
// problem (so one of any size fits once the one before is taken), and
// configs/league-hub.conf gives each club's account that memory too.
func TestLeagueIntakeRoom(t *testing.T) {
	if need := 2 * int64(history.MaxMsgSize()); league.IntakeMaxBytes < need {
		t.Fatalf("an intake's room is %d bytes; two of the largest units take %d", league.IntakeMaxBytes, need)
	}
	conf, err := os.ReadFile("../configs/league-hub.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("max_memory: %dMiB,", league.IntakeMaxBytes>>20)
	if n, accounts := strings.Count(string(conf), want), strings.Count(string(conf), "max_streams: 1,"); n != accounts || n == 0 {
		t.Fatalf("configs/league-hub.conf: %d club accounts with %q of %d", n, want, accounts)
	}
}

// TestLeagueIntakeClubStreamNew: a club's history made anew (its state dir wiped:
// numbered from 1 again, behind where its intake was) is taken from its first unit,
// once each, after the old one's units; and the intake, numbered behind the club's
// history since, is made again numbered as it.
func TestLeagueIntakeClubStreamNew(t *testing.T) {
	t.Parallel()
	h, log := startLoggedHub(t, league.Club{Name: "north", Token: "tn"})
	_, nc := hostileLeaf(t, h.LeafURL(), "north", "tn")
	publishUnits(t, nc, 1, 5)
	bustest.Wait(t, "north's 5 units", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 5, fmt.Sprintf("%d units", n)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, _ := jetstream.New(nc)
	if err := js.DeleteStream(ctx, "SCOREBOARD"); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SCOREBOARD", Subjects: []string{"scoreboard.>"}}); err != nil {
		t.Fatal(err)
	}
	publishUnits(t, nc, 6, 8)
	bustest.Wait(t, "north's 8 units; its intake numbered as its new history", func() (bool, string) {
		n, st := countLeague(t, h.Conn(), "north"), intakeState(h, "north")
		return n >= 8 && strings.Contains(log.String(), "numbered again"), fmt.Sprintf("%d units; intake last seq %d", n, st.LastSeq)
	})
	publishUnits(t, nc, 9, 10)
	bustest.Wait(t, "north's 10 units", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n >= 10, fmt.Sprintf("%d units", n)
	})
	if says := onceEach(t, h.Conn(), "north", 10); says != "" {
		t.Fatalf("north's units, its history made anew after unit 5: %s", says)
	}
	if st := intakeState(h, "north"); st.LastSeq != 5 {
		t.Fatalf("north's intake's last sequence %d; its new history's last is 5", st.LastSeq)
	}
}

// clubLeaf is a club's stock nats-server on its own state dir, store: joined to
// the hub as the club (leafURL), or unlinked (leafURL ""), as a club runs offline.
// Started again on the same store, its streams are as it left them.
func clubLeaf(t *testing.T, leafURL, club, token, store string) (*server.Server, *nats.Conn) {
	return clubLeafBefore(t, leafURL, club, token, store, nil)
}

// clubLeafBefore is clubLeaf, before (if not nil) called on the server before it
// starts.
func clubLeafBefore(t *testing.T, leafURL, club, token, store string, before func(*server.Server)) (*server.Server, *nats.Conn) {
	t.Helper()
	o := &server.Options{ServerName: "club-" + club, Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
		JetStream: true, JetStreamDomain: club, StoreDir: store}
	if leafURL != "" {
		u, err := url.Parse(leafURL)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(club, token)
		o.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{u}}}
	}
	ns, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(ns)
	}
	go ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("club's server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return ns, nc
}

// clubHistory is a club's SCOREBOARD on nc's server, made if it has none; it
// waits until the stream holds n units.
func clubHistory(t *testing.T, nc *nats.Conn, n uint64) jetstream.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	js, _ := jetstream.New(nc)
	s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "SCOREBOARD", Subjects: []string{"scoreboard.>"}})
	if err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, fmt.Sprintf("the club's history holding %d units", n), func() (bool, string) {
		info, err := s.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs == n, fmt.Sprintf("%d units, last seq %d", info.State.Msgs, info.State.LastSeq)
	})
	return s
}

// TestLeagueIntakeClubStreamNewPast: a club's history made anew while its link
// is down (its state dir wiped), and grown past where its intake was before the
// link comes up (8 units, where the old one held 5), is taken from its first unit:
// nothing but the new stream's identity (its Created time) tells it from the old
// one, whose next unit the hub's source would take from the new one's sixth. Every
// unit, the old history's 5 and the new one's 8, then 2 more, is at the hub once.
func TestLeagueIntakeClubStreamNewPast(t *testing.T) {
	t.Parallel()
	h, hlog := startLoggedHub(t, league.Club{Name: "north", Token: "tn"})
	linked := func(want bool) {
		bustest.Wait(t, fmt.Sprintf("north's link up %v at the hub", want), func() (bool, string) {
			up := h.Links()["north"]
			return up == want, fmt.Sprintf("link up %v", up)
		})
	}
	old, nc := clubLeaf(t, h.LeafURL(), "north", "tn", t.TempDir())
	clubHistory(t, nc, 0)
	publishUnits(t, nc, 1, 5)
	bustest.Wait(t, "north's 5 units", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 5, fmt.Sprintf("%d units", n)
	})
	// As a hub that has had the club a while: it has looked at north's source
	// since its link came up, and recorded which stream of north's it sources.
	bustest.Wait(t, "the hub recording which stream of north's its intake sources", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s, err := league.IntakeJS(h, "north").Stream(ctx, league.IntakeStream("north"))
		if err != nil {
			return false, err.Error()
		}
		md := s.CachedInfo().Config.Metadata
		return md[league.ClubCreatedKey] != "", fmt.Sprintf("intake metadata %v", md)
	})
	nc.Close()
	old.Shutdown()
	old.WaitForShutdown()
	linked(false)
	bustest.Wait(t, "the hub seeing north's link down", func() (bool, string) {
		return strings.Contains(hlog.String(), `"club":"north","link_up":false`), "not logged"
	})

	// The wipe: a new state dir, a new history, 8 units written offline.
	store := t.TempDir()
	ns, nc := clubLeaf(t, "", "north", "tn", store)
	clubHistory(t, nc, 0)
	publishUnits(t, nc, 6, 13)
	clubHistory(t, nc, 8)
	nc.Close()
	ns.Shutdown()
	ns.WaitForShutdown()

	_, nc = clubLeaf(t, h.LeafURL(), "north", "tn", store)
	linked(true)
	last := func() string {
		msgs := leagueMsgs(t, h.Conn(), "north")
		if len(msgs) == 0 {
			return ""
		}
		return string(msgs[len(msgs)-1].Data)
	}
	bustest.Wait(t, "north's unit 13 at the hub", func() (bool, string) {
		l := last()
		return l == "unit 13", fmt.Sprintf("%d units, the last %q", countLeague(t, h.Conn(), "north"), l)
	})
	if says := onceEach(t, h.Conn(), "north", 13); says != "" {
		t.Fatalf("north's units, its history made anew and grown past the old one's 5 while unlinked: %s", says)
	}
	publishUnits(t, nc, 14, 15)
	bustest.Wait(t, "north's unit 15 at the hub", func() (bool, string) {
		l := last()
		return l == "unit 15", fmt.Sprintf("%d units, the last %q", countLeague(t, h.Conn(), "north"), l)
	})
	if says := onceEach(t, h.Conn(), "north", 15); says != "" {
		t.Fatalf("north's units after 2 more: %s", says)
	}
}

// TestLeagueIntakesUnderBudget: under a small memory.budget (the server's
// JetStream memory a quarter of it, the bucket's), a hub of 50 clubs starts: each
// club's account's 4 MiB, reserved by JetStream when the account is set up, is
// beside that quarter, not in it (at 1.5 GiB, 200 clubs' hub exited: 'club c96's
// account: JetStream: insufficient memory resources available').
func TestLeagueIntakesUnderBudget(t *testing.T) {
	t.Parallel()
	var clubs []league.Club
	for i := range 50 {
		clubs = append(clubs, league.Club{Name: fmt.Sprintf("c%d", i), Token: fmt.Sprintf("t%d", i), MaxBytes: "16MiB"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	h, err := league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: t.TempDir(), Clubs: clubs, MaxMemory: 16 << 20}, testLog(t))
	if err != nil {
		t.Fatalf("a hub of %d clubs under a JetStream memory of 16 MiB: %v", len(clubs), err)
	}
	defer h.Shutdown()
	for _, c := range []string{"c0", "c49"} {
		if _, err := league.IntakeJS(h, c).Stream(ctx, league.IntakeStream(c)); err != nil {
			t.Fatalf("club %s's intake: %v", c, err)
		}
	}
}
