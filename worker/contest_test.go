package worker

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// checkContest runs in through contest and through engine.Contest, which is the
// reference: the same output, the same errors, the same first error.
func checkContest(t *testing.T, c *contest, in []byte) {
	t.Helper()
	var want bytes.Buffer
	var errs []error
	_, err := engine.Contest(c.p, bytes.NewReader(in), &want, func(err error) { errs = append(errs, err) })
	if err != nil {
		t.Fatalf("engine.Contest: %v", err)
	}
	if err := c.run(in); err != nil {
		t.Fatalf("%s: run: %v", c.p.Name(), err)
	}
	if !bytes.Equal(c.out, want.Bytes()) {
		t.Errorf("%s: output %q, engine.Contest gives %q", c.p.Name(), c.out, want.Bytes())
	}
	// engine.Contest reports an overlong line without counting it as a bad unit;
	// contest counts every error it reports.
	if c.bad != len(errs) {
		t.Errorf("%s: %d errors, engine.Contest reports %d", c.p.Name(), c.bad, len(errs))
	}
	if len(errs) > 0 && !sameError(c.first, errs[0]) {
		t.Errorf("%s: first error %v, engine.Contest reports %v", c.p.Name(), c.first, errs[0])
	}
}

func TestContestMatchesEngine(t *testing.T) {
	files, _ := filepath.Glob("../testdata/samples/*.in")
	if len(files) == 0 {
		t.Fatal("no samples in ../testdata/samples")
	}
	for _, name := range engine.Names() {
		p, _ := engine.Lookup(name)
		c := &contest{p: p, fr: p.NewFramer()}
		for _, f := range files {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// Every sample through every problem: the others' samples are bad input.
			checkContest(t, c, in)
			checkContest(t, c, bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n")))
			checkContest(t, c, bytes.TrimSuffix(in, []byte("\n")))
			long := append([]byte(strings.Repeat("x", p.Limits().MaxLine+1)+"\n"), in...)
			checkContest(t, c, long)
		}
		checkContest(t, c, nil)
		checkContest(t, c, []byte("\n\n\x00\r"))
	}
}

// FuzzContest checks the in-memory contest against engine.Contest on any input, for
// every problem; the first byte picks the problem.
func FuzzContest(f *testing.F) {
	contests := map[string]*contest{}
	for _, name := range engine.Names() {
		p, _ := engine.Lookup(name)
		contests[name] = &contest{p: p, fr: p.NewFramer()}
	}
	names := engine.Names()
	f.Fuzz(func(t *testing.T, pick byte, in []byte) {
		if len(names) == 0 {
			t.Skip("no problems registered")
		}
		checkContest(t, contests[names[int(pick)%len(names)]], in)
	})
}

// sameError compares two errors' text, except that an overlong line only needs the
// same line number: contest knows its exact length, a stream reader may not.
func sameError(got, want error) bool {
	if got == nil {
		return false
	}
	var g, w *engine.InputError
	if errors.As(got, &g) && errors.As(want, &w) && strings.HasPrefix(g.Msg, "line too long") && strings.HasPrefix(w.Msg, "line too long") {
		return g.Line == w.Line && g.Problem == w.Problem
	}
	return got.Error() == want.Error()
}
