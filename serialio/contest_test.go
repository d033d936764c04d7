package serialio_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/serialio"
)

// scanContest answers in as the daemon does, unit by unit through a Scanner, and
// returns the output and how many errors it met (dropped lines and bad units).
func scanContest(t *testing.T, p engine.Problem, in []byte) ([]byte, int) {
	t.Helper()
	bad := 0
	s := serialio.NewScanner(p, func(error) { bad++ })
	s.Reset(bytes.NewReader(in))
	var out []byte
	for {
		u, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out, bad
		}
		if err != nil {
			t.Fatal(err)
		}
		if u.Err != nil {
			bad++
			continue
		}
		if len(u.Data) > p.Limits().MaxUnit {
			t.Fatalf("unit of %d bytes, limit %d", len(u.Data), p.Limits().MaxUnit)
		}
		if out, err = p.Append(out, u.Data); err != nil {
			bad++
		}
	}
}

var contestProblems = []string{"goscore", "othello", "replay", "territory", "capture"}

// The daemon's framing of a stream is the contest's: the same answers and the same
// number of errors as engine.Contest, for any input, once its line ends are the
// contest's: the scanner takes a lone "\r" as a line end too (normalEnds), which
// the contest's text does not know.
func FuzzScannerMatchesContest(f *testing.F) {
	for _, name := range []string{"goscore", "othello"} {
		if _, ok := engine.Lookup(name); !ok {
			f.Skipf("problem %s is not registered", name)
		}
	}
	// Samples with every line end made "\r", made "\n\r", and with the ends mixed.
	for i, name := range []string{"goscore", "othello", "replay", "territory", "capture"} {
		p, ok := engine.Lookup(name)
		if !ok {
			continue
		}
		in := samples.Read(f, p.Name()+".in")
		f.Add(uint8(i), bytes.ReplaceAll(in, []byte("\n"), []byte("\r")))
		mixed := bytes.Replace(bytes.Replace(in, []byte("\n"), []byte("\r"), 3), []byte("\n"), []byte("\r\n"), 2)
		f.Add(uint8(i), mixed)
		f.Add(uint8(i), bytes.ReplaceAll(in, []byte("\n"), []byte("\n\r"))) // LF CR (review F14)
	}
	f.Fuzz(func(t *testing.T, which uint8, in []byte) {
		name := contestProblems[int(which)%len(contestProblems)]
		p, ok := engine.Lookup(name)
		if !ok {
			t.Skipf("problem %s is not registered", name)
		}
		var want bytes.Buffer
		reported := 0
		bad, err := engine.Contest(p, bytes.NewReader(normalEnds(in)), &want, func(error) { reported++ })
		if err != nil {
			t.Fatal(err)
		}
		got, gotBad := scanContest(t, p, in)
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%s: scanner output %q, contest output %q", name, got, want.Bytes())
		}
		if gotBad != reported {
			t.Fatalf("%s: scanner met %d errors, contest reported %d (%d bad units)", name, gotBad, reported, bad)
		}
	})
}
