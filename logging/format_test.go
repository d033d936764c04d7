package logging

import (
	"fmt"
	"strings"
	"testing"
)

// TestSprintf: nats-server's own formats are expanded as fmt.Sprintf does; a
// format with a client's wide verbs in it is written as it is, its arguments after.
func TestSprintf(t *testing.T) {
	for _, c := range []struct {
		format string
		v      []any
		want   string
	}{
		{"%s - cid:%d - Client Error %s", []any{"127.0.0.1:5", 7, "'x'"}, "127.0.0.1:5 - cid:7 - Client Error 'x'"},
		{"Flush took %.3fs with %d chunks of %d total bytes.", []any{1.5, 3, 100}, "Flush took 1.500s with 3 chunks of 100 total bytes."},
		{"%[2]d %[1]s %0100d", []any{"a", 2, 3}, fmt.Sprintf("%[2]d %[1]s %0100d", "a", 2, 3)},
		{"100%% of %-10s", []any{"it"}, "100% of it        "},
		{`1.2.3.4:5 - cid:9 - "%99999[1]s%99999[1]s" - Client Error %s`, []any{"'x'"}, `1.2.3.4:5 - cid:9 - "%99999[1]s%99999[1]s" - Client Error %s 'x'`},
		{`"%.99999[1]s" - %s`, []any{"a"}, `"%.99999[1]s" - %s a`},
		{`"%*[1]d" - %d`, []any{5}, `"%*[1]d" - %d 5`},
		{strings.Repeat("%d", 40), []any{1}, strings.Repeat("%d", 40) + " 1"},
		{`"%99999s" - Client connection closed`, nil, `"%99999s" - Client connection closed`},
	} {
		if got := Sprintf(c.format, c.v...); got != c.want {
			t.Errorf("Sprintf(%q, %v) = %q\nwant %q", c.format, c.v, got, c.want)
		}
	}
}

// FuzzSprintf: whatever a client puts in a format, the line is at most a bounded
// multiple of what it was given: maxVerbs verbs of maxVerbWidth bytes each.
func FuzzSprintf(f *testing.F) {
	for _, s := range []string{"%s", "%99999[1]s", "%[1]*d", "%.5000f", "%0100d%0100d", strings.Repeat("%9[1]s", 100), "%%%%", "%[", "%[9999999999]d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		format := "1.2.3.4:5 - cid:9 - \"" + name + "\" - Client Error %s"
		arg := "'x'"
		got := Sprintf(format, arg)
		if bound := len(format) + len(arg) + maxVerbs*(maxVerbWidth+64) + 64; len(got) > bound {
			t.Fatalf("a format of %d bytes made a line of %d (bound %d): %q", len(format), len(got), bound, name)
		}
	})
}
