package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

func TestReplayScores(t *testing.T) {
	tests := []struct{ name, unit, want string }{
		{"no placements: the board is nobody's", "5 0\n", "0 0\n"},
		{"sample 1", "7 6\nB(-2,-2)\nW(2,2)\nB(-2,-3)\nW(2,3)\nB(-3,-2)\nW(3,2)\n", "1 1\n"},
		{"capture credited to the capturer", "7 6\nB(-2,-3)\nW(-3,-3)\nB(-2,-2)\nW(3,2)\nB(-3,-2)\nW(2,3)\n", "2 1\n"},
		{"white passes: black twice", "7 2\nB(0,0)\nB(1,1)\n", "47 0\n"},
		{"white first: black passed", "3 1\nW(0,0)\n", "0 8\n"},
		// A ko: black takes, white takes back at once.
		{"ko recapture is legal", "5 9\nB(-1,-2)\nW(0,-2)\nB(-2,-1)\nW(-1,-1)\nB(-1,0)\nW(0,0)\nW(1,-1)\nB(0,-1)\nW(-1,-1)\n", "2 2\n"},
		// Black plays where it would have no liberty, but captures first.
		{"capture saves from suicide", "3 5\nW(-1,-1)\nB(-1,0)\nW(1,-1)\nW(0,0)\nB(0,-1)\n", "2 0\n"},
		{"spaces inside parentheses", "3 2\n  B( -1 , -1 )\t\nW(+1,1)\r\n", "0 0\n"},
		{"a row captured", "3 6\nB(-1,-1)\nB(0,-1)\nB(1,-1)\nW(-1,0)\nW(0,0)\nW(1,0)\n", "0 9\n"},
	}
	p := mustProblem(t, "replay")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Append(nil, []byte(tc.unit))
			if err != nil || string(got) != tc.want {
				t.Errorf("Append = %q, %v; want %q", got, err, tc.want)
			}
			if simple, ok := replaySimple(tc.unit); !ok || simple != tc.want {
				t.Errorf("simple implementation: %q %v", simple, ok)
			}
		})
	}
}

func TestReplaySolveJSON(t *testing.T) {
	p := mustProblem(t, "replay")
	ans, err := p.Solve([]byte("7 6\nB(-2,-3)\nW(-3,-3)\nB(-2,-2)\nW(3,2)\nB(-3,-2)\nW(2,3)\n"))
	if err != nil {
		t.Fatal(err)
	}
	if js, _ := json.Marshal(ans); string(js) != `{"black":2,"white":1}` {
		t.Errorf("JSON %s", js)
	}
	if got := string(ans.AppendText(nil)); got != "2 1\n" {
		t.Errorf("text %q", got)
	}
}

func TestReplayUnitErrors(t *testing.T) {
	tests := []struct {
		unit string
		line int
		msg  string
	}{
		{"", 0, "empty unit"},
		{"7\n", 1, `"7" is not a header "n m"`},
		{"7 1 2\n", 1, "is not a header"},
		{"8 0\n", 1, "board size 8: want an odd number from 3 to 19"},
		{"21 0\n", 1, "board size 21"},
		{"1 0\n", 1, "board size 1"},
		{"7 -1\n", 1, "-1 placements"},
		{"7 10001\n", 1, "10001 placements: want 0 to 10000"},
		{"7 2\nB(0,0)\n", 2, "the game ends after 1 of 2 placements"},
		{"7 1\nB(0,0)\nW(1,1)\n", 3, "unexpected line after the 1 placements"},
		{"7 1\nX(0,0)\n", 2, `"X(0,0)": want B(x,y) or W(x,y)`},
		{"7 1\nB(0;0)\n", 2, "want B(x,y)"},
		{"7 1\nB (0,0)\n", 2, "want B(x,y)"},
		{"7 1\nB(0,0,0)\n", 2, "want B(x,y)"},
		{"7 1\nB(,0)\n", 2, "want B(x,y)"},
		{"7 1\nb(0,0)\n", 2, "want B(x,y)"},
		{"7 1\n\n", 2, "want B(x,y)"},
		{"7 1\nB(4,0)\n", 2, "(4,0) is off the 7x7 board (coordinates -3..3)"},
		{"7 1\nW(0,-99999999999999)\n", 2, "is off the 7x7 board"},
		{"7 2\nB(0,0)\nW(0,0)\n", 3, `"W(0,0)": the point is occupied`},
		{"3 3\nW(0,-1)\nW(-1,0)\nB(-1,-1)\n", 4, `"B(-1,-1)" is suicide`},
		// A group of two with no liberty left: also suicide.
		{"3 5\nW(0,-1)\nW(0,0)\nW(-1,1)\nB(-1,-1)\nB(-1,0)\n", 6, "is suicide"},
	}
	p := mustProblem(t, "replay")
	for _, tc := range tests {
		_, err := p.Append(nil, []byte(tc.unit))
		var ie *engine.InputError
		if !errors.As(err, &ie) {
			t.Errorf("Append(%q) err = %v, want *InputError", tc.unit, err)
			continue
		}
		if ie.Line != tc.line || !strings.Contains(ie.Msg, tc.msg) {
			t.Errorf("Append(%q) err = %v, want line %d and %q", tc.unit, err, tc.line, tc.msg)
		}
		if _, ok := replaySimple(tc.unit); ok {
			t.Errorf("the simple implementation accepts %q", tc.unit)
		}
	}
}

func TestReplayFraming(t *testing.T) {
	tests := []struct {
		name, in, out string
		errs          []string
	}{
		{"blank lines between games", "\n3 1\nB(0,0)\n\n \n3 0\n0 0\n", "8 0\n0 0\n", nil},
		{"an input ends, another follows", "3 1\nB(0,0)\n0 0\n3 1\nW(0,0)\n0 0\n", "8 0\n0 8\n", nil},
		{"bad header resyncs at the next header", "hello\nB(0,0)\nW(1,1)\n3 1\nB(0,0)\n", "8 0\n",
			[]string{`1: "hello" is not a header "n m"; skipping to the next header`}},
		{"too many placements", "19 10001\nB(0,0)\n3 0\n", "0 0\n",
			[]string{"1: 10001 placements: want 0 to 10000"}},
		{"bad game framed by its count", "4 1\nB(0,0)\n3 1\nB(0,0)\n", "8 0\n",
			[]string{"1: board size 4"}},
		{"bad placement", "3 2\nB(0,0)\nW(0,0)\n3 1\nB(0,0)\n", "8 0\n",
			[]string{"3: the point is occupied"}},
		{"cut short by the end", "3 1\nB(0,0)\n5 3\nB(0,0)\n", "8 0\n",
			[]string{"3: game cut short after 1 of 3 placements"}},
		{"a header cuts a game short", "3 3\nB(0,0)\n3 1\nW(0,0)\n", "0 8\n",
			[]string{"1: game cut short after 1 of 3 placements by the header at line 3"}},
		{"the end of input cuts a game short", "3 2\nB(0,0)\n0 0\n3 1\nW(0,0)\n", "0 8\n",
			[]string{"1: game cut short after 1 of 2 placements by the header at line 3"}},
		{"overlong placement", "3 2\nB(0,0)\n" + strings.Repeat(" ", 100) + "W(1,1)\n3 1\nB(0,0)\n", "8 0\n",
			[]string{"3: line too long", "3: line 3 of the game at line 1 was dropped"}},
		{"overlong header", strings.Repeat("9", 100) + "\nB(0,0)\n3 1\nB(0,0)\n", "8 0\n",
			[]string{"1: line too long", "1: line dropped (too long or unreadable); skipping"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs := runContest(t, "replay", tc.in)
			if out != tc.out {
				t.Errorf("output %q, want %q", out, tc.out)
			}
			boardCheckErrors(t, errs, tc.errs)
		})
	}
}

func TestReplayFramerReset(t *testing.T) {
	f := mustProblem(t, "replay").NewFramer()
	for _, l := range []string{"7 3", "B(0,0)", "W(1,1)"} {
		if frames := f.Feed(nil, []byte(l)); len(frames) != 0 {
			t.Fatalf("frames before the game is complete: %+v", frames)
		}
	}
	if n := f.Reset(); n != 3 {
		t.Errorf("Reset dropped %d lines, want 3", n)
	}
	// Fresh state: a placement now is a bad header on line 1.
	frames := f.Feed(nil, []byte("B(0,0)"))
	if len(frames) != 1 || frames[0].Err == nil || frames[0].Line != 1 {
		t.Errorf("after Reset: %+v", frames)
	}
}

// replayText writes a generated game as a unit, with random spacing where allowed.
func replayText(rng *rand.Rand, n int, moves []boardMove) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d\n", n, len(moves))
	h := (n - 1) / 2
	sp := func() string { return []string{"", "", "", " ", "  ", "\t"}[rng.IntN(6)] }
	for _, m := range moves {
		if rng.IntN(4) == 0 {
			fmt.Fprintf(&b, "%s%c(%s%d%s,%s%d%s)%s\n", sp(), m.colour, sp(), m.c-h, sp(), sp(), m.r-h, sp(), sp())
		} else {
			fmt.Fprintf(&b, "%c(%d,%d)\n", m.colour, m.c-h, m.r-h)
		}
	}
	return b.String()
}

func TestReplayDifferential(t *testing.T) {
	p := mustProblem(t, "replay")
	rng := rand.New(rand.NewPCG(15, 16))
	var stream, want strings.Builder
	games, captures := diffSize(400, 8000), 0
	for i := 0; i < games; i++ {
		n := 3 + 2*rng.IntN(9)
		moves, _ := boardGenGame(rng, n, rng.IntN(2*n*n+1))
		unit := replayText(rng, n, moves)
		simple, ok := replaySimple(unit)
		if !ok {
			t.Fatalf("the simple implementation rejects a generated game:\n%s", unit)
		}
		var g engine.ReplayGame
		if err := g.Play([]byte(unit)); err != nil {
			t.Fatalf("Play: %v\n%s", err, unit)
		}
		captures += g.CapturedByBlack + g.CapturedByWhite
		if got, err := p.Append(nil, []byte(unit)); err != nil || string(got) != simple {
			t.Fatalf("Append = %q, %v; simple says %q; game:\n%s", got, err, simple, unit)
		}
		stream.WriteString(unit)
		want.WriteString(simple)
		switch rng.IntN(20) {
		case 0:
			stream.WriteString("0 0\n")
		case 1:
			stream.WriteString("\n")
		}
	}
	stream.WriteString("0 0\n")
	if captures < games {
		t.Errorf("only %d captures in %d games: the generator is too tame", captures, games)
	}
	out, errs := runContest(t, "replay", stream.String())
	if len(errs) != 0 || out != want.String() {
		t.Fatalf("Contest over the generated stream differs; errors %v", errs)
	}
}

func BenchmarkReplay(b *testing.B) {
	rng := rand.New(rand.NewPCG(17, 18))
	p := mustProblem(b, "replay")
	units := make([][]byte, 16)
	for i := range units {
		moves, _ := boardGenGame(rng, 19, 300)
		units[i] = []byte(replayText(rng, 19, moves))
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		dst := make([]byte, 0, 64)
		for i := 0; b.Loop(); i++ {
			dst, _ = p.Append(dst[:0], units[i%len(units)])
		}
	})
	b.Run("simple", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			replaySimple(string(units[i%len(units)]))
		}
	})
}

func FuzzReplayContest(f *testing.F) {
	f.Add([]byte("7 6\nB(-2,-2)\nW(2,2)\nB(-2,-3)\nW(2,3)\nB(-3,-2)\nW(3,2)\n0 0\n"))
	f.Fuzz(func(t *testing.T, in []byte) { fuzzContest(t, "replay", in) })
}

func FuzzReplayUnit(f *testing.F) {
	f.Add([]byte("5 9\nB(-1,-2)\nW(0,-2)\nB(-2,-1)\nW(-1,-1)\nB(-1,0)\nW(0,0)\nW(1,-1)\nB(0,-1)\nW(-1,-1)\n"))
	f.Fuzz(func(t *testing.T, unit []byte) {
		fuzzUnit(t, "replay", unit)
		got, err := mustProblem(t, "replay").Append(nil, unit)
		simple, ok := replaySimple(string(unit))
		if (err == nil) != ok || string(got) != simple {
			t.Fatalf("Append %q, %v; simple %q, %v", got, err, simple, ok)
		}
	})
}

func TestReplayAppendAllocs(t *testing.T) {
	p := mustProblem(t, "replay")
	rng := rand.New(rand.NewPCG(21, 22))
	moves, _ := boardGenGame(rng, 19, 300)
	unit := []byte(replayText(rng, 19, moves))
	dst := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(20, func() {
		var err error
		if dst, err = p.Append(dst[:0], unit); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Append allocates %v times per game", n)
	}
}
