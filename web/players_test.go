package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/pairing"
)

// round applies a round of games to the league page's pairings' bucket, as the
// hub's load does: games by table, tables to ports.
func (p *leaguePage) round(t *testing.T, n int, games map[string][2]string) {
	t.Helper()
	r := pairing.Round{Info: pairing.Info{Tournament: "League", Round: n}}
	tables := map[int]string{}
	var ports []string
	for port := range games {
		ports = append(ports, port)
	}
	slices.Sort(ports)
	for i, port := range ports {
		g := games[port]
		r.Games = append(r.Games, pairing.Game{Table: i + 1, Handicap: i % 3,
			Black: pairing.Player{Name: g[0], Rank: "3d"}, White: pairing.Player{Name: g[1], Rank: "12k"}})
		tables[i+1] = port
	}
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	if _, err := pairing.Apply(ctx, p.pairings, r, tables, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// playedBoards reads /api/boards with a query: each board's port and its players.
func playedBoards(t *testing.T, base, query string) (int, []string) {
	t.Helper()
	code, _, body := get(t, base+"/api/boards"+query)
	if code != http.StatusOK {
		return code, nil
	}
	var bs []struct {
		Port string `json:"port"`
		Game *struct {
			Black, White struct{ Name string }
		} `json:"game"`
	}
	if err := json.Unmarshal([]byte(body), &bs); err != nil {
		t.Fatalf("/api/boards%s: %v: %s", query, err, body)
	}
	var out []string
	for _, b := range bs {
		s := b.Port
		if b.Game != nil {
			s += " " + b.Game.Black.Name + " - " + b.Game.White.Name
		}
		out = append(out, s)
	}
	return code, out
}

// TestLeaguePlayersFiltered: a league hub's page shows each port's game, from
// the hub's pairings' bucket, on its board; /api/events and /api/boards of a club
// (?club=) or a player (?player=) carry only what they follow, a player's stream
// following the player to another table in the next round. A club delayed an hour
// shows neither its board nor its players to any filter, whatever it asks: its
// player's name, its club's name, another spelling of it; an unknown club and a
// bad filter are refused, and /clubs/<club> answers only the hub's own clubs.
func TestLeaguePlayersFiltered(t *testing.T) {
	d := leagueDelays()
	p := startLeaguePage(t, d)
	north := readEventsOf(t, p.base, "?club=north")
	lee := readEventsOf(t, p.base, "?player="+url.QueryEscape("LEE  sedol"))
	hidden := readEventsOf(t, p.base, "?player="+url.QueryEscape("Hidden Player"))
	hiddenClub := readEventsOf(t, p.base, "?club=a-b")
	p.round(t, 1, map[string][2]string{
		"north.t1": {"Lee Sedol", "张伟"},
		"south.t1": {"محمد عبد الرحمن", "<script>alert(1)</script>"},
		"a-b.t1":   {"Hidden Player", "Ãlvarez Núñez"},
	})
	p.board(t, "a-b.t1", 1)
	p.board(t, "south.t1", 2)
	p.board(t, "north.t1", 3)
	bustest.Wait(t, "north.t1 and south.t1 with their players", func() (bool, string) {
		_, got := playedBoards(t, p.base, "")
		return slices.Contains(got, "north.t1 Lee Sedol - 张伟") && slices.Contains(got, "south.t1 محمد عبد الرحمن - <script>alert(1)</script>"), fmt.Sprint(got)
	})
	bustest.Wait(t, "north's and Lee's streams told north.t1's board", func() (bool, string) {
		n, l := north(), lee()
		return slices.ContainsFunc(n, func(e boardEvent) bool { return e.Port == "north.t1" && e.Seq == 3 }) &&
			slices.ContainsFunc(l, func(e boardEvent) bool { return e.Port == "north.t1" && e.Seq == 3 }), fmt.Sprint(n, l)
	})
	for _, c := range []struct {
		name   string
		events func() []boardEvent
		want   string // the only port it may tell
	}{{"?club=north", north, "north.t1"}, {"?player=LEE  sedol", lee, "north.t1"}, {"?player=Hidden Player", hidden, ""}, {"?club=a-b", hiddenClub, ""}} {
		for _, e := range c.events() {
			if e.Port != c.want {
				t.Errorf("/api/events%s told %s (%s, %q): want only %q's events", c.name, e.Port, e.Type, e.Players, c.want)
			}
		}
	}
	// The attacker asks for the delayed club's player and club every way it can.
	for _, q := range []string{"?player=hidden", "?player=Hidden%20Player", "?player=%C3%83lvarez", "?club=a-b", "?club=a-b&player=hidden"} {
		if code, got := playedBoards(t, p.base, q); code != http.StatusOK || len(got) != 0 {
			t.Errorf("/api/boards%s: %d %v, want 200 and no board of a club delayed an hour", q, code, got)
		}
	}
	checkFilterRefusals(t, p.base)

	// The next round: Lee plays at south.t1, north.t1 has no game. Lee's stream is
	// told both (the game that takes Lee from north.t1, and the one at south.t1).
	p.round(t, 2, map[string][2]string{"south.t1": {"Lee Sedol", "Cho Chikun"}, "a-b.t1": {"Hidden Player", "Lee Sedol"}})
	bustest.Wait(t, "Lee's stream follows Lee to south.t1", func() (bool, string) {
		l := lee()
		return slices.ContainsFunc(l, func(e boardEvent) bool { return e.Port == "south.t1" && e.Players == "Lee Sedol - Cho Chikun" }) &&
			slices.ContainsFunc(l, func(e boardEvent) bool { return e.Port == "north.t1" && e.Players == "" }), fmt.Sprint(l)
	})
	if code, got := playedBoards(t, p.base, "?player=lee"); code != http.StatusOK || fmt.Sprint(got) != "[south.t1 Lee Sedol - Cho Chikun]" {
		t.Errorf("/api/boards?player=lee after round 2: %d %v, want south.t1 alone (a-b.t1 is delayed an hour)", code, got)
	}
	for _, e := range slices.Concat(lee(), hidden(), hiddenClub(), north()) {
		if strings.HasPrefix(e.Port, "a-b.") {
			t.Errorf("a stream told %s (%s, %q) of a club delayed an hour", e.Port, e.Type, e.Players)
		}
	}

	// a-b's delay taken away (a SIGHUP): its board comes out with the game it had
	// then; put back, a round loaded now is not on its tile before its hour, nor
	// in Lee's stream, though the tile is there.
	d.SetLeague(slices.Sorted(maps.Keys(leagueClubs)), nil)
	bustest.Wait(t, "a-b.t1 let out with round 2's game", func() (bool, string) {
		_, got := playedBoards(t, p.base, "?club=a-b")
		return fmt.Sprint(got) == "[a-b.t1 Hidden Player - Lee Sedol]", fmt.Sprint(got)
	})
	d.SetLeague(slices.Sorted(maps.Keys(leagueClubs)), map[string]time.Duration{"a-b": time.Hour})
	before := len(lee())
	p.round(t, 3, map[string][2]string{"north.t1": {"Cho Chikun", "Ãlvarez Núñez"}, "a-b.t1": {"Lee Sedol", "Hidden Player"}})
	bustest.Wait(t, "round 3 at north.t1", func() (bool, string) {
		_, got := playedBoards(t, p.base, "?club=north")
		return fmt.Sprint(got) == "[north.t1 Cho Chikun - Ãlvarez Núñez]", fmt.Sprint(got)
	})
	// Round 3 took Lee from south.t1 (a live club's): the fence of Lee's stream.
	bustest.Wait(t, "Lee's stream told south.t1 without Lee", func() (bool, string) {
		l := lee()[before:]
		return slices.ContainsFunc(l, func(e boardEvent) bool { return e.Port == "south.t1" && e.Players == "" }), fmt.Sprint(l)
	})
	for _, e := range lee()[before:] {
		if e.Port == "a-b.t1" && e.Players != "Hidden Player - Lee Sedol" { // round 2's, let out
			t.Errorf("Lee's stream told a-b.t1's round 3 game (%q) before a-b's hour", e.Players)
		}
	}
	if _, got := playedBoards(t, p.base, "?club=a-b"); fmt.Sprint(got) != "[a-b.t1 Hidden Player - Lee Sedol]" {
		t.Errorf("/api/boards?club=a-b: %v, want round 2's game still (round 3's is an hour away)", got)
	}
}

// checkFilterRefusals: a filter of a club the hub does not have (or another
// spelling of one), a bad player's name or a port with another filter is a 400,
// and /clubs/<club> answers only the hub's own clubs.
func checkFilterRefusals(t *testing.T, base string) {
	t.Helper()
	for _, q := range []string{"?club=a_b", "?club=ghost", "?club=North", "?club=" + url.QueryEscape("north.t1"), "?club=north&port=north.t1",
		"?player=x", "?player=" + strings.Repeat("a", 41), "?player=%ff%fe", "?player=", "?port=north.t1&player=lee"} {
		for _, api := range []string{"/api/boards", "/api/events"} {
			if code, body := status(t, base+api+q); code != http.StatusBadRequest {
				t.Errorf("%s%s: %d %.200s, want 400", api, q, code, body)
			}
		}
	}
	for path, want := range map[string]int{"/clubs": 200, "/clubs/north": 200, "/clubs/a-b": 200,
		"/clubs/a_b": 404, "/clubs/ghost": 404, "/clubs/North": 404, "/clubs/north.t1": 404, "/clubs/%3Cscript%3E": 404} {
		if code, body := status(t, base+path); code != want {
			t.Errorf("%s: %d %.200s, want %d", path, code, body, want)
		}
	}
}
