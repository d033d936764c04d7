package faulttest

import (
	"testing"

	"github.com/goclub/scoreboard/engine"
)

func TestTally(t *testing.T) {
	want := []string{"1 2\n", "3 4\n", "5 6\n"}
	for _, c := range []struct {
		got  string
		want Counts
	}{
		{"1 2\n3 4\n5 6\n", Counts{Sent: 3, Right: 3}},
		{"1 2\nerror: x\n3 4\n5 6\n", Counts{Sent: 3, Right: 3, Errors: 1}},
		{"1 2\n5 6\n", Counts{Sent: 3, Right: 2, Lost: 1}},
		{"1 2\n1 2\n3 4\n5 6\n", Counts{Sent: 3, Right: 3, Twice: 1}},
		{"1 2\n3 4\n5 6\n5 6\n", Counts{Sent: 3, Right: 3, Twice: 1}},
		{"1 2\n9 9\n3 4\n5 6\nerror: y\n", Counts{Sent: 3, Right: 3, Wrong: 1, Errors: 1}},
		{"", Counts{Sent: 3, Lost: 3}},
	} {
		got := Tally("", want, c.got)
		if (got.First == "") != (got.Right == got.Sent && got.Wrong+got.Twice+got.Lost == 0) {
			t.Errorf("Tally(%q): First = %q", c.got, got.First)
		}
		got.First = ""
		if got != c.want {
			t.Errorf("Tally(%q) = %+v, want %+v", c.got, got, c.want)
		}
	}
}

// Every board's answer is its own, and the engine agrees with it.
func TestGoscoreBoardUnique(t *testing.T) {
	seen := map[string]int{}
	for k := range 180 * 180 {
		_, a := GoscoreBoard(k)
		if j, dup := seen[a]; dup {
			t.Fatalf("boards %d and %d both answer %q", j, k, a)
		}
		seen[a] = k
	}
	p, _ := engine.Lookup("goscore")
	for _, k := range []int{0, 1, 18, 19, 179, 180, 181, 180*180 - 1} {
		u, a := GoscoreBoard(k)
		if got, err := p.Append(nil, []byte(u)); err != nil || string(got) != a {
			t.Errorf("board %d: the engine answers %q, %v; want %q", k, got, err, a)
		}
	}
}
