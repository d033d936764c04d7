package demo

import (
	"bytes"
	"testing"

	"github.com/goclub/scoreboard/internal/samples"
)

// The boards play the repository's samples: the embedded copies equal them.
func TestSamplesEqualTheRepositorys(t *testing.T) {
	for name, got := range map[string][]byte{"goscore.in": goscore, "othello.in": othello} {
		if !bytes.Equal(got, samples.Read(t, name)) {
			t.Errorf("demo/samples/%s differs from testdata/samples/%s", name, name)
		}
	}
}
