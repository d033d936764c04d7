package render

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/result"
)

// SGF solves a unit of problem and writes it as an SGF (FF[4]) game tree: a replay
// game as played, a goscore or territory board as a setup with its territory. The
// other problems are not Go games a Go program could load.
func SGF(problem string, unit []byte) ([]byte, error) {
	return SGFGame(problem, unit, Game{})
}

// Game is a game record's game info: who played, in which tournament and round,
// where and when. It gives the root node PB, PW, BR, WR, HA, RO, EV, DT and PC,
// and RE where the pairing file has the result (the engine's count otherwise).
type Game struct {
	// Players are the unit's players as its record keeps them; nil: none known.
	Players *result.Players
	// Club is PC, the club the board is in; the tournament's place when empty.
	Club string
	// Date is DT, when the unit was played; the round's date when zero.
	Date time.Time
}

// SGFGame is SGF with the game info of g.
func SGFGame(problem string, unit []byte, g Game) ([]byte, error) {
	ans, err := Solve(problem, unit)
	if err != nil {
		return nil, err
	}
	return gameTree(ans, unit, g)
}

// HasSGF reports whether a problem's units have a game record.
func HasSGF(problem string) bool {
	return problem == "replay" || problem == "goscore" || problem == "territory"
}

// GameTree writes the engine's answer to unit as one SGF game tree.
func GameTree(ans engine.Answer, unit []byte) ([]byte, error) {
	return gameTree(ans, unit, Game{})
}

func gameTree(ans engine.Answer, unit []byte, g Game) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("(;FF[4]GM[1]CA[UTF-8]AP[scoreboard]")
	g.info(&b)
	re := func(black, white int) string {
		if g.Players != nil && g.Players.Result != "" {
			return sgfSimple(g.Players.Result) // the pairing file's: a game won on time, resigned, forfeited
		}
		return scoreRE(black, white)
	}
	switch a := ans.(type) {
	case engine.ReplayAnswer:
		size, moves, err := engine.ReplayMoves(unit)
		if err != nil {
			return nil, err
		}
		cb, cw := a.Captures()
		fmt.Fprintf(&b, "SZ[%d]RE[%s]C[%s]", size, re(a.Black, a.White),
			sgfText(fmt.Sprintf("Black %d, White %d (territory + prisoners); prisoners: Black %d, White %d", a.Black, a.White, cb, cw)))
		// The unit lists placements, not turns: where one colour plays twice in a row
		// the other passes between, as FF[4] writes a pass ("[]").
		var prevWhite *bool
		for _, m := range moves {
			if prevWhite != nil && *prevWhite == m.White {
				b.WriteString(";" + colour(!m.White) + "[]")
			}
			fmt.Fprintf(&b, ";%s[%s]", colour(m.White), point(m.Row, m.Col))
			white := m.White
			prevWhite = &white
		}
	case engine.GoscoreAnswer:
		setup(&b, a.Position(), re(a.Black, a.White),
			fmt.Sprintf("Area score: Black %d, White %d (stones + territory)", a.Black, a.White))
	case engine.TerritoryAnswer:
		setup(&b, a.Position(), re(a.TerritoryScore.Black, a.TerritoryScore.White),
			fmt.Sprintf("Territory: Black %d, White %d. %s", a.TerritoryScore.Black, a.TerritoryScore.White,
				strings.TrimSpace(string(a.AppendText(nil)))))
	default:
		return nil, fmt.Errorf("render: no game record for a %T", ans)
	}
	b.WriteString(")\n")
	return b.Bytes(), nil
}

// setup writes a position as stones placed (AB, AW) and territory marked (TB, TW).
func setup(b *bytes.Buffer, p engine.GoPosition, re, comment string) {
	fmt.Fprintf(b, "SZ[%d]RE[%s]C[%s]", p.Size, re, sgfText(comment))
	list := func(prop string, in []uint8, want uint8) {
		first := true
		for i, v := range in {
			if v != want || (prop[0] == 'T' && p.Stones[i] != engine.PointEmpty) {
				continue
			}
			if first {
				b.WriteString(prop)
				first = false
			}
			fmt.Fprintf(b, "[%s]", point(i/p.Size, i%p.Size))
		}
	}
	list("AB", p.Stones, engine.PointBlack)
	list("AW", p.Stones, engine.PointWhite)
	list("TB", p.Owner, engine.PointBlack)
	list("TW", p.Owner, engine.PointWhite)
}

func colour(white bool) string {
	if white {
		return "W"
	}
	return "B"
}

// point is an SGF point: column letter, then row letter, from "a".
func point(row, col int) string { return string([]byte{byte('a' + col), byte('a' + row)}) }

// scoreRE is an SGF RE value: "B+3", "W+1", or "0" for a draw.
func scoreRE(black, white int) string {
	switch {
	case black > white:
		return fmt.Sprintf("B+%d", black-white)
	case white > black:
		return fmt.Sprintf("W+%d", white-black)
	}
	return "0"
}

// info writes the game info properties that g has, in a fixed order.
func (g Game) info(b *bytes.Buffer) {
	prop := func(id, v string) {
		if v != "" {
			b.WriteString(id + "[" + sgfSimple(v) + "]")
		}
	}
	p := g.Players
	if p == nil {
		p = &result.Players{}
	}
	prop("EV", p.Tournament)
	if p.Round > 0 {
		prop("RO", strconv.Itoa(p.Round))
	}
	date := p.Date
	if !g.Date.IsZero() {
		date = g.Date.UTC().Format(time.DateOnly)
	}
	prop("DT", date)
	place := g.Club
	if place == "" {
		place = p.Place
	}
	prop("PC", place)
	prop("PB", p.Black)
	prop("BR", p.BlackRank)
	prop("PW", p.White)
	prop("WR", p.WhiteRank)
	if p.Handicap >= 2 { // SGF's HA counts stones: 2 or more
		prop("HA", strconv.Itoa(p.Handicap))
	}
}

// sgfSimple escapes a SimpleText value: "]" and "\" take a backslash, and a line
// break, which SimpleText turns into a space anyway, is a space.
func sgfSimple(s string) string {
	return strings.NewReplacer(`\`, `\\`, `]`, `\]`, "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// sgfText escapes a Text value: "]" and "\" take a backslash.
func sgfText(s string) string {
	return strings.NewReplacer(`\`, `\\`, `]`, `\]`).Replace(s)
}

// Record is one kept unit, as the history holds it: the problem and the unit's text.
type Record struct {
	Problem string
	Unit    []byte
	Game    Game // its game info: none when zero
}

// Collection writes the records that are Go games as one SGF collection (a game tree
// per record, in order), and reports how many it wrote. Records of other problems
// are skipped; a record whose unit does not solve is an error naming its index.
func Collection(recs []Record) ([]byte, int, error) {
	var out []byte
	n := 0
	for i, r := range recs {
		if !HasSGF(r.Problem) {
			continue
		}
		tree, err := SGFGame(r.Problem, r.Unit, r.Game)
		if err != nil {
			return nil, 0, fmt.Errorf("record %d (%s): %w", i+1, r.Problem, err)
		}
		out = append(out, tree...)
		n++
	}
	return out, n, nil
}
