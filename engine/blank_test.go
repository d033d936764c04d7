package engine_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
)

// Every problem takes the same lines for blank (engine/text.go). These tables put
// each kind of blank line wherever a problem allows one, in its framer and in its
// unit parser, so that one problem cannot come to read a blank line differently.

// blankLines are blank for every problem: ASCII white space, as C's isspace has it.
var blankLines = []string{"", " ", "\t", "\r", " \r", "\v", "\f", "\r\r", " \t\v\f\r"}

// notBlankLines are not blank for any problem: white space of other encodings
// (U+00A0, U+3000, U+2003 then CR) and a NUL.
var notBlankLines = []string{"\u00a0", "\u3000", "\u2003\r", "\x00"}

// blankSlots says, for each sample, before which of its lines a problem's framer
// takes extra blank lines (a slot at len(lines) is the end of the input), and
// whether the sample's own empty lines are separators to vary too.
var blankSlots = map[string]struct {
	before    func(lines []string, i int) bool
	varyEmpty bool
}{
	// Before each board's spacer, which is itself blank.
	"goscore": {func(l []string, i int) bool { return i == len(l) || l[i] == "" }, true},
	// Before a game's header (a placement has parentheses), not inside a game.
	"replay": {func(l []string, i int) bool { return i == len(l) || !strings.Contains(l[i], "(") }, false},
	// Anywhere: territory reads tokens.
	"territory":          {func([]string, int) bool { return true }, true},
	"territory-one-line": {func([]string, int) bool { return true }, true},
	// Before the count, before a board's first row (after the count or a Q), at the end.
	"othello": {func(l []string, i int) bool { return i <= 1 || i == len(l) || l[i-1] == "Q" }, false},
	// Anywhere: blank lines inside a game are skipped too.
	"capture": {func([]string, int) bool { return true }, true},
}

// withBlank returns the sample text with bl in every slot, and in place of its empty
// lines if they vary.
func withBlank(in []byte, file, bl string) []byte {
	slots := blankSlots[file]
	lines := strings.Split(strings.TrimSuffix(string(in), "\n"), "\n")
	var out []string
	for i := 0; i <= len(lines); i++ {
		if slots.before(lines, i) {
			out = append(out, bl)
		}
		if i == len(lines) {
			break
		}
		if lines[i] == "" && slots.varyEmpty {
			out = append(out, bl)
		} else {
			out = append(out, lines[i])
		}
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// TestBlankLinesContest: each sample with blank lines of every kind in every place
// its framer allows gives the sample's output, and no error, on the bulk path and the
// line path alike; with a line that is not blank there, it gives errors.
func TestBlankLinesContest(t *testing.T) {
	for _, c := range samples.Cases {
		if _, ok := blankSlots[c.File]; !ok {
			t.Fatalf("sample %s has no blank slots", c.File)
		}
		p := mustProblem(t, c.Problem)
		in, want := samples.Pair(t, c)
		for _, bl := range append(append([]string{}, blankLines...), notBlankLines...) {
			blank := slices.Contains(blankLines, bl)
			text := withBlank(in, c.File, bl)
			for _, path := range []struct {
				name string
				run  func(engine.Problem, *bytes.Reader, *bytes.Buffer, func(error)) (int, error)
			}{
				{"bulk", func(p engine.Problem, r *bytes.Reader, w *bytes.Buffer, f func(error)) (int, error) {
					return engine.Contest(p, r, w, f)
				}},
				{"lines", func(p engine.Problem, r *bytes.Reader, w *bytes.Buffer, f func(error)) (int, error) {
					return engine.ContestLines(p, r, w, f)
				}},
			} {
				var out bytes.Buffer
				var errs []error
				bad, err := path.run(p, bytes.NewReader(text), &out, func(err error) { errs = append(errs, err) })
				if err != nil {
					t.Fatalf("%s %s %q: %v", c.File, path.name, bl, err)
				}
				switch {
				case blank && (bad != 0 || len(errs) != 0 || !bytes.Equal(out.Bytes(), want)):
					t.Errorf("%s %s, blank line %q: bad=%d errs=%v\n got: %q\nwant: %q\n  in: %q",
						c.File, path.name, bl, bad, errs, out.Bytes(), want, text)
				case !blank && bad == 0:
					t.Errorf("%s %s, line %q is not blank, but no unit failed: %q\n  in: %q",
						c.File, path.name, bl, out.Bytes(), text)
				}
			}
		}
	}
}

// blankInUnit puts bl where a problem's unit parser allows a blank line: the spacer
// of goscore, the separator before an othello board and the lines after its command,
// anywhere in capture and territory. Replay's parser takes none: a unit is exactly
// its header and placements, and its framer drops blank lines between games.
var blankInUnit = map[string]func(unit []byte, bl string) []byte{
	"goscore": func(u []byte, bl string) []byte {
		_, rows, _ := bytes.Cut(u, []byte("\n"))
		return append([]byte(bl+"\n"), rows...)
	},
	"othello": func(u []byte, bl string) []byte {
		return []byte(bl + "\n" + strings.TrimPrefix(string(u), "\n") + bl + "\n" + bl + "\n")
	},
	"capture":   everyLine,
	"territory": everyLine,
}

func everyLine(u []byte, bl string) []byte {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(u), "\n") {
		b.WriteString(bl + "\n" + l)
	}
	b.WriteString(bl + "\n")
	return []byte(b.String())
}

// TestBlankLinesUnit: a unit with a blank line of any kind where its parser allows
// one answers as with an empty line there; with a line that is not blank, it fails.
func TestBlankLinesUnit(t *testing.T) {
	for _, c := range samples.Cases {
		insert, ok := blankInUnit[c.Problem]
		if !ok {
			continue
		}
		p := mustProblem(t, c.Problem)
		for k, unit := range samples.Units(t, c.Problem, c.File+".in") {
			want, err := p.Append(nil, insert(unit, ""))
			if err != nil {
				t.Fatalf("%s unit %d with empty lines: %v\n%q", c.File, k, err, insert(unit, ""))
			}
			for _, bl := range blankLines {
				u := insert(unit, bl)
				got, err := p.Append(nil, u)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s unit %d, blank line %q: %q, %v; want %q\nunit: %q", c.File, k, bl, got, err, want, u)
				}
				ans, err := p.Solve(u)
				if err != nil || !bytes.Equal(ans.AppendText(nil), want) {
					t.Errorf("%s unit %d, blank line %q: Solve %v, want %q", c.File, k, bl, err, want)
				}
			}
			for _, bl := range notBlankLines {
				u := insert(unit, bl)
				if got, err := p.Append(nil, u); err == nil {
					t.Errorf("%s unit %d: line %q is not blank, but the unit answers %q\nunit: %q", c.File, k, bl, got, u)
				}
			}
		}
	}
}
