package web

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/render"
	"github.com/goclub/scoreboard/result"
)

// hostileNames are names a tournament file may hold: long, in every script,
// right to left, with HTML, directional overrides and control characters.
var hostileNames = []string{
	"Ãlvarez-Núñez de la Peña y Fernández-Villaverde Aurelio-Maximiliano",
	"张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟",
	"محمد عبد الرحمن بن عبد العزيز آل سعود الفيصل القحطاني الدوسري",
	"<script>alert(1)</script><img src=x onerror=alert(2)>&amp;&lt;<<<<<<<<<<<<<<<<",
	"\u202eevil\u202c \u2066name\u2069 \x00\x1b[31m\u200fX",
	strings.Repeat("<", 200),
	strings.Repeat("\u2028", 60),
}

// TestGameEventUnderOneKB: a board's event with its players stays under 1 KB,
// whatever the names: every sample unit of every problem (othello's carries its
// board), on a hub's page's long port names, with a port state, and a game whose
// names are the hostile ones, each as Black and White, at the largest round,
// table, handicap and ranks. The event is encoding/json's, byte for byte.
func TestGameEventUnderOneKB(t *testing.T) {
	port := "club-with-a-long-name.port-with-a-long-name"
	most, n := 0, 0
	for _, problem := range engine.Names() {
		for _, u := range samples.Units(t, problem, problem+".in") {
			ans, err := render.Solve(problem, u)
			if err != nil {
				t.Fatal(err)
			}
			res, _ := json.Marshal(ans)
			kept := result.Kept{
				Record: result.Record{Problem: problem, Port: "p", Seq: 123456, Answer: string(ans.AppendText(nil)), Result: res},
				Unit:   string(u), Time: "2026-11-27T17:00:00.123456789Z",
			}
			if a, ok := ans.(engine.OthelloAnswer); ok {
				pos := a.Position()
				kept.Board = strings.Split(strings.TrimSuffix(string(pos.AppendBoard(nil)), "\n"), "\n")
			}
			value, _ := json.Marshal(kept)
			b, err := decodeBoard(port, value)
			if err != nil {
				t.Fatal(err)
			}
			b.Revision = 123456789
			b.Picture = "/pictures/" + port + "/123456789-0123456789abcdef.svg"
			b.SGF = "/pictures/" + port + "/123456789-0123456789abcdef.sgf"
			b.State = &bus.PortState{Port: port, State: "unplugged", Since: time.Date(2026, 11, 27, 17, 0, 0, 123456789, time.UTC)}
			for _, black := range hostileNames {
				for _, white := range hostileNames {
					n++
					g := (&Game{Round: 1000, Table: 100000, Handicap: 9, Result: "<<<<<<<<<<",
						Black: Player{black, "<<<<<<"}, White: Player{white, "\u2028\u2028\u2028\u2028\u2028"}}).clipped()
					b.Game = g
					ev := encode(event{Type: "board", Board: &eventBoard{Board: b, Game: &b.Game}})
					most = max(most, len(ev))
					if len(ev) > 1024 {
						t.Fatalf("%s, %q against %q: an event of %d bytes, over 1 KB: %s", problem, black, white, len(ev), ev)
					}
					want, _ := json.Marshal(event{Type: "board", Board: &eventBoard{Board: b, Game: &b.Game}})
					if got := bytes.TrimSuffix(bytes.TrimPrefix(ev, []byte("data: ")), []byte("\n\n")); !bytes.Equal(got, want) {
						t.Fatalf("the event is not encoding/json's:\n got %s\nwant %s", got, want)
					}
				}
			}
		}
	}
	t.Logf("%d events with players, the largest %d bytes", n, most)
}

// FuzzClipName: a name clipped for the page is UTF-8, within its bounds in runes
// and in JSON bytes, with no control or directional character, and a prefix of
// what was given once those are taken out (no text is made up).
func FuzzClipName(f *testing.F) {
	for _, s := range hostileNames {
		f.Add(s)
	}
	f.Add("")
	f.Add("  Lee   Sedol  ")
	f.Add("\xff\xfe Kim")
	f.Fuzz(func(t *testing.T, s string) {
		c := clipJSON(s, maxNameRunes, maxNameJSON)
		if !utf8.ValidString(c) {
			t.Fatalf("%q: clipped %q is not UTF-8", s, c)
		}
		if n := utf8.RuneCountInString(c); n > maxNameRunes {
			t.Fatalf("%q: clipped %q has %d runes", s, c, n)
		}
		if n := len(result.AppendJSONString(nil, c)); n > maxNameJSON {
			t.Fatalf("%q: clipped %q takes %d bytes of JSON", s, c, n)
		}
		for _, r := range c {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidiControl(r) {
				t.Fatalf("%q: clipped %q keeps %U", s, c, r)
			}
		}
		if c != strings.TrimSpace(c) || strings.Contains(c, "  ") {
			t.Fatalf("%q: clipped %q has spaces at its ends or two in a row", s, c)
		}
		if !strings.HasPrefix(foldName(clip(s, 1<<20)), foldName(c)) {
			t.Fatalf("%q: clipped %q is not the start of the name", s, c)
		}
	})
}
