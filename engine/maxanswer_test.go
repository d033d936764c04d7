package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
)

// No answer is longer than its problem's MaxAnswer: every sample's units, and the
// longest answers the bounds allow.
func TestMaxAnswer(t *testing.T) {
	check := func(p engine.Problem, unit []byte, what string) {
		t.Helper()
		ans, err := p.Append(nil, unit)
		if err != nil {
			t.Fatalf("%s %s: %v", p.Name(), what, err)
		}
		if max := p.Limits().MaxAnswer; len(ans) > max || max <= 0 {
			t.Errorf("%s %s: answer %q is %d bytes, MaxAnswer %d", p.Name(), what, ans, len(ans), max)
		}
	}
	for _, c := range samples.Cases {
		p := mustProblem(t, c.Problem)
		in, _ := samples.Pair(t, c)
		fr := p.NewFramer()
		var frames []engine.Frame
		for line := range bytes.Lines(in) {
			for _, f := range fr.Feed(frames[:0], bytes.TrimRight(line, "\r\n")) {
				if f.Err == nil {
					check(p, f.Unit, c.File)
				}
			}
		}
	}
	// A board all black: "361 0".
	full := "\n" + strings.Repeat(strings.Repeat(" @", 19)+"\n", 19)
	check(mustProblem(t, "goscore"), []byte(full), "all black")
	// One black stone on 19x19: "Black wins by 361".
	check(mustProblem(t, "territory"), []byte("19 1 0\n1 1\n"), "one stone")
	if got := mustProblem(t, "territory").Limits().MaxAnswer; got != len("White wins by 361\n") {
		t.Errorf("territory MaxAnswer %d", got)
	}
}
