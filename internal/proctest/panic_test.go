package proctest

import "testing"

// A panic or a fatal runtime error is found at the start of a line of the output,
// not inside a log line that quotes the word.
func TestPanicAt(t *testing.T) {
	for _, c := range []struct {
		out  string
		want int
	}{
		{"panic: runtime error\ngoroutine 1", 0},
		{"{\"level\":\"info\"}\npanic: runtime error: invalid memory address", 17},
		{"started\nfatal error: concurrent map writes\n", 8},
		{`{"message":"recovered, no panic: here"}` + "\n", -1},
		{"", -1},
	} {
		if got := panicAt(c.out); got != c.want {
			t.Errorf("panicAt(%q) = %d, want %d", c.out, got, c.want)
		}
	}
}
