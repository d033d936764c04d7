package engine_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

func TestTerritoryScores(t *testing.T) {
	tests := []struct{ name, unit, want string }{
		{"single stone, no empty point", "1 1 0\n1 1\n\n", "Draw\n"},
		{"white owns the rest", "2 0 1\n\n1 1\n", "White wins by 3\n"},
		{"sample 3", "5 12 4\n1 1 1 2 1 3 2 1 2 3 3 1 3 3 4 1 4 3 5 1 5 2 5 3\n1 4 2 4 3 4 3 5\n", "Black wins by 1\n"},
		{"one line", "5 12 4 1 1 1 2 1 3 2 1 2 3 3 1 3 3 4 1 4 3 5 1 5 2 5 3 1 4 2 4 3 4 3 5", "Black wins by 1\n"},
		{"any line breaks", "5\n12\n4 1 1 1 2 1 3 2 1 2 3 3 1 3 3 4 1 4\n3 5 1 5 2 5 3 1 4 2\n\n4 3 4 3 5\n", "Black wins by 1\n"},
		{"shared region is nobody's", "3 1 1\n1 1\n3 3\n", "Draw\n"},
		{"stones do not count", "3 8 0\n1 1 1 2 1 3 2 1 2 3 3 1 3 2 3 3\n\n", "Black wins by 1\n"},
		{"full board", "2 2 2\n1 1 2 2\n1 2 2 1\n", "Draw\n"},
		{"19x19, one stone", "19 0 1\n\n10 10\n", "White wins by 360\n"},
		{"CRLF and tabs", "3 1 0\r\n\t2 2 \r\n\r\n", "Black wins by 8\n"},
	}
	p := mustProblem(t, "territory")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Append(nil, []byte(tc.unit))
			if err != nil || string(got) != tc.want {
				t.Errorf("Append = %q, %v; want %q", got, err, tc.want)
			}
			if simple, ok := territorySimple(tc.unit); !ok || simple != tc.want {
				t.Errorf("simple implementation: %q %v", simple, ok)
			}
		})
	}
}

func TestTerritorySolveJSON(t *testing.T) {
	p := mustProblem(t, "territory")
	for unit, want := range map[string]string{
		"2 0 1\n\n1 1\n":    `{"black":0,"white":3,"winner":"white","margin":3}`,
		"3 1 0\n2 2\n\n":    `{"black":8,"white":0,"winner":"black","margin":8}`,
		"3 1 1\n1 1\n3 3\n": `{"black":0,"white":0,"winner":"draw","margin":0}`,
	} {
		ans, err := p.Solve([]byte(unit))
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(ans)
		if string(js) != want {
			t.Errorf("Solve(%q) JSON %s, want %s", unit, js, want)
		}
		text, _ := p.Append(nil, []byte(unit))
		if got := ans.AppendText(nil); string(got) != string(text) {
			t.Errorf("Solve text %q, Append text %q", got, text)
		}
	}
}

func TestTerritoryUnitErrors(t *testing.T) {
	tests := []struct {
		unit string
		line int
		msg  string
	}{
		{"", 0, "empty unit"},
		{"\n \n", 0, "empty unit"},
		{"0\n", 1, "a lone 0 ends the input"},
		{"x 1 0\n1 1\n", 1, `"x" is not a board size`},
		{"20 1 0\n1 1\n\n", 1, "board size 20: want 1 to 19"},
		{"-3 1 0\n1 1\n\n", 1, "board size -3"},
		{"3 -1 2\n", 1, `"-1" is not a stone count`},
		{"3 1 y\n", 1, `"y" is not a stone count`},
		{"19 300 100\n", 1, "400 stones: no board holds more than 361"},
		{"3 0 0\n\n\n", 1, "no stones"},
		{"2 3 2\n1 1 1 2 2 1\n2 2 1 1\n", 1, "5 stones do not fit a 2x2 board"},
		{"3 1 1\n1 1\n1 4\n", 3, "coordinate 4 is off the 3x3 board"},
		{"3 1 1\n0 1\n1 2\n", 2, "coordinate 0 is off"},
		{"3 1 1\n1 1\n1 1\n", 3, "two stones on 1 1"},
		{"3 1 1\n1 a\n1 1\n", 2, `"a" is not a coordinate`},
		{"3 1 1\n1 1\n2 2 5\n", 3, `"5" after the end of the case`},
		{"3 1 1\n1 1\n2\n", 3, "the case ends after 3 of its 4 coordinates"},
		{"3 1\n", 1, "the case ends inside its header"},
		{"3 1 0\n1 1\n\n0\n", 4, `"0" after the end of the case`},
	}
	p := mustProblem(t, "territory")
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
		if _, ok := territorySimple(tc.unit); ok {
			t.Errorf("the simple implementation accepts %q", tc.unit)
		}
	}
}

func TestTerritoryFraming(t *testing.T) {
	tests := []struct {
		name, in, out string
		errs          []string
	}{
		{"input ends, another follows", "1 1 0\n1 1\n\n0\n2 0 1\n\n1 1\n0\n", "Draw\nWhite wins by 3\n", nil},
		{"no terminator", "2 0 1\n\n1 1\n", "White wins by 3\n", nil},
		{"all on one line with terminators", "1 1 0 1 1 0 2 0 1 1 1 0", "Draw\nWhite wins by 3\n", nil},
		{"bad case framed by its counts", "20 1 0\n1 1\n\n2 0 1\n\n1 1\n", "White wins by 3\n",
			[]string{"1: board size 20"}},
		{"bad coordinates framed by their counts", "3 1 1\n1 x\n9 9\n2 0 1\n\n1 1\n", "White wins by 3\n",
			[]string{`2: "x" is not a coordinate`}},
		{"duplicate stone", "3 2 0\n2 2 2 2\n\n2 0 1\n\n1 1\n", "White wins by 3\n",
			[]string{"2: two stones on 2 2"}},
		{"garbage header resyncs at the next line", "hello 1 0 1 1\n2 0 1\n\n1 1\n", "White wins by 3\n",
			[]string{`1: "hello" is not a board size; skipping the rest of the line`}},
		{"huge counts are garbage", "19 99999999999 1 5 5\n2 0 1\n\n1 1\n", "White wins by 3\n",
			[]string{"1: stones: no board holds more than 361"}},
		{"too many stones for any board", "19 300 62\n2 0 1\n1 1\n", "White wins by 3\n",
			[]string{"1: 362 stones"}},
		{"cut short by the end", "2 0 1\n\n1 1\n3 2 2\n1 1 2 2\n", "White wins by 3\n",
			[]string{"4: the input ended after 4 of the case's 8 coordinates"}},
		{"cut short inside the header", "3 2", "", []string{"1: the input ended inside the header"}},
		{"overlong line inside a case", "3 1 1\n" + strings.Repeat("1 ", 40000) + "\n2 0 1\n\n1 1\n", "White wins by 3\n",
			[]string{"2: line too long", "2: the case at line 1 lost this line"}},
		{"overlong line between cases", strings.Repeat("1 ", 40000) + "\n2 0 1\n\n1 1\n", "White wins by 3\n",
			[]string{"1: line too long"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs := runContest(t, "territory", tc.in)
			if out != tc.out {
				t.Errorf("output %q, want %q", out, tc.out)
			}
			boardCheckErrors(t, errs, tc.errs)
		})
	}
}

func TestTerritoryCanonicalUnits(t *testing.T) {
	p := mustProblem(t, "territory")
	f := p.NewFramer()
	var units []string
	collect := func(frames []engine.Frame) {
		for _, fr := range frames {
			if fr.Err != nil {
				t.Fatal(fr.Err)
			}
			units = append(units, string(fr.Unit)) // a unit lives until the next call
		}
	}
	collect(f.Feed(nil, []byte("5 12 4 1 1 1 2 1 3 2 1 2 3 3 1 3 3 4 1 4 3 5 1 5 2 5 3 1 4 2 4 3 4 3 5 2 0 1 1 1 1 1 0")))
	collect(f.Feed(nil, []byte("1 1")))
	want := []string{
		"5 12 4\n1 1 1 2 1 3 2 1 2 3 3 1 3 3 4 1 4 3 5 1 5 2 5 3\n1 4 2 4 3 4 3 5\n",
		"2 0 1\n\n1 1\n",
		"1 1 0\n1 1\n\n",
	}
	if strings.Join(units, "|") != strings.Join(want, "|") {
		t.Fatalf("units %q, want %q", units, want)
	}
	// Stones come out in board order whatever order they came in.
	frames := f.Feed(nil, []byte("3 2 1 3 3 1 2 2 2"))
	if len(frames) != 1 || string(frames[0].Unit) != "3 2 1\n1 2 3 3\n2 2\n" || frames[0].Line != 3 {
		t.Fatalf("frames %+v", frames)
	}
	// The case left open ("1 1 0" and no stone yet) is what Reset drops.
	f.Feed(nil, []byte("1 1 0"))
	if n := f.Reset(); n != 1 {
		t.Errorf("Reset dropped %d lines, want 1", n)
	}
	if frames := f.End(nil); len(frames) != 0 {
		t.Errorf("End after Reset: %+v", frames)
	}
}

// territoryGenCase returns a random valid case as a unit in the three-line layout,
// and its tokens.
func territoryGenCase(rng *rand.Rand) []string {
	n := 1 + rng.IntN(19)
	g := boardGenPosition(rng, n)
	var black, white [][2]int
	for r := range g {
		for c := range g[r] {
			switch g[r][c] {
			case 'B':
				black = append(black, [2]int{r + 1, c + 1})
			case 'W':
				white = append(white, [2]int{r + 1, c + 1})
			}
		}
	}
	if len(black)+len(white) == 0 {
		black = append(black, [2]int{1 + rng.IntN(n), 1 + rng.IntN(n)})
	}
	rng.Shuffle(len(black), func(i, j int) { black[i], black[j] = black[j], black[i] })
	rng.Shuffle(len(white), func(i, j int) { white[i], white[j] = white[j], white[i] })
	tok := []string{strconv.Itoa(n), strconv.Itoa(len(black)), strconv.Itoa(len(white))}
	for _, p := range append(black, white...) {
		tok = append(tok, strconv.Itoa(p[0]), strconv.Itoa(p[1]))
	}
	return tok
}

// territoryLayout writes tokens in the contest's three lines, on one line, or
// broken anywhere.
func territoryLayout(rng *rand.Rand, tok []string) string {
	switch rng.IntN(3) {
	case 0:
		b, _ := strconv.Atoi(tok[1])
		return strings.Join(tok[:3], " ") + "\n" + strings.Join(tok[3:3+2*b], " ") + "\n" + strings.Join(tok[3+2*b:], " ") + "\n"
	case 1:
		return strings.Join(tok, " ") + " "
	}
	var sb strings.Builder
	for _, t := range tok {
		sb.WriteString(t)
		sb.WriteString([]string{" ", "\n", "\t", "  ", "\r\n", "\n\n"}[rng.IntN(6)])
	}
	return sb.String()
}

func TestTerritoryDifferential(t *testing.T) {
	p := mustProblem(t, "territory")
	rng := rand.New(rand.NewPCG(9, 10))
	var stream, want strings.Builder
	units := diffSize(1000, 20000)
	for i := 0; i < units; i++ {
		unit := territoryLayout(rng, territoryGenCase(rng))
		simple, ok := territorySimple(unit)
		if !ok {
			t.Fatalf("the simple implementation rejects a generated case %q", unit)
		}
		got, err := p.Append(nil, []byte(unit))
		if err != nil || string(got) != simple {
			t.Fatalf("Append = %q, %v; simple says %q; case %q", got, err, simple, unit)
		}
		stream.WriteString(unit)
		want.WriteString(simple)
		if rng.IntN(50) == 0 {
			stream.WriteString("0\n") // an input ends and the next one begins
		}
	}
	stream.WriteString("0\n")
	out, errs := runContest(t, "territory", stream.String())
	if len(errs) != 0 || out != want.String() {
		t.Fatalf("Contest over the generated stream differs; errors %v", errs)
	}
}

func TestTerritoryAppendAllocs(t *testing.T) {
	p := mustProblem(t, "territory")
	rng := rand.New(rand.NewPCG(11, 12))
	unit := []byte(territoryLayout(rng, territoryGenCase(rng)))
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

func BenchmarkTerritory(b *testing.B) {
	// Canonical units, as the framer emits them, of ends of random 19x19 games.
	rng := rand.New(rand.NewPCG(13, 14))
	p := mustProblem(b, "territory")
	units := make([][]byte, 64)
	for i := range units {
		_, g := boardGenGame(rng, 19, 250)
		var tok []string
		var nb, nw int
		var bl, wh []string
		for r := range g {
			for c := range g[r] {
				pair := []string{strconv.Itoa(r + 1), strconv.Itoa(c + 1)}
				switch g[r][c] {
				case 'B':
					bl, nb = append(bl, pair...), nb+1
				case 'W':
					wh, nw = append(wh, pair...), nw+1
				}
			}
		}
		tok = append([]string{"19", strconv.Itoa(nb), strconv.Itoa(nw)}, append(bl, wh...)...)
		units[i] = []byte(strings.Join(tok[:3], " ") + "\n" + strings.Join(bl, " ") + "\n" + strings.Join(wh, " ") + "\n")
	}
	// And sparse ones: 19x19 boards with a dozen stones.
	sparse := make([][]byte, 64)
	for i := range sparse {
		g := boardNewGrid(19)
		for k := 0; k < 12; k++ {
			g[rng.IntN(19)][rng.IntN(19)] = "BW"[k%2]
		}
		var bl, wh []string
		for r := range g {
			for c := range g[r] {
				pair := []string{strconv.Itoa(r + 1), strconv.Itoa(c + 1)}
				switch g[r][c] {
				case 'B':
					bl = append(bl, pair...)
				case 'W':
					wh = append(wh, pair...)
				}
			}
		}
		sparse[i] = []byte("19 " + strconv.Itoa(len(bl)/2) + " " + strconv.Itoa(len(wh)/2) + "\n" + strings.Join(bl, " ") + "\n" + strings.Join(wh, " ") + "\n")
	}
	for _, set := range []struct {
		name  string
		units [][]byte
	}{{"", units}, {"sparse-", sparse}} {
		b.Run(set.name+"fast", func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]byte, 0, 64)
			for i := 0; b.Loop(); i++ {
				dst, _ = p.Append(dst[:0], set.units[i%len(set.units)])
			}
		})
		b.Run(set.name+"simple", func(b *testing.B) {
			b.ReportAllocs()
			strs := make([]string, len(set.units))
			for i, u := range set.units {
				strs[i] = string(u)
			}
			for i := 0; b.Loop(); i++ {
				territorySimple(strs[i%len(strs)])
			}
		})
	}
}

func FuzzTerritoryContest(f *testing.F) {
	f.Add([]byte("1 1 0\n1 1\n\n2 0 1\n\n1 1\n0\n"))
	f.Fuzz(func(t *testing.T, in []byte) { fuzzContest(t, "territory", in) })
}

func FuzzTerritoryUnit(f *testing.F) {
	f.Add([]byte("5 12 4\n1 1 1 2 1 3 2 1 2 3 3 1 3 3 4 1 4 3 5 1 5 2 5 3\n1 4 2 4 3 4 3 5\n"))
	f.Fuzz(func(t *testing.T, unit []byte) {
		fuzzUnit(t, "territory", unit)
		got, err := mustProblem(t, "territory").Append(nil, unit)
		simple, ok := territorySimple(string(unit))
		if (err == nil) != ok || string(got) != simple {
			t.Fatalf("Append %q, %v; simple %q, %v", got, err, simple, ok)
		}
	})
}

// FuzzTerritoryFramer checks that every unit the framer emits is valid: Append
// accepts it and the simple implementation agrees.
func FuzzTerritoryFramer(f *testing.F) {
	f.Add([]byte("1 1 0 1 1 2 0 1 1 1 5 12 4 1 1 1 2 1 3 2 1 2 3 3 1 3 3 4 1 4 3 5 1 5 2 5 3 1 4 2 4 3 4 3 5 0"))
	f.Fuzz(func(t *testing.T, in []byte) {
		p := mustProblem(t, "territory")
		fr := p.NewFramer()
		var frames []engine.Frame
		for _, line := range strings.Split(string(in), "\n") {
			frames = fr.Feed(frames[:0], []byte(line))
			for _, f := range frames {
				if f.Err != nil {
					continue
				}
				got, err := p.Append(nil, f.Unit)
				simple, ok := territorySimple(string(f.Unit))
				if err != nil || !ok || string(got) != simple {
					t.Fatalf("framed unit %q: Append %q, %v; simple %q", f.Unit, got, err, simple)
				}
			}
		}
	})
}
