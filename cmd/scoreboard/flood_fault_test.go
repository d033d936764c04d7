package main

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/samples"
)

// floodUnits are the valid units of a problem and their answers: the sample's units
// as the framer cuts them; for othello, whose framer keeps the game, the whole sample
// session (count, games, commands) is one unit.
func floodUnits(t testing.TB, problem string) (units [][]byte, answers []string) {
	t.Helper()
	p, _ := engine.Lookup(problem)
	in, out := samples.Pair(t, samples.Case{Problem: problem, File: problem})
	if problem == "othello" {
		return [][]byte{in}, []string{string(out)}
	}
	fr := p.NewFramer()
	var frames []engine.Frame
	for line := range bytes.Lines(in) {
		frames = fr.Feed(frames, bytes.TrimRight(line, "\r\n"))
		for _, f := range frames {
			if f.Err != nil {
				t.Fatalf("%s sample: %v", problem, f.Err)
			}
			ans, err := p.Append(nil, f.Unit)
			if err != nil {
				t.Fatalf("%s sample unit: %v", problem, err)
			}
			units = append(units, bytes.Clone(f.Unit))
			answers = append(answers, string(ans))
		}
		frames = frames[:0]
	}
	return units, answers
}

// floodHeaders are hostile headers of each problem: sizes and counts out of bounds,
// overflowing numbers, negative ones.
var floodHeaders = map[string][]string{
	"goscore": {"", " @ @ @ @", "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", " X X X X X X X X X X X X X X X X X X X"},
	"replay":  {"19 10001", "21 5", "2147483647 1", "-3 2", "7 99999999999999999999", "4 1"},
	// A territory case is tokens, whatever the lines: a header whose counts are in
	// bounds claims that many coordinates, so it comes with them.
	"territory": {"20 1 1\n1 1\n2 2", "19 400 400", "5 99999999999 1", "-1 0 0", "99999999999999999999 1 1\n1 1\n\n2 2"},
	"othello":   {"99999999999", "-5", "1000001", "0x10"},
	"capture":   {"5 25001", "2147483648 1", "99999999999999999999 99999999999999999999", "5 -1", "0 1", "-7 3"},
}

// floodGarbage returns garbage of kind k (0..5) for problem p: random bytes,
// an overlong line, a hostile header, NUL bytes, invalid UTF-8, or nothing (the next
// unit then comes with CRLF mixed with LF). It always ends in "\n".
func floodGarbage(r *rand.Rand, p engine.Problem, k int) string {
	switch k {
	case 0: // random bytes, but no line that could start a unit
		b := make([]byte, 1+r.IntN(300))
		for i := range b {
			b[i] = byte(r.IntN(256))
			// A port takes a lone "\r" as a line end, the contest's text does not:
			// the garbage keeps to bytes both cut alike.
			if b[i] == '\r' {
				b[i] = '#'
			}
		}
		var s strings.Builder
		for line := range strings.Lines(string(b)) {
			// A line starting with a digit, a blank or a move could begin a unit.
			s.WriteString("#" + strings.TrimRight(line, "\n") + "\n")
		}
		return s.String()
	case 1: // an overlong line
		return strings.Repeat("7 ", p.Limits().MaxLine/2+1+r.IntN(100)) + "\n"
	case 2: // a hostile header
		h := floodHeaders[p.Name()]
		return h[r.IntN(len(h))] + "\n"
	case 3: // NUL bytes
		return "\x00\x00" + strings.Repeat("\x00 ", r.IntN(50)) + "\n"
	case 4: // invalid UTF-8
		return "\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc\n"
	}
	return ""
}

// floodStream interleaves garbage of every kind with the valid units of problem,
// rounds times; valid units go out with CRLF on some lines.
func floodStream(t testing.TB, problem string, rounds int, seed uint64) (in []byte, want []string) {
	t.Helper()
	p, _ := engine.Lookup(problem)
	units, answers := floodUnits(t, problem)
	r := rand.New(rand.NewPCG(seed, 6))
	var b bytes.Buffer
	for i := range rounds {
		g := floodGarbage(r, p, i%6)
		b.WriteString(g)
		u := units[i%len(units)]
		for line := range bytes.Lines(u) {
			if r.IntN(2) == 0 {
				line = append(bytes.TrimSuffix(bytes.Clone(line), []byte("\n")), '\r', '\n')
			}
			b.Write(line)
		}
		want = append(want, answers[i%len(units)])
	}
	return b.Bytes(), want
}

// Garbage floods between the valid units of every problem, through `run --port -`:
// every valid unit is answered right and in order, each garbage block gives errors
// and no answer, nothing is answered twice.
func TestFaultGarbageFloods(t *testing.T) {
	const rounds = 120
	for _, problem := range engine.Names() {
		t.Run(problem, func(t *testing.T) {
			in, want := floodStream(t, problem, rounds, 1)
			// The stream's design first: the contest filter must agree.
			p, _ := engine.Lookup(problem)
			var ref bytes.Buffer
			refBad, err := engine.Contest(p, bytes.NewReader(in), &ref, func(error) {})
			if err != nil {
				t.Fatal(err)
			}
			if ref.String() != strings.Join(want, "") {
				t.Fatalf("the contest filter does not answer the valid units of the stream: %s",
					faulttest.Tally("contest-"+problem, want, ref.String()))
			}
			code, out, errs := runLocked(t, string(in), "run", "--nats-listen", "off", "--port", "-",
				"--problem", problem, "--error-line", "--log-level", "error")
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, errs)
			}
			c := faulttest.Tally("garbage-flood-"+problem, want, out)
			c.Check(t)
			// Each bad unit has its error line, as the contest filter reports it.
			if c.Errors != refBad || refBad < rounds/2 {
				t.Errorf("%d error lines; the contest filter reported %d bad units, for %d garbage blocks", c.Errors, refBad, rounds*5/6)
			}
		})
	}
}
