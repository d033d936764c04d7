package engine

import (
	"slices"
	"testing"
)

func TestOthelloBoardAfter(t *testing.T) {
	start := "--------\n--------\n--------\n---WB---\n---BW---\n--------\n--------\n--------\n"
	for _, c := range []struct {
		name, unit string
		want       []string
	}{
		{"move", start + "B\nM34\n", []string{"--------", "--------", "---B----", "---BB---", "---BW---", "--------", "--------", "--------"}},
		{"list", start + "B\nL\n", []string{"--------", "--------", "--------", "---WB---", "---BW---", "--------", "--------", "--------"}},
		{"illegal move", start + "B\nM11\n", []string{"--------", "--------", "--------", "---WB---", "---BW---", "--------", "--------", "--------"}},
	} {
		got, err := OthelloBoardAfter([]byte(c.unit))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	if _, err := OthelloBoardAfter([]byte("B\nL\n")); err == nil {
		t.Error("a unit without its board: no error")
	}
}
