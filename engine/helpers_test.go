package engine_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// mustProblem returns the registered problem name, or stops the test.
func mustProblem(t testing.TB, name string) engine.Problem {
	t.Helper()
	p, ok := engine.Lookup(name)
	if !ok {
		t.Fatalf("problem %q is not registered", name)
	}
	return p
}

// runContest runs the contest function of problem name on in and returns its output
// and the bad units it reported, in order.
func runContest(t testing.TB, name, in string) (string, []error) {
	t.Helper()
	var out bytes.Buffer
	var errs []error
	bad, err := engine.Contest(mustProblem(t, name), strings.NewReader(in), &out, func(err error) {
		errs = append(errs, err)
	})
	if err != nil {
		t.Fatalf("Contest(%s): %v", name, err)
	}
	var inputErrs int
	for _, e := range errs {
		var ie *engine.InputError
		if !errors.As(e, &ie) {
			t.Fatalf("Contest(%s) reported %T %v, want *engine.InputError", name, e, e)
		}
		if ie.Problem != name {
			t.Fatalf("Contest(%s) reported an error of problem %q: %v", name, ie.Problem, e)
		}
		if !errors.Is(e, engine.ErrLineTooLong) {
			inputErrs++
		}
	}
	if bad > len(errs) {
		t.Fatalf("Contest(%s) counted %d bad units but reported %d errors", name, bad, len(errs))
	}
	return out.String(), errs
}

// fuzzContest is the body every problem's stream fuzz target shares: any byte string
// gives output and errors, never a panic, and the errors name a line inside the input.
func fuzzContest(t *testing.T, name string, in []byte) {
	p := mustProblem(t, name)
	lines := bytes.Count(in, []byte("\n")) + 1
	var out bytes.Buffer
	_, err := engine.Contest(p, bytes.NewReader(in), &out, func(err error) {
		var ie *engine.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("reported %T %v, want *engine.InputError", err, err)
		}
		if ie.Line < 0 || ie.Line > lines {
			t.Fatalf("error names line %d of a %d-line input: %v", ie.Line, lines, err)
		}
	})
	if err != nil {
		t.Fatalf("Contest: %v", err)
	}
}

// fuzzUnit is the body every problem's unit fuzz target shares: Append and Solve agree
// on any byte string, and neither panics.
func fuzzUnit(t *testing.T, name string, unit []byte) {
	p := mustProblem(t, name)
	text, err := p.Append(nil, unit)
	ans, err2 := p.Solve(unit)
	if (err == nil) != (err2 == nil) {
		t.Fatalf("Append err %v, Solve err %v", err, err2)
	}
	if err != nil {
		var ie *engine.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("Append returned %T %v, want *engine.InputError", err, err)
		}
		return
	}
	if got := ans.AppendText(nil); !bytes.Equal(got, text) {
		t.Fatalf("Solve text %q, Append text %q", got, text)
	}
}
