package engine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// samplesDir holds the seed samples restored to their real format; it lives in the
// shared folder beside the repository.
const samplesDir = "../../shared/samples"

// sampleCases pairs each sample input with its problem.
var sampleCases = []struct{ problem, file string }{
	{"goscore", "goscore"},
	{"replay", "replay"},
	{"territory", "territory"},
	{"territory", "territory-one-line"},
	{"othello", "othello"},
	{"capture", "capture"},
}

func TestSamples(t *testing.T) {
	for _, c := range sampleCases {
		t.Run(c.file, func(t *testing.T) {
			p, ok := engine.Lookup(c.problem)
			if !ok {
				t.Fatalf("problem %q is not registered", c.problem)
			}
			in, err := os.ReadFile(filepath.Join(samplesDir, c.file+".in"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(samplesDir, c.file+".out"))
			if err != nil {
				t.Fatal(err)
			}
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
