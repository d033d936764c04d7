package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// othelloGame builds a game's input: 8 rows, the side, and the commands.
func othelloGame(rows []string, side string, cmds ...string) string {
	return strings.Join(rows, "\n") + "\n" + side + "\n" + strings.Join(cmds, "\n") + "\n"
}

var (
	othelloOpening = []string{"--------", "--------", "--------", "---WB---", "---BW---", "--------", "--------", "--------"}
	// Black cannot move; White can, at (2,5) among others.
	othelloBlackStuck = []string{"WWWWB---", "WWWB----", "WWB-----", "WB------", "--------", "--------", "--------", "--------"}
	// Neither side can move.
	othelloNobody = []string{"BBBBBBBB", "BBBBBBBB", "BBBBBBBB", "BBBBBBBB", "--------", "--------", "--------", "--------"}
)

// othelloErrLines returns the lines the errors name, and fails on an error that is not
// an othello *InputError.
func othelloErrLines(t *testing.T, errs []error) []int {
	t.Helper()
	var lines []int
	for _, err := range errs {
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.Problem != "othello" {
			t.Fatalf("error %T %v, want an othello *InputError", err, err)
		}
		lines = append(lines, ie.Line)
	}
	return lines
}

func TestOthelloSample(t *testing.T) {
	in := "2\n" + othelloGame(othelloOpening, "W", "L", "M35", "L", "Q") +
		othelloGame(othelloBlackStuck, "B", "L", "M25", "L", "Q")
	want := "(3,5) (4,6) (5,3) (6,4)\nBlack -  1 White -  4\n(3,4) (3,6) (5,6)\n" +
		"--------\n--------\n----W---\n---WW---\n---BW---\n--------\n--------\n--------\n" +
		"\nNo legal move.\nBlack -  3 White - 12\n(3,5)\n" +
		"WWWWB---\nWWWWW---\nWWB-----\nWB------\n--------\n--------\n--------\n--------\n"
	got, errs := runContest(t, "othello", in)
	if got != want || len(errs) > 0 {
		t.Fatalf("got %q, errors %v\nwant %q", got, errs, want)
	}
}

// TestOthelloSemantics pins each point of the statement that is easy to get wrong.
func TestOthelloSemantics(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		errLines       []int
	}{{
		name: "L leaves the side to move alone",
		in:   "1\n" + othelloGame(othelloOpening, "B", "L", "L", "M34", "L"),
		want: "(3,4) (4,3) (5,6) (6,5)\n(3,4) (4,3) (5,6) (6,5)\nBlack -  4 White -  1\n(3,3) (3,5) (5,3)\n",
	}, {
		name: "M by a side with no move is the other side's, and the side switches back",
		in:   "1\n" + othelloGame(othelloBlackStuck, "B", "M25", "L"),
		want: "Black -  3 White - 12\n(3,5)\n",
	}, {
		name: "an L of a side with no move does not pass",
		in:   "1\n" + othelloGame(othelloBlackStuck, "B", "L", "L"),
		want: "No legal move.\nNo legal move.\n",
	}, {
		name: "counts of two digits fill the %2d",
		in:   "1\n" + othelloGame([]string{"BBBBBBBB", "BBBBBBBB", "WWWWWWWW", "WWWWWWWW", "WWWWWWWW", "WWWWWWWW", "WWWWWWWW", "WWWWWWW-"}, "B", "M88"),
		want: "Black - 27 White - 37\n",
	}, {
		name: "one blank line between games, none after the last",
		in: "3\n" + othelloGame(othelloOpening, "B", "Q") + othelloGame(othelloOpening, "W", "L", "Q") +
			othelloGame(othelloNobody, "W", "L", "Q"),
		want: strings.Join(othelloOpening, "\n") + "\n\n(3,5) (4,6) (5,3) (6,4)\n" + strings.Join(othelloOpening, "\n") +
			"\n\nNo legal move.\n" + strings.Join(othelloNobody, "\n") + "\n",
	}, {
		name: "a new count starts a new input: no blank line before its first game",
		in:   "1\n" + othelloGame(othelloOpening, "B", "L", "Q") + "1\n" + othelloGame(othelloOpening, "W", "L", "Q"),
		want: "(3,4) (4,3) (5,6) (6,5)\n" + strings.Join(othelloOpening, "\n") +
			"\n(3,5) (4,6) (5,3) (6,4)\n" + strings.Join(othelloOpening, "\n") + "\n",
	}, {
		name: "blank lines before a count and before a board are ignored",
		in:   "\n \n1\n\n\r\n" + othelloGame(othelloOpening, "B", "L"),
		want: "(3,4) (4,3) (5,6) (6,5)\n",
	}, {
		name: "trailing blanks and CRs are tolerated",
		in:   "1 \r\n--------  \r\n" + strings.Join(othelloOpening[1:], "\r\n") + "\r\nB \r\nM34\t\r\nL  \r\n",
		want: "Black -  4 White -  1\n(3,3) (3,5) (5,3)\n",
	}, {
		name:     "a bad command is reported and the game goes on",
		in:       "1\n" + othelloGame(othelloOpening, "B", "M39", "X", "", "M34"),
		want:     "Black -  4 White -  1\n",
		errLines: []int{11, 12, 13},
	}, {
		name:     "an illegal move changes nothing, the side included",
		in:       "1\n" + othelloGame(othelloOpening, "B", "M44", "M11", "L", "M34"),
		want:     "(3,4) (4,3) (5,6) (6,5)\nBlack -  4 White -  1\n",
		errLines: []int{11, 12},
	}, {
		name:     "a move when neither side can move is illegal",
		in:       "1\n" + othelloGame(othelloNobody, "W", "M55", "L"),
		want:     "No legal move.\n",
		errLines: []int{11},
	}, {
		name:     "an illegal move after the pass rule leaves the side as it was",
		in:       "1\n" + othelloGame(othelloBlackStuck, "B", "M88", "L", "M25"),
		want:     "No legal move.\nBlack -  3 White - 12\n",
		errLines: []int{11},
	}, {
		name: "a bad board is reported once and the game skipped to its Q; the next game goes on",
		in: "2\n" + othelloGame(append([]string{"---X----"}, othelloOpening[1:]...), "B", "L", "M34", "Q") +
			othelloGame(othelloOpening, "B", "L"),
		want:     "(3,4) (4,3) (5,6) (6,5)\n",
		errLines: []int{2},
	}, {
		name:     "a bad side line skips the game too",
		in:       "2\n" + othelloGame(othelloOpening, "b", "L", "Q") + othelloGame(othelloOpening, "B", "Q") + "L\n",
		want:     strings.Join(othelloOpening, "\n") + "\n",
		errLines: []int{10, 23},
	}, {
		name: "a Q in place of a board row ends the game",
		in:   "2\n--------\n--------\nQ\n" + othelloGame(othelloOpening, "B", "L") + othelloGame(othelloOpening, "B", "L"),
		// The second game ran into the third, whose rows are bad commands.
		want:     "(3,4) (4,3) (5,6) (6,5)\n(3,4) (4,3) (5,6) (6,5)\n",
		errLines: []int{4, 15, 16, 17, 18, 19, 20, 21, 22, 23},
	}, {
		name:     "the lines after the last game must start with a count",
		in:       "1\n" + othelloGame(othelloOpening, "B", "Q") + othelloGame(othelloOpening, "B", "Q") + "1\n" + othelloGame(othelloOpening, "B", "L"),
		want:     strings.Join(othelloOpening, "\n") + "\n(3,4) (4,3) (5,6) (6,5)\n",
		errLines: []int{12},
	}, {
		name:     "bad counts",
		in:       "0\n1\n" + othelloGame(othelloOpening, "B", "Q") + "1000001\n-3\nx\n2\n" + othelloGame(othelloOpening, "B", "Q"),
		want:     strings.Join(othelloOpening, "\n") + "\n" + strings.Join(othelloOpening, "\n") + "\n",
		errLines: []int{1, 13},
	}, {
		name: "input ending between commands, or before a promised game, is no error",
		in:   "3\n" + othelloGame(othelloOpening, "B", "Q") + othelloGame(othelloOpening, "B", "L"),
		want: strings.Join(othelloOpening, "\n") + "\n\n(3,4) (4,3) (5,6) (6,5)\n",
	}, {
		name:     "input ending inside a board is",
		in:       "2\n" + othelloGame(othelloOpening, "B", "Q") + "--------\n--------\n",
		want:     strings.Join(othelloOpening, "\n") + "\n",
		errLines: []int{12},
	}, {
		name:     "a line too long to read breaks a command",
		in:       "1\n" + othelloGame(othelloOpening, "B", strings.Repeat("L", 100), "L"),
		want:     "(3,4) (4,3) (5,6) (6,5)\n",
		errLines: []int{11, 11}, // the reader's, then the framer's
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, errs := runContest(t, "othello", c.in)
			if got != c.want {
				t.Errorf("output\n got %q\nwant %q", got, c.want)
			}
			if lines := othelloErrLines(t, errs); !equalInts(lines, c.errLines) {
				t.Errorf("errors on lines %v, want %v: %v", lines, c.errLines, errs)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOthelloErrorMessages(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1\n" + othelloGame(othelloOpening, "B", "M39"), "othello: line 11: M39: column 9 is off the board"},
		{"1\n" + othelloGame(othelloOpening, "B", "M03"), "othello: line 11: M03: row 0 is off the board"},
		{"1\n" + othelloGame(othelloOpening, "B", "M3"), `othello: line 11: "M3": want M and two digits, the row and column 1-8`},
		{"1\n" + othelloGame(othelloOpening, "B", "K"), `othello: line 11: "K": want a command, L, Mrc or Q`},
		{"1\n" + othelloGame(othelloOpening, "B", "M44"), "othello: line 11: M44: (4,4) is occupied"},
		{"1\n" + othelloGame(othelloOpening, "B", "M11"), "othello: line 11: M11: (1,1) brackets no disk for Black"},
		{"1\n" + othelloGame(othelloBlackStuck, "B", "M88"), "othello: line 11: M88: Black has no legal move, so the move is White's, and (8,8) brackets no disk for White"},
		{"1\n" + othelloGame(othelloNobody, "B", "M55"), "othello: line 11: M55: neither Black nor White has a legal move"},
		{"1\n--------\n---\n", `othello: line 3: board row 2 "---": 3 cells, want 8 of '-', 'B' and 'W'; skipping the game to its Q`},
		{"1\n--------\n---x----\n", `othello: line 3: board row 2 "---x----": column 4 is 'x', want '-', 'B' or 'W'; skipping the game to its Q`},
		{"1\n" + othelloGame(othelloOpening, "X"), `othello: line 10: side to move "X": want B or W; skipping the game to its Q`},
		{"two\n", `othello: line 1: "two": want the number of games, a positive integer; skipping to the next count`},
		{"1\n--------\n", "othello: line 2: the input ends inside a board, after 1 of 8 rows and no side to move"},
	} {
		_, errs := runContest(t, "othello", c.in)
		if len(errs) != 1 || errs[0].Error() != c.want {
			t.Errorf("input %q: errors %v, want [%s]", c.in, errs, c.want)
		}
	}
}

// othelloFrames feeds lines to a fresh framer and returns its frames, units copied,
// and then the frames of End.
func othelloFrames(t *testing.T, fr engine.Framer, lines ...string) []engine.Frame {
	t.Helper()
	var all []engine.Frame
	keep := func(frames []engine.Frame) {
		for _, f := range frames {
			f.Unit = bytes.Clone(f.Unit)
			all = append(all, f)
		}
	}
	for _, l := range lines {
		keep(fr.Feed(nil, []byte(l)))
	}
	return all
}

func TestOthelloFramerUnits(t *testing.T) {
	p := mustProblem(t, "othello")
	fr := p.NewFramer()
	in := strings.Split(strings.TrimSuffix("2\n"+othelloGame(othelloOpening, "B", "L", "M34", "M99", "M35", "L", "Q")+
		othelloGame(othelloBlackStuck, "B", "M25", "L", "Q")+"1\n"+othelloGame(othelloOpening, "W", "Q"), "\n"), "\n")
	frames := othelloFrames(t, fr, in...)
	after34 := "--------\n--------\n---B----\n---BB---\n---BW---\n--------\n--------\n--------\n"
	opening := strings.Join(othelloOpening, "\n") + "\n"
	stuck := strings.Join(othelloBlackStuck, "\n") + "\n"
	want := []struct {
		unit string
		line int
		err  bool
	}{
		{opening + "B\nL\n", 11, false},
		{opening + "B\nM34\n", 12, false},
		{"", 13, true}, // M99: the position goes on unchanged
		{after34 + "W\nM35\n", 14, false},
		{"--------\n--------\n---BW---\n---BW---\n---BW---\n--------\n--------\n--------\nB\nL\n", 15, false},
		{"--------\n--------\n---BW---\n---BW---\n---BW---\n--------\n--------\n--------\nB\nQ\n", 16, false},
		{"\n" + stuck + "B\nM25\n", 26, false},
		{"WWWWB---\nWWWWW---\nWWB-----\nWB------\n--------\n--------\n--------\n--------\nB\nL\n", 27, false},
		{"WWWWB---\nWWWWW---\nWWB-----\nWB------\n--------\n--------\n--------\n--------\nB\nQ\n", 28, false},
		{opening + "W\nQ\n", 39, false}, // a new session: no blank line
	}
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d: %+v", len(frames), len(want), frames)
	}
	for i, w := range want {
		f := frames[i]
		if string(f.Unit) != w.unit || f.Line != w.line || (f.Err != nil) != w.err {
			t.Errorf("frame %d: unit %q line %d err %v\nwant unit %q line %d err %v", i, f.Unit, f.Line, f.Err, w.unit, w.line, w.err)
		}
		if f.Err == nil {
			if _, err := p.Append(nil, f.Unit); err != nil {
				t.Errorf("frame %d: Append: %v", i, err)
			}
		}
	}
	if end := fr.End(nil); len(end) != 0 {
		t.Errorf("End after complete games: %+v", end)
	}
}

func TestOthelloFramerBadBoard(t *testing.T) {
	fr := mustProblem(t, "othello").NewFramer()
	frames := othelloFrames(t, fr, "2", "--------", "--------", "", "L", "M34", "Q", "--------")
	if len(frames) != 1 || frames[0].Err == nil || frames[0].Line != 2 {
		t.Fatalf("frames %+v, want one error frame for the board at line 2", frames)
	}
	if !strings.Contains(frames[0].Err.Error(), "line 4: board row 3") {
		t.Errorf("error %v, want it to name line 4, board row 3", frames[0].Err)
	}
	// The second game's board is under way: Reset drops its one row, and then the
	// framer wants a count.
	if n := fr.Reset(); n != 1 {
		t.Errorf("Reset dropped %d lines, want 1", n)
	}
	frames = othelloFrames(t, fr, "--------")
	if len(frames) != 1 || frames[0].Err == nil || frames[0].Err.Error() != `othello: line 1: "--------": want the number of games, a positive integer; skipping to the next count` {
		t.Fatalf("after Reset: %+v, want a count error on line 1", frames)
	}
	frames = othelloFrames(t, fr, othelloOpening[1:]...)
	frames = append(frames, othelloFrames(t, fr, "B", "L", "1")...)
	frames = append(frames, othelloFrames(t, fr, append(othelloOpening, "B", "L")...)...)
	if len(frames) != 1 || frames[0].Err != nil || frames[0].Line != 21 || !strings.HasSuffix(string(frames[0].Unit), "B\nL\n") {
		t.Fatalf("frames %+v, want the unit of the L on line 21 (no second error while skipping to the count)", frames)
	}
	if n := fr.Reset(); n != 0 {
		t.Errorf("Reset between commands dropped %d lines, want 0", n)
	}
	for _, c := range []struct {
		lines []string
		want  int
	}{{[]string{"1", "--------", "--------", "--------"}, 3}, {append([]string{"1"}, othelloOpening...), 8}, {[]string{"1"}, 0}} {
		othelloFrames(t, fr, c.lines...)
		if n := fr.Reset(); n != c.want {
			t.Errorf("Reset after %q dropped %d lines, want %d", c.lines, n, c.want)
		}
	}
}

func TestOthelloUnits(t *testing.T) {
	p := mustProblem(t, "othello")
	opening := strings.Join(othelloOpening, "\n") + "\n"
	for _, c := range []struct{ unit, text, json, err string }{
		{opening + "W\nL\n", "(3,5) (4,6) (5,3) (6,4)\n", `{"command":"L","player":"W","moves":["(3,5)","(4,6)","(5,3)","(6,4)"]}`, ""},
		{"\n" + opening + "W\nM35\n", "\nBlack -  1 White -  4\n", `{"command":"M","move":"(3,5)","player":"W","black":1,"white":4}`, ""},
		{strings.Join(othelloBlackStuck, "\n") + "\nB\nM25", "Black -  3 White - 12\n", `{"command":"M","move":"(2,5)","player":"W","black":3,"white":12}`, ""},
		{strings.Join(othelloNobody, "\r\n") + "\r\nW\r\nL\r\n\n", "No legal move.\n", `{"command":"L","player":"W","moves":[]}`, ""},
		{opening + "B\nQ\n", opening, `{"command":"Q","board":["--------","--------","--------","---WB---","---BW---","--------","--------","--------"]}`, ""},
		{"", "", "", "othello: line 1: empty unit: want 8 board rows, the side to move and a command"},
		{"\n\n", "", "", `othello: line 2: board row 1 "": 0 cells, want 8 of '-', 'B' and 'W'`},
		{"\n--------\n", "", "", "othello: line 3: the unit ends after 1 of 8 board rows"},
		{opening, "", "", "othello: line 9: the unit ends before the side to move"},
		{opening + "B\n", "", "", "othello: line 10: the unit ends before its command"},
		{"\n" + opening + "B\nM44\n", "", "", "othello: line 11: M44: (4,4) is occupied"},
		{opening + "B\nL\nL\n", "", "", `othello: line 11: "L" after the command: a unit holds one command`},
		{opening + "B\nM9\n", "", "", `othello: line 10: "M9": want M and two digits, the row and column 1-8`},
	} {
		text, err := p.Append([]byte("kept:"), []byte(c.unit))
		ans, err2 := p.Solve([]byte(c.unit))
		if c.err != "" {
			var ie *engine.InputError
			if err == nil || err.Error() != c.err || !errors.As(err, &ie) || err2 == nil || err2.Error() != c.err {
				t.Errorf("unit %q: errors %v / %v, want %s", c.unit, err, err2, c.err)
			}
			if string(text) != "kept:" {
				t.Errorf("unit %q: Append on error returned %q, want dst unchanged", c.unit, text)
			}
			continue
		}
		if err != nil || err2 != nil {
			t.Errorf("unit %q: errors %v / %v", c.unit, err, err2)
			continue
		}
		if string(text) != "kept:"+c.text || string(ans.AppendText(nil)) != c.text {
			t.Errorf("unit %q: Append %q, Solve %q, want %q", c.unit, text, ans.AppendText(nil), c.text)
		}
		if js, err := json.Marshal(ans); err != nil || string(js) != c.json {
			t.Errorf("unit %q: JSON %s (%v), want %s", c.unit, js, err, c.json)
		}
	}
}

func TestOthelloAppendDoesNotAllocate(t *testing.T) {
	p := mustProblem(t, "othello")
	opening := strings.Join(othelloOpening, "\n") + "\n"
	for _, unit := range []string{opening + "B\nL\n", "\n" + opening + "B\nM34\n", opening + "W\nQ\n"} {
		dst, u := make([]byte, 0, 256), []byte(unit)
		var err error
		if n := testing.AllocsPerRun(100, func() { dst, err = p.Append(dst[:0], u) }); n != 0 || err != nil {
			t.Errorf("unit %q: %v allocations per Append (err %v), want 0", unit, n, err)
		}
	}
	pos := engine.OthelloStart
	var dst []byte = make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() {
		q := pos
		q.Play(engine.OthelloSquare(3, 4))
		b, w := q.Count()
		dst = engine.OthelloAppendCount(engine.OthelloAppendMoves(dst[:0], q.Moves()), b, w)
	}); n != 0 {
		t.Errorf("%v allocations per move, list and count, want 0", n)
	}
}

// TestOthelloMovesMatchReference compares moves, flips and play with the array
// implementation on random boards of every density.
func TestOthelloMovesMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1992))
	var refMoves [][2]int
	for range 20000 {
		b, side := othelloGenBoard(rng)
		pos := othelloRefToPosition(&b, side)
		refMoves = othelloRefMoves(refMoves[:0], &b, side)
		var want uint64
		for _, m := range refMoves {
			want |= 1 << engine.OthelloSquare(m[0]+1, m[1]+1)
		}
		if got := pos.Moves(); got != want {
			t.Fatalf("board %q side %c: moves %#x, want %#x", b, side, got, want)
		}
		for sq := range 64 {
			r, c := sq/8, sq%8
			var wantFlips uint64
			for _, f := range othelloRefFlips(nil, &b, side, r, c) {
				wantFlips |= 1 << engine.OthelloSquare(f[0]+1, f[1]+1)
			}
			if got := pos.Flips(sq); got != wantFlips {
				t.Fatalf("board %q side %c move (%d,%d): flips %#x, want %#x", b, side, r+1, c+1, got, wantFlips)
			}
		}
	}
}

// TestOthelloDifferential runs thousands of random games (random legal play, passes,
// full boards, positions with no move, bad and illegal commands) through the contest
// driver and compares whole outputs with the array implementation's.
func TestOthelloDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1992, 3))
	games, inputs := 0, diffSize(250, 5000)
	for i := range inputs {
		bad := i%2 == 1
		in := othelloGenContest(rng, 1+rng.IntN(3), bad)
		games += bytes.Count(in, []byte("\nQ\n"))
		want, wantBad := othelloRefContest(string(in))
		got, errs := runContest(t, "othello", string(in))
		if got != want || len(errs) != wantBad {
			t.Fatalf("input %q\noutput %q (%d errors %v)\nwant   %q (%d errors)", in, got, len(errs), errs, want, wantBad)
		}
	}
	if games < 3*inputs {
		t.Errorf("only %d games generated", games)
	}
}

// TestOthelloUnitsStandAlone checks that every unit the framer emits is answered
// alone exactly as in the stream, by Append and by Solve.
func TestOthelloUnitsStandAlone(t *testing.T) {
	p := mustProblem(t, "othello")
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		in := othelloGenContest(rng, 2, true)
		fr := p.NewFramer()
		var out []byte
		for _, line := range strings.Split(strings.TrimSuffix(string(in), "\n"), "\n") {
			for _, f := range fr.Feed(nil, []byte(line)) {
				if f.Err != nil {
					continue
				}
				text, err := p.Append(nil, f.Unit)
				ans, err2 := p.Solve(f.Unit)
				if err != nil || err2 != nil {
					t.Fatalf("unit %q: %v / %v", f.Unit, err, err2)
				}
				if !bytes.Equal(ans.AppendText(nil), text) {
					t.Fatalf("unit %q: Solve %q, Append %q", f.Unit, ans.AppendText(nil), text)
				}
				out = append(out, text...)
			}
		}
		if want, _ := othelloRefContest(string(in)); string(out) != want {
			t.Fatalf("input %q: units answered %q, want %q", in, out, want)
		}
	}
}
