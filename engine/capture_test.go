package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// captureMoves writes a game's unit from "x y" pairs.
func captureUnit(size int, moves ...[2]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d\n", size, len(moves))
	for _, m := range moves {
		fmt.Fprintf(&b, "%d %d\n", m[0], m[1])
	}
	return b.String()
}

// captureAnswer runs Append on unit and checks that Solve agrees.
func captureAnswer(t *testing.T, unit string) (int, error) {
	t.Helper()
	p := mustProblem(t, "capture")
	out, err := p.Append(nil, []byte(unit))
	ans, err2 := p.Solve([]byte(unit))
	if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
		t.Fatalf("Append err %v, Solve err %v", err, err2)
	}
	if err != nil {
		return 0, err
	}
	if got := string(ans.AppendText(nil)); got != string(out) {
		t.Fatalf("Solve text %q, Append text %q", got, out)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(string(out), "\n"))
	if err != nil {
		t.Fatalf("Append gave %q: %v", out, err)
	}
	return n, nil
}

func TestCaptureSemantics(t *testing.T) {
	ko := [][2]int{{1, 0}, {2, 0}, {0, 1}, {3, 1}, {1, 2}, {2, 2}, {2, 1}}
	for range 3 {
		ko = append(ko, [2]int{1, 1}, [2]int{2, 1})
	}
	cases := []struct {
		name  string
		size  int
		moves [][2]int
		want  int
	}{
		{"sample", 2, [][2]int{{0, 1}, {0, 0}, {1, 0}, {0, 0}, {0, 0}, {1, 1}}, 5},
		{"one stone alone", 1, [][2]int{{0, 0}}, 1}, // a 1x1 board has no liberty
		{"no capture", 5, [][2]int{{2, 2}, {1, 2}, {4, 4}, {3, 2}, {4, 0}, {2, 1}}, 0},
		{"corner captured by two: edges are no liberties", 3, [][2]int{{0, 0}, {1, 0}, {2, 2}, {0, 1}}, 1},
		{"far corner captured", 3, [][2]int{{2, 2}, {1, 2}, {0, 0}, {2, 1}}, 1},
		{"edge stone captured by three", 3, [][2]int{{1, 0}, {0, 0}, {2, 2}, {2, 0}, {0, 2}, {1, 1}}, 1},
		{"single-stone suicide counted", 3, [][2]int{{1, 0}, {2, 2}, {0, 1}, {0, 0}}, 1},
		{"three-stone suicide counted", 3, [][2]int{{1, 0}, {0, 0}, {1, 1}, {0, 1}, {1, 2}, {0, 2}}, 3},
		{"both without liberties: only the opponent's go", 3,
			[][2]int{{0, 1}, {0, 0}, {2, 2}, {2, 0}, {0, 2}, {1, 1}, {1, 0}}, 1},
		{"two groups captured by one move", 3, [][2]int{{0, 0}, {0, 1}, {2, 0}, {2, 1}, {2, 2}, {1, 0}}, 2},
		{"ko taken back and forth", 4, ko, 6},
		{"play on the just-captured point", 3, [][2]int{{0, 0}, {1, 0}, {2, 2}, {0, 1}, {0, 0}}, 2},
		{"retake the just-captured point safely", 3, [][2]int{{0, 0}, {1, 0}, {2, 2}, {0, 1}, {1, 1}, {0, 0}}, 1},
		{"huge board, far corner", 2147483647, [][2]int{
			{2147483646, 2147483646}, {2147483645, 2147483646}, {0, 0}, {2147483646, 2147483645}}, 1},
		{"huge board, edge stone", 2147483647, [][2]int{
			{1000, 0}, {999, 0}, {5, 5}, {1001, 0}, {7, 7}, {1000, 1}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := captureAnswer(t, captureUnit(c.size, c.moves...))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("captured %d, want %d", got, c.want)
			}
			if c.size > 100 {
				return
			}
			pts := make([]capturePt, len(c.moves))
			for i, m := range c.moves {
				pts[i] = capturePt{m[0], m[1]}
			}
			if ref, bad := captureSimpleCount(c.size, pts); ref != c.want || bad >= 0 {
				t.Errorf("the reference captures %d (bad move %d), want %d", ref, bad, c.want)
			}
		})
	}
}

func TestCaptureUnitErrors(t *testing.T) {
	cases := []struct {
		name, unit string
		line       int
		msg        string
	}{
		{"x off the board", "5 6\n0 0\n1 1\n2 2\n3 3\n4 4\n5 0\n", 7, "move 6: x=5 is off a 5x5 board"},
		{"y off the board", "5 1\n0 5\n", 2, "move 1: y=5 is off a 5x5 board"},
		{"huge coordinate", "5 1\n1 99999999999999999999999\n", 2, "move 1: y=99999999999999999999999 is off a 5x5 board"},
		{"occupied", "3 2\n1 1\n1 1\n", 3, "move 2: 1 1 is already occupied"},
		{"occupied after blank lines", "\n3 2\n\r\n1 1\r\n\n1 1\n", 6, "move 2: 1 1 is already occupied"},
		{"one number", "5 1\n1\n", 2, `move 1: want two integers "x y", got "1"`},
		{"three numbers", "5 1\n1 2 3\n", 2, `move 1: want two integers "x y"`},
		{"negative", "5 1\n-1 2\n", 2, `want two integers "x y", got "-1 2"`},
		{"words", "5 1\nab cd\n", 2, `want two integers`},
		{"cut short", "5 3\n1 1\n2 2\n", 1, "game cut short: the header says 3 moves, the unit has 2"},
		{"extra line", "5 1\n1 1\n2 2\n", 3, `unexpected line "2 2" after the 1 moves`},
		{"empty", "", 0, "no header"},
		{"only blanks", "\n \r\n\t\n", 0, "no header"},
		{"size zero", "0 1\n0 0\n", 1, "board size 0 is out of range 1..2147483647"},
		{"size 2^31", "2147483648 1\n0 0\n", 1, "board size 2147483648 is out of range"},
		{"size enormous", "99999999999999999999999999 1\n", 1, "board size 99999999999999999999999999 is out of range"},
		{"no moves", "5 0\n", 1, "move count 0 is out of range 1..25000"},
		{"too many moves", "5 25001\n", 1, "move count 25001 is out of range 1..25000"},
		{"header one number", "5\n", 1, `header: want two integers "S M"`},
		{"header three numbers", "5 1 1\n0 0\n", 1, `header: want two integers "S M"`},
		{"header sign", "+5 1\n0 0\n", 1, `header: want two integers`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := captureAnswer(t, c.unit)
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an *engine.InputError", err)
			}
			if ie.Problem != "capture" || ie.Line != c.line || !strings.Contains(ie.Msg, c.msg) {
				t.Errorf("got %q (line %d), want line %d and %q", err, ie.Line, c.line, c.msg)
			}
		})
	}
	// The brief's example, verbatim.
	_, err := captureAnswer(t, "5 6\n0 0\n1 1\n2 2\n3 3\n4 4\n5 0\n")
	if want := "capture: line 7: move 6: x=5 is off a 5x5 board"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestCaptureHostileHeader(t *testing.T) {
	// S*S would be 2^62 cells: only the played points may cost anything.
	unit := "2147483647 25000\n"
	var b strings.Builder
	b.WriteString(unit)
	for i := range 25000 {
		fmt.Fprintf(&b, "%d %d\n", 2147483646-i, 2147483646-i%3)
	}
	p := mustProblem(t, "capture")
	text := []byte(b.String())
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := p.Append(nil, text); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 && !captureRace {
		t.Errorf("Append allocated %v times per game", allocs)
	}
}

func TestCaptureSolveJSON(t *testing.T) {
	ans, err := mustProblem(t, "capture").Solve([]byte("2 6\n0 1\n0 0\n1 0\n0 0\n0 0\n1 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(ans)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"captured":5,"moves":6,"size":2}`; string(got) != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	if got := string(ans.AppendText([]byte("x"))); got != "x5\n" {
		t.Errorf("AppendText %q", got)
	}
}

func TestCaptureTypedAPI(t *testing.T) {
	g, err := engine.CaptureParse([]byte("2 6\n0 1\n0 0\n\n1 0\n0 0\n0 0\n1 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Size != 2 || len(g.Moves) != 6 || g.Moves[2] != (engine.CaptureMove{X: 1, Y: 0, Line: 5}) {
		t.Fatalf("parsed %+v", g)
	}
	ans, err := g.Play()
	if err != nil || ans != (engine.CaptureAnswer{Captured: 5, Moves: 6, Size: 2}) {
		t.Fatalf("Play = %+v, %v", ans, err)
	}
	// A game built by hand is checked like a parsed one.
	for _, c := range []struct {
		g   engine.CaptureGame
		msg string
	}{
		{engine.CaptureGame{Size: 0}, "board size 0 is out of range"},
		{engine.CaptureGame{Size: 1 << 31}, "board size 2147483648 is out of range"},
		{engine.CaptureGame{Size: 3, Moves: []engine.CaptureMove{{X: 1, Y: 3}}}, "move 1: y=3 is off a 3x3 board"},
		{engine.CaptureGame{Size: 3, Moves: []engine.CaptureMove{{X: -1, Y: 0}}}, "move 1: x=-1 is off a 3x3 board"},
		{engine.CaptureGame{Size: 3, Moves: []engine.CaptureMove{{X: 1, Y: 1}, {X: 1, Y: 1, Line: 9}}}, "line 9: move 2: 1 1 is already occupied"},
	} {
		if _, err := c.g.Play(); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Play(%+v) = %v, want %q", c.g, err, c.msg)
		}
	}
}

func TestCaptureAppendDoesNotAllocate(t *testing.T) {
	if captureRace {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	p := mustProblem(t, "capture")
	unit := captureMixedGame().text()
	dst := make([]byte, 0, 64)
	if _, err := p.Append(dst, unit); err != nil { // warm the pool
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := p.Append(dst[:0], unit); err != nil {
			t.Fatal(err)
		}
	})
	// sync.Pool may drop its scratch at a GC, so allow the odd refill.
	if allocs >= 1 {
		t.Errorf("Append allocated %v times per unit", allocs)
	}
}

func TestCaptureConcurrentAppend(t *testing.T) {
	p := mustProblem(t, "capture")
	games := []*captureGame{captureBlockGame(), captureSnakeGame()}
	want := []string{"10000", strconv.Itoa(games[1].want)}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unit := games[i%2].text()
			for range 3 {
				out, err := p.Append(nil, unit)
				if err != nil || string(out) != want[i%2]+"\n" {
					t.Errorf("game %d: %q, %v; want %s", i%2, out, err, want[i%2])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestCaptureContest(t *testing.T) {
	long := strings.Repeat("1", 100)
	cases := []struct {
		name, in, out string
		errs          []string // each reported error, in order
	}{
		{"two games with stray blank lines", "\r\n2 6\n0 1\n\n0 0\r\n1 0\n0 0\n\n0 0\n1 1\n\n\n3 1\n1 1\n", "5\n0\n", nil},
		{"no final newline", "3 1\n1 1", "0\n", nil},
		{"bad header, then the next line is a header", "x y\n3 1\n1 1\n", "0\n",
			[]string{`capture: line 1: header: want two integers "S M" (board size, moves), got "x y"`}},
		{"too many moves: rejected at once, the next line tried",
			"5 25001\n3 1\n0 0\n", "0\n", []string{"capture: line 1: header: move count 25001 is out of range 1..25000"}},
		{"move errors name the stream line", "3 1\n0 0\n\n\n3 2\n1 1\n\n1 1\n3 1\n1 0\n", "0\n0\n",
			[]string{"capture: line 8: move 2: 1 1 is already occupied"}},
		{"off the board, then the next game", "5 6\n0 0\n1 1\n2 2\n3 3\n4 4\n5 0\n1 1\n0 0\n", "1\n",
			[]string{"capture: line 7: move 6: x=5 is off a 5x5 board"}},
		{"a too-long move line spoils only its game", "3 2\n0 0\n" + long + "\n3 1\n0 0\n", "0\n",
			[]string{"capture: line 3: line too long", "capture: line 3: move 2 of the game from line 1 was dropped"}},
		{"a too-long header", long + "\n3 1\n0 0\n", "0\n",
			[]string{"capture: line 1: line too long", "capture: line 1: header line dropped"}},
		{"cut short at the end", "3 1\n0 0\n3 4\n1 1\n", "0\n",
			[]string{"capture: line 3: game cut short at the end of the stream: the header says 4 moves, the stream has 1"}},
		{"hostile header, cut short", "2147483647 25000\n7 7\n", "",
			[]string{"capture: line 1: game cut short at the end of the stream: the header says 25000 moves, the stream has 1"}},
		{"hostile header, whole game", "2147483647 2\n2147483646 0\n0 2147483646\n", "0\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs := runContest(t, "capture", c.in)
			if out != c.out {
				t.Errorf("output %q, want %q", out, c.out)
			}
			if len(errs) != len(c.errs) {
				t.Fatalf("errors %v, want %q", errs, c.errs)
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), c.errs[i]) {
					t.Errorf("error %d: %q, want %q...", i, e, c.errs[i])
				}
			}
		})
	}
}

// captureFeed feeds lines to a fresh framer and returns the frames, the units copied.
func captureFeed(f engine.Framer, lines ...[]byte) []engine.Frame {
	var all []engine.Frame
	for _, l := range lines {
		for _, fr := range f.Feed(nil, l) {
			fr.Unit = append([]byte(nil), fr.Unit...)
			all = append(all, fr)
		}
	}
	return all
}

func TestCaptureFramer(t *testing.T) {
	p := mustProblem(t, "capture")
	b := func(s string) []byte { return []byte(s) }

	t.Run("dropped move line", func(t *testing.T) {
		f := p.NewFramer()
		frames := captureFeed(f, b("3 3"), b("0 0"), nil, nil, b("3 1"), b(""), b("2 2"))
		if len(frames) != 2 {
			t.Fatalf("frames %+v", frames)
		}
		var ie *engine.InputError
		if !errors.As(frames[0].Err, &ie) || frames[0].Line != 1 || ie.Line != 3 ||
			!strings.Contains(ie.Msg, "move 2 of the game from line 1 was dropped") {
			t.Errorf("frame 0: line %d, %v", frames[0].Line, frames[0].Err)
		}
		if frames[1].Err != nil || frames[1].Line != 5 || string(frames[1].Unit) != "3 1\n\n2 2\n" {
			t.Errorf("frame 1: %+v", frames[1])
		}
	})

	t.Run("overlong line fed directly is dropped", func(t *testing.T) {
		f := p.NewFramer()
		frames := captureFeed(f, b("3 1"), b("0 0"+strings.Repeat(" ", 100)))
		if len(frames) != 1 || frames[0].Err == nil {
			t.Fatalf("frames %+v", frames)
		}
	})

	t.Run("reset drops the partial unit", func(t *testing.T) {
		f := p.NewFramer()
		captureFeed(f, b("3 5"), b("0 0"), b(""), b("1 1"))
		if n := f.Reset(); n != 4 {
			t.Errorf("Reset dropped %d lines, want 4", n)
		}
		if n := f.Reset(); n != 0 {
			t.Errorf("second Reset dropped %d lines, want 0", n)
		}
		frames := captureFeed(f, b("3 1"), b("2 2"))
		if len(frames) != 1 || frames[0].Err != nil || frames[0].Line != 1 || string(frames[0].Unit) != "3 1\n2 2\n" {
			t.Errorf("after Reset: %+v", frames)
		}
		if got := f.End(nil); len(got) != 0 {
			t.Errorf("End after a whole game: %+v", got)
		}
	})

	t.Run("blank lines are bounded", func(t *testing.T) {
		f := p.NewFramer()
		var frames []engine.Frame
		frames = append(frames, captureFeed(f, b("3 2"), b("0 0"))...)
		for range 3 * 25000 {
			frames = append(frames, captureFeed(f, b(" "))...)
		}
		frames = append(frames, captureFeed(f, b("1 1"))...)
		if len(frames) != 1 || frames[0].Err != nil {
			t.Fatalf("frames %d: %v", len(frames), frames)
		}
		if n := len(frames[0].Unit); n > p.Limits().MaxUnit {
			t.Errorf("unit of %d bytes, over MaxUnit %d", n, p.Limits().MaxUnit)
		}
		out, err := p.Append(nil, frames[0].Unit)
		if err != nil || string(out) != "0\n" {
			t.Errorf("answer %q, %v", out, err)
		}
	})

	t.Run("largest unit is within MaxUnit", func(t *testing.T) {
		f := p.NewFramer()
		line := b("0" + strings.Repeat(" ", 62) + "1")
		if len(line) != p.Limits().MaxLine {
			t.Fatalf("line of %d bytes", len(line))
		}
		var frames []engine.Frame
		frames = append(frames, captureFeed(f, b("2147483647 25000"+strings.Repeat(" ", 48)))...)
		for i := range 25000 {
			frames = append(frames, captureFeed(f, b(""))...)
			if i == 0 {
				frames = append(frames, captureFeed(f, line)...)
			} else {
				frames = append(frames, captureFeed(f, b(fmt.Sprintf("%d %d%s", i, i, strings.Repeat(" ", 50))))...)
			}
		}
		if len(frames) != 1 || frames[0].Err != nil {
			t.Fatalf("frames %v", frames)
		}
		if n, max := len(frames[0].Unit), p.Limits().MaxUnit; n > max {
			t.Errorf("unit of %d bytes, over MaxUnit %d", n, max)
		}
	})
}
