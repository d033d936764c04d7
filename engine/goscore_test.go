package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
)

// goscoreBoard builds a unit from 19 short rows: each string gives the first points
// of its row ('.' or '+' empty, '*' empty, 'B'/'@' black, 'W'/'O' white), the rest of
// the row is empty.
func goscoreBoard(rows ...string) string {
	var b strings.Builder
	b.WriteString("\n")
	for r := 0; r < 19; r++ {
		row := ""
		if r < len(rows) {
			row = rows[r]
		}
		for c := 0; c < 19; c++ {
			v := byte('+')
			if c < len(row) {
				v = map[byte]byte{'.': '+', '+': '+', '*': '*', 'B': '@', '@': '@', 'W': 'O', 'O': 'O'}[row[c]]
			}
			b.WriteByte(' ')
			b.WriteByte(v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestGoscoreScores(t *testing.T) {
	full := func(v string) []string {
		rows := make([]string, 19)
		for i := range rows {
			rows[i] = strings.Repeat(v, 19)
		}
		return rows
	}
	tests := []struct {
		name, unit, want string
	}{
		{"empty board counts for nobody", goscoreBoard(), "0 0\n"},
		{"star points are empty", goscoreBoard("***", "*+*", "+*+"), "0 0\n"},
		{"one stone owns the whole board", goscoreBoard("", "", "", "...B"), "361 0\n"},
		{"star point inside territory", goscoreBoard(".B", "B*"), "361 0\n"},
		{"full black board", goscoreBoard(full("B")...), "361 0\n"},
		{"full white board", goscoreBoard(full("W")...), "0 361\n"},
		{"shared region is neutral", goscoreBoard("B", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "..................W"), "1 1\n"},
		{"corner eye", goscoreBoard(".B", "BB", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "..................W"), "4 1\n"},
		// A black stone inside white's area still counts: stones are never removed.
		{"dead stones stay", goscoreBoard("WWW", "WBW", "WWW"), "1 360\n"},
		{"eye of the other colour", goscoreBoard(".W", "WW"), "0 361\n"},
		{"vertical wall splits the board", func() string {
			rows := make([]string, 19)
			for i := range rows {
				rows[i] = "........BW"
			}
			return goscoreBoard(rows...)
		}(), "171 190\n"},
	}
	p := mustProblem(t, "goscore")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Append(nil, []byte(tc.unit))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if simple, ok := goscoreSimple(tc.unit); !ok || simple != tc.want {
				t.Errorf("simple implementation: %q %v", simple, ok)
			}
		})
	}
}

func TestGoscoreSolveJSON(t *testing.T) {
	p := mustProblem(t, "goscore")
	ans, err := p.Solve([]byte(goscoreBoard("WWW", "WBW", "WWW")))
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(ans)
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != `{"black":1,"white":360}` {
		t.Errorf("JSON %s", js)
	}
	if got := string(ans.AppendText(nil)); got != "1 360\n" {
		t.Errorf("text %q", got)
	}
}

func TestGoscoreUnitErrors(t *testing.T) {
	good := goscoreBoard("B", "W")
	lines := strings.SplitAfter(good, "\n")
	with := func(i int, line string) string {
		l := append([]string(nil), lines...)
		l[i] = line
		return strings.Join(l, "")
	}
	tests := []struct {
		name, unit string
		line       int
		msg        string
	}{
		{"empty", "", 0, "empty unit"},
		{"no spacer", with(0, " + +\n"), 1, "starts with a blank line"},
		{"bad point", with(6, lines[6][:21]+"x"+lines[6][22:]), 7, "column 22: 'x' is not one of + * @ O"},
		{"short row", with(3, " + + +\n"), 4, "column 7: the row ends after 3 of 19 points"},
		{"missing space", with(19, strings.Replace(lines[19], " +", "++", 1)), 20, "column 1: '+' where a space should precede point 1"},
		{"extra point", with(2, strings.TrimSuffix(lines[2], "\n")+" +\n"), 3, "column 40: '+' after the 19th point"},
		{"control byte", with(2, strings.Replace(lines[2], "O", "\x00", 1)), 3, "column 2: byte 0x00"},
		{"too few rows", strings.Join(lines[:15], ""), 15, "ends after 14 of 19 rows"},
		{"extra line", good + "\n", 21, "unexpected line"},
	}
	p := mustProblem(t, "goscore")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Append(nil, []byte(tc.unit))
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want *InputError", err)
			}
			if ie.Line != tc.line || !strings.Contains(ie.Msg, tc.msg) || ie.Problem != "goscore" {
				t.Errorf("err = %v, want line %d and %q", err, tc.line, tc.msg)
			}
			if _, err := p.Solve([]byte(tc.unit)); err == nil {
				t.Error("Solve accepted what Append rejects")
			}
			if _, ok := goscoreSimple(tc.unit); ok {
				t.Error("the simple implementation accepts it")
			}
		})
	}
	// White space after a row and a CR are tolerated, and so is a missing last "\n".
	for _, unit := range []string{
		with(5, strings.TrimSuffix(lines[5], "\n")+" \t \r\n"),
		" \t\r" + good,
		strings.TrimSuffix(good, "\n"),
	} {
		if got, err := p.Append(nil, []byte(unit)); err != nil || string(got) != "1 1\n" {
			t.Errorf("Append(%q) = %q, %v", unit, got, err)
		}
	}
}

func TestGoscoreFraming(t *testing.T) {
	board := goscoreBoard("B")              // 361 0
	rows := strings.TrimPrefix(board, "\n") // 19 rows without their spacer
	rowLines := strings.SplitAfter(rows, "\n")
	tests := []struct {
		name, in, out string
		errs          []string // "line: message part" of each error, in order
	}{
		{"two boards", board + goscoreBoard("W"), "361 0\n0 361\n", nil},
		{"CRLF and extra blank lines", "\r\n \n" + strings.ReplaceAll(rows, "\n", "\r\n"), "361 0\n", nil},
		{"board cut short by a blank line", "\n" + strings.Join(rowLines[:5], "") + board, "361 0\n",
			[]string{"1: board cut short after 5 of 19 rows by the blank line 7"}},
		{"garbage before a board", "hello\nworld\n" + board, "361 0\n",
			[]string{"1: lines 1-2 skipped"}},
		{"garbage between boards", board + "x\n" + board, "361 0\n361 0\n",
			[]string{"21: line skipped"}},
		{"garbage at the end", board + "x\ny\n", "361 0\n", []string{"21: lines 21-22 skipped"}},
		{"cut short by the end", board + "\n" + rowLines[0], "361 0\n",
			[]string{"21: board cut short after 1 of 19 rows by the end of input"}},
		{"trailing blank line", board + "\n", "361 0\n", nil},
		{"bad row", "\n" + strings.Replace(rows, "@", "X", 1) + board, "361 0\n",
			[]string{"2: column 2: 'X' is not one of"}},
		{"twenty rows", "\n" + rows + rowLines[0] + board, "361 0\n361 0\n",
			[]string{"21: line skipped"}},
		{"overlong row", "\n" + rowLines[0] + strings.Repeat(" +", 100) + "\n" + strings.Join(rowLines[2:], "") + board, "361 0\n",
			[]string{"3: line too long", "3: row 2 of the board at line 1 was dropped"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs := runContest(t, "goscore", tc.in)
			if out != tc.out {
				t.Errorf("output %q, want %q", out, tc.out)
			}
			boardCheckErrors(t, errs, tc.errs)
		})
	}
}

// boardCheckErrors compares reported errors with "line: message part" patterns.
func boardCheckErrors(t *testing.T, errs []error, want []string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %d like %q", errs, len(want), want)
	}
	for i, e := range errs {
		var ie *engine.InputError
		errors.As(e, &ie)
		line, msg, _ := strings.Cut(want[i], ": ")
		if got := strings.TrimPrefix(ie.Error(), ie.Problem+": "); !strings.HasPrefix(got, "line "+line+": ") || !strings.Contains(ie.Msg, msg) {
			t.Errorf("error %d: %v, want line %s and %q", i, e, line, msg)
		}
	}
}

func TestGoscoreFramerReset(t *testing.T) {
	p := mustProblem(t, "goscore")
	f := p.NewFramer()
	var frames []engine.Frame
	for _, l := range strings.SplitAfter(goscoreBoard()[:200], "\n") {
		frames = f.Feed(frames, []byte(strings.TrimSuffix(l, "\n")))
	}
	if len(frames) != 0 {
		t.Fatalf("frames from a partial board: %v", frames)
	}
	if n := f.Reset(); n != 7 { // the spacer, 5 rows and the start of a 6th
		t.Errorf("Reset dropped %d lines, want 7", n)
	}
	if n := f.Reset(); n != 0 {
		t.Errorf("second Reset dropped %d lines", n)
	}
	frames = f.Feed(frames, []byte("garbage"))
	if n := f.Reset(); n != 1 || len(frames) != 0 {
		t.Errorf("Reset after garbage: %d lines, frames %v", n, frames)
	}
	// After a reset, line numbers start again from 1.
	frames = f.Feed(frames[:0], []byte("garbage"))
	frames = f.End(frames)
	if len(frames) != 1 || frames[0].Line != 1 {
		t.Errorf("frames after reset: %+v", frames)
	}
}

func TestGoscoreDifferential(t *testing.T) {
	p := mustProblem(t, "goscore")
	rng := rand.New(rand.NewPCG(3, 4))
	var stream, want strings.Builder
	units := diffSize(600, 12000)
	for i := 0; i < units; i++ {
		unit := goscoreText(rng, boardGenPosition(rng, 19), i%2 == 0)
		simple, ok := goscoreSimple(unit)
		if !ok {
			t.Fatalf("the simple implementation rejects a generated board:\n%s", unit)
		}
		got, err := p.Append(nil, []byte(unit))
		if err != nil || string(got) != simple {
			t.Fatalf("Append = %q, %v; simple says %q; board:\n%s", got, err, simple, unit)
		}
		stream.WriteString(unit)
		want.WriteString(simple)
	}
	out, errs := runContest(t, "goscore", stream.String())
	if len(errs) != 0 || out != want.String() {
		t.Fatalf("Contest over the generated stream differs; errors %v", errs)
	}
}

func TestGoscoreAppendAllocs(t *testing.T) {
	p := mustProblem(t, "goscore")
	unit := []byte(goscoreText(rand.New(rand.NewPCG(5, 6)), boardGenPosition(rand.New(rand.NewPCG(5, 6)), 19), true))
	dst := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		var err error
		if dst, err = p.Append(dst[:0], unit); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Append allocates %v times per unit", n)
	}
}

// goscoreBenchUnits are realistic boards: ends of random games on the full board.
func goscoreBenchUnits() [][]byte {
	rng := rand.New(rand.NewPCG(7, 8))
	units := make([][]byte, 64)
	for i := range units {
		_, g := boardGenGame(rng, 19, 250)
		units[i] = []byte(goscoreText(rng, g, false))
	}
	return units
}

func BenchmarkGoscore(b *testing.B) {
	units := goscoreBenchUnits()
	p := mustProblem(b, "goscore")
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		dst := make([]byte, 0, 64)
		for i := 0; b.Loop(); i++ {
			dst, _ = p.Append(dst[:0], units[i%len(units)])
		}
	})
	b.Run("simple", func(b *testing.B) {
		b.ReportAllocs()
		strs := make([]string, len(units))
		for i, u := range units {
			strs[i] = string(u)
		}
		for i := 0; b.Loop(); i++ {
			goscoreSimple(strs[i%len(strs)])
		}
	})
	sample := samples.Read(b, "goscore.in")
	b.Run("sample2", func(b *testing.B) { // the dense second sample board
		b.ReportAllocs()
		unit := sample[bytes.Index(sample[1:], []byte("\n\n"))+2:]
		dst := make([]byte, 0, 64)
		for b.Loop() {
			dst, _ = p.Append(dst[:0], unit)
		}
	})
}

func FuzzGoscoreContest(f *testing.F) {
	f.Add([]byte(goscoreBoard("B", "W") + goscoreBoard()))
	f.Fuzz(func(t *testing.T, in []byte) { fuzzContest(t, "goscore", in) })
}

func FuzzGoscoreUnit(f *testing.F) {
	f.Add([]byte(goscoreBoard("BW.", "*W")))
	f.Fuzz(func(t *testing.T, unit []byte) {
		fuzzUnit(t, "goscore", unit)
		// And the fast parser agrees with the simple one on every byte string.
		got, err := mustProblem(t, "goscore").Append(nil, unit)
		simple, ok := goscoreSimple(string(unit))
		if (err == nil) != ok || string(got) != simple {
			t.Fatalf("Append %q, %v; simple %q, %v", got, err, simple, ok)
		}
	})
}
