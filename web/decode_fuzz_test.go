package web

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
)

// FuzzDecodeBoard: whatever a bucket value holds, decoding it never panics, and a
// picture drawn from it is well-formed XML.
func FuzzDecodeBoard(f *testing.F) {
	// The values whose text makes the event's game (below) hostile: HTML, a
	// right-to-left override, U+2028, control characters, long names.
	f.Add([]byte(`{"problem":"goscore","port":"hall","seq":1234567,"line":99999,"answer":"<script>\u202e张伟 \u2028محمد</script>","error":"Ãlvarez-Núñez de la Peña y Fernández-Villaverde Aurelio","time":"\u0000\u001b[31m<<<<"}`))
	f.Add([]byte(`{"problem":"replay","port":"hall","seq":3,"answer":"","time":"2026-11-28T11:00:00Z"}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		b, err := decodeBoard("hall", value)
		if err != nil {
			return
		}
		if b.Port != "hall" {
			t.Fatalf("port %q", b.Port)
		}
		// Its event, as the hub encodes it, is encoding/json's to the byte.
		b.Revision, b.Picture, b.SGF = 7, "/pictures/hall/7-ab.svg", "/pictures/hall/7-ab.sgf"
		b.State = &bus.PortState{Port: "hall", State: b.Answer, Since: time.Unix(int64(b.Seq%(1<<40)), int64(b.Line))}
		// Its game, of the value's own text: an event leaves it out (unchanged),
		// says null (none), or says it (eventBoard); the first screen's form is
		// the first's with the game put in (withGame).
		var none *Game
		b.Game = (&Game{Round: int(b.Seq % 1000), Table: int(b.Line % 100000), Handicap: len(b.Answer) % 10, Result: b.Problem,
			Black: Player{b.Answer, b.Error}, White: Player{b.Error, b.Time}}).clipped()
		for _, ev := range []event{{Type: "board", Board: &eventBoard{Board: b}}, {Type: "board", Board: &eventBoard{Board: b, Game: &b.Game}},
			{Type: "board", Board: &eventBoard{Board: b, Game: &none}}, {Type: "board", Board: &eventBoard{Game: &b.Game}},
			{Type: "board", Board: &eventBoard{}}, {Type: "remove", Port: b.Error}} {
			want, err := json.Marshal(ev)
			got, ok := appendEvent(nil, ev)
			if (err == nil) != ok || ok && !bytes.Equal(got, want) {
				t.Fatalf("appendEvent:\n%s (%v)\nencoding/json:\n%s (%v)", got, ok, want, err)
			}
		}
		if _, ok := appendEvent(nil, event{Type: "board", Board: &eventBoard{Board: b}}); ok {
			for _, g := range []*Game{b.Game, nil} {
				want := encode(event{Type: "board", Board: &eventBoard{Board: b, Game: &g}})
				if got := withGame(encode(event{Type: "board", Board: &eventBoard{Board: b}}), g); !bytes.Equal(got, want) {
					t.Fatalf("withGame:\n%s\nencode:\n%s", got, want)
				}
			}
		}
		// The picture is drawn when asked for: drawn here, as /pictures would.
		if b.unit != nil && b.Error == "" {
			p := &picture{port: b.Port, problem: b.Problem, seq: b.Seq, revision: 1, unit: b.unit}
			if svg, err := p.SVG(); err == nil {
				if err := xml.Unmarshal(svg, new(struct{})); err != nil {
					t.Fatalf("the picture is not XML: %v", err)
				}
			}
		}
	})
}
