package web

import (
	"strings"
	"testing"

	"github.com/goclub/scoreboard/bus"
)

// FuzzPortKey: a port key read from outside is a token or two, reads back as
// itself, and says what the hand-written split it replaced said.
func FuzzPortKey(f *testing.F) {
	for _, s := range []string{"hall", "north.hall", "a.b.c", ".hall", "hall.", "", "Hall", "north.hall-2_x", "a..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k, ok := parsePortKey(key)
		club, port, two := strings.Cut(key, ".")
		want := bus.ValidToken(key)
		if two {
			want = bus.ValidToken(club) && bus.ValidToken(port)
		}
		if ok != want {
			t.Fatalf("parsePortKey(%q) = %+v, %v; the split by hand said %v", key, k, ok, want)
		}
		if ok && (k.String() != key || splitPortKey(key) != k) {
			t.Fatalf("parsePortKey(%q) = %+v, which reads back as %q", key, k, k.String())
		}
	})
}
