package engine_test

import (
	"bytes"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
)

// TestSamples: every seed sample, restored to its real format, through the contest
// function, byte-exact.
func TestSamples(t *testing.T) {
	for _, c := range samples.Cases {
		t.Run(c.File, func(t *testing.T) {
			p := mustProblem(t, c.Problem)
			in, want := samples.Pair(t, c)
			var out bytes.Buffer
			bad, err := engine.Contest(p, bytes.NewReader(in), &out, func(err error) {
				t.Errorf("unexpected bad unit: %v", err)
			})
			if err != nil || bad != 0 {
				t.Fatalf("Contest: bad=%d err=%v", bad, err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("output differs\n got: %q\nwant: %q", out.Bytes(), want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	want := []string{"capture", "goscore", "othello", "replay", "territory"}
	got := engine.Names()
	if len(got) != len(want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Names() = %v, want %v", got, want)
		}
	}
}
