package web

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/goclub/scoreboard/result"
)

// event is one message of the page's event stream.
type event struct {
	Type  string      `json:"type"` // "board", or "remove" (the key was deleted)
	Board *eventBoard `json:"board,omitempty"`
	Port  string      `json:"port,omitempty"`
}

// eventBoard is a board as an event says it. Its game is said only when it
// changed (docs/page.md, "A board's game in the events"): the players of a
// table change once a round, its board twice a second, and a league's viewers
// were sent the same names with every result (473 bytes an event against 343
// unnamed at 200 clubs). Game nil leaves "game" out: the port's game is the one
// the stream said last; a nil *Game says "game":null: the port has none.
// Board.Game is the port's game either way.
type eventBoard struct {
	*Board
	Game **Game `json:"game,omitempty"`
}

// encodes counts the events encoded: once per change, whatever the number of
// viewers (the hub's internal test holds it to that).
var encodes atomic.Uint64

// encode is the one place an event becomes what the stream sends: its JSON framed
// as a server-sent event ("data: ...", a blank line), so a viewer's stream writes
// the bytes as they are.
func encode(ev event) []byte {
	encodes.Add(1)
	data := append(make([]byte, 0, 512), "data: "...)
	if d, ok := appendEvent(data, ev); ok {
		return append(d, "\n\n"...)
	}
	j, err := json.Marshal(ev)
	if err != nil {
		// Only strings, numbers and a state that came in as JSON: cannot happen.
		panic(fmt.Sprintf("page: encode a %s event: %v", ev.Type, err))
	}
	return append(append(data, j...), "\n\n"...)
}

// appendEvent appends ev's JSON, byte for byte encoding/json's (the fuzz target
// of decodeBoard holds them to it), without its reflection: a league's page
// encodes 1,600 events a second, where json.Marshal was 3.5 % of the hub's time.
// false: a state's time encoding/json refuses too, left to it.
func appendEvent(d []byte, ev event) ([]byte, bool) {
	d = append(d, `{"type":`...)
	d = result.AppendJSONString(d, ev.Type)
	if ev.Board != nil && ev.Board.Board != nil {
		b := ev.Board.Board
		d = append(d, `,"board":{"port":`...)
		d = result.AppendJSONString(d, b.Port)
		if b.Problem != "" {
			d = append(d, `,"problem":`...)
			d = result.AppendJSONString(d, b.Problem)
		}
		d = append(d, `,"seq":`...)
		d = strconv.AppendUint(d, b.Seq, 10)
		if b.Line != 0 {
			d = append(d, `,"line":`...)
			d = strconv.AppendInt(d, b.Line, 10)
		}
		d = append(d, `,"answer":`...)
		d = result.AppendJSONString(d, b.Answer)
		if b.Error != "" {
			d = append(d, `,"error":`...)
			d = result.AppendJSONString(d, b.Error)
		}
		if b.Time != "" {
			d = append(d, `,"time":`...)
			d = result.AppendJSONString(d, b.Time)
		}
		if len(b.Board) > 0 {
			d = append(d, `,"board":[`...)
			for i, row := range b.Board {
				if i > 0 {
					d = append(d, ',')
				}
				d = result.AppendJSONString(d, row)
			}
			d = append(d, ']')
		}
		d = append(d, `,"revision":`...)
		d = strconv.AppendUint(d, b.Revision, 10)
		if b.Picture != "" {
			d = append(d, `,"picture":`...)
			d = result.AppendJSONString(d, b.Picture)
		}
		if b.SGF != "" {
			d = append(d, `,"sgf":`...)
			d = result.AppendJSONString(d, b.SGF)
		}
		if st := b.State; st != nil {
			since, err := st.Since.MarshalJSON()
			if err != nil {
				return d, false
			}
			d = append(d, `,"state":{"port":`...)
			d = result.AppendJSONString(d, st.Port)
			d = append(d, `,"state":`...)
			d = result.AppendJSONString(d, st.State)
			d = append(d, `,"since":`...)
			d = append(d, since...)
			d = append(d, '}')
		}
		if g := ev.Board.Game; g != nil {
			d = appendGameValue(append(d, `,"game":`...), *g)
		}
		d = append(d, '}')
	} else if ev.Board != nil {
		// No board's fields: encoding/json's empty object, or the game alone.
		d = append(d, `,"board":{`...)
		if g := ev.Board.Game; g != nil {
			d = appendGameValue(append(d, `"game":`...), *g)
		}
		d = append(d, '}')
	}
	if ev.Port != "" {
		d = append(d, `,"port":`...)
		d = result.AppendJSONString(d, ev.Port)
	}
	return append(d, '}'), true
}

// withGame is a board's event that leaves its game out (show), with its game (or
// null) put in: the game is the board's last field and a board's event has none
// after its board, so it goes before the two objects' ends. The fuzz target of
// decodeBoard holds it to encode's.
func withGame(ev []byte, g *Game) []byte {
	const end = "}}\n\n" // the board's object, the event's, the frame's blank line
	d := make([]byte, 0, len(ev)+320)
	d = append(d, ev[:len(ev)-len(end)]...)
	d = appendGameValue(append(d, `,"game":`...), g)
	return append(d, end...)
}

// sameGame says whether a port's games a and b show the same.
func sameGame(a, b *Game) bool { return a == b || a != nil && b != nil && *a == *b }
