package pairing_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/result"
)

func TestCurrentRoundTrip(t *testing.T) {
	c := pairing.Current{
		Info: pairing.Info{Tournament: "Paris 2026", Round: 3, Date: "2026-11-28", Place: "Paris"},
		Game: pairing.Game{Table: 12, Handicap: 2, Result: "W+",
			Black: pairing.Player{Name: "Müller", FirstName: "Jürgen", Rank: "3d", Club: "Berl", Country: "DE", EGFPin: "12345678"},
			White: pairing.Player{Name: "李", FirstName: "昌镐", Rank: "1p", Country: "CN"}},
		Loaded: time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC),
	}
	got, err := pairing.Decode(c.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got != c {
		t.Fatalf("decoded %+v, want %+v", got, c)
	}
	p := c.Players()
	if p.Black != "Jürgen Müller" || p.White != "李昌镐" || p.Round != 3 || p.Table != 12 || p.Result != "W+" {
		t.Fatalf("players %+v", p)
	}
}

// TestPlayersJSON: a record's players are written by AppendJSON byte for byte as
// encoding/json writes them, and read back by Decode.
func TestPlayersJSON(t *testing.T) {
	for _, p := range []*result.Players{
		nil,
		{},
		{Round: 1},
		{Tournament: "a<b>&\"c\"", Round: 2, Table: 7, Date: "2026-11-28", Place: "Zürich", Black: "José Ñ", BlackRank: "2k",
			White: "‮abc", WhiteRank: "1d", Handicap: 3, Result: "B+"},
	} {
		r := result.Record{Problem: "goscore", Port: "t1", Seq: 4, Answer: "B+3\n", SolveMicros: 1.5, Players: p}
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("AppendJSON\n got %s\nwant %s", got, want)
		}
		back, err := result.Decode(want)
		if err != nil {
			t.Fatal(err)
		}
		if (back.Players == nil) != (p == nil) || p != nil && *back.Players != *p {
			t.Fatalf("decoded players %+v, want %+v", back.Players, p)
		}
	}
}

func TestCheck(t *testing.T) {
	g := pairing.Game{Table: 1, Black: pairing.Player{Name: "a"}, White: pairing.Player{Name: "b"}}
	for _, c := range []struct {
		r    pairing.Round
		want string
	}{
		{pairing.Round{Info: pairing.Info{Round: 2}}, "round 2 has no games"},
		{pairing.Round{Info: pairing.Info{Round: 1}, Games: []pairing.Game{g, g}}, "table 1 has two games"},
		{pairing.Round{Info: pairing.Info{Round: 0}, Games: []pairing.Game{g}}, "round 0: want 1 to"},
		{pairing.Round{Info: pairing.Info{Round: 1}, Games: []pairing.Game{{Table: 2, Black: pairing.Player{Name: "x\x00"}}}}, "control character"},
		{pairing.Round{Info: pairing.Info{Round: 1}, Games: []pairing.Game{{Table: 2, Black: pairing.Player{Name: strings.Repeat("x", 300)}}}}, "over 200"},
	} {
		err := pairing.Check(c.r)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%+v) = %v, want %q", c.r.Info, err, c.want)
		}
	}
	if err := pairing.Check(pairing.Round{Info: pairing.Info{Round: 1}, Games: []pairing.Game{g}}); err != nil {
		t.Fatal(err)
	}
}

func TestPortTables(t *testing.T) {
	tables, err := pairing.PortTables(map[string]int{"a": 1, "b": 2, "c": 0})
	if err != nil || len(tables) != 2 || tables[1] != "a" || tables[2] != "b" {
		t.Fatalf("%v %v", tables, err)
	}
	if _, err := pairing.PortTables(map[string]int{"a": 1, "b": 1}); err == nil || !strings.Contains(err.Error(), "ports a and b both name table 1") {
		t.Fatalf("%v", err)
	}
}
