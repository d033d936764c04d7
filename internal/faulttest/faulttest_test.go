package faulttest

import "testing"

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
		if got != c.want {
			t.Errorf("Tally(%q) = %+v, want %+v", c.got, got, c.want)
		}
	}
}
