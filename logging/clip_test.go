package logging

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	if got := Clip("short"); got != "short" {
		t.Errorf("Clip(short) = %q", got)
	}
	exact := strings.Repeat("a", MaxValue)
	if got := Clip(exact); got != exact {
		t.Errorf("a value of MaxValue bytes was cut: %q", got)
	}
	if got, want := Clip(strings.Repeat("b", 1<<20)), strings.Repeat("b", MaxValue)+"…(1048576 bytes)"; got != want {
		t.Errorf("Clip(1 MB) = %q, want %q", got, want)
	}
}

// TestClipValues: whatever the value, the clipped one is at most MaxValue bytes and
// a note, valid UTF-8 where the value was.
func TestClipValues(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", MaxValue), strings.Repeat("€", MaxValue), "\xff\xfe" + strings.Repeat("\x00", 200)} {
		got := Clip(s)
		if len(got) > MaxValue+len("…(1000 bytes)") {
			t.Errorf("Clip of %d bytes is %d bytes", len(s), len(got))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Errorf("Clip(%q) = %q: not valid UTF-8", s, got)
		}
	}
}

func TestClipQuoted(t *testing.T) {
	long := strings.Repeat("y", 3000)
	for in, want := range map[string]string{
		"plain":                             "plain",
		`a "b" c`:                           `a "b" c`,
		`User "` + long + `" - x`:           `User "` + long[:MaxValue] + `…(3000 bytes)" - x`,
		`"` + long:                          `"` + long[:MaxValue] + `…(3000 bytes)`,
		`s "\"` + long + `\"" "b"`:          `s "\"` + long[:MaxValue-2] + `…(3004 bytes)" "b"`,
		`e "` + strings.Repeat(`\x00`, 100): `e "` + strings.Repeat(`\x00`, 31) + `…(400 bytes)`,
	} {
		if got := ClipQuoted(in); got != want {
			t.Errorf("ClipQuoted(%.60q...) = %.300q, want %.300q", in, got, want)
		}
	}
	if got := ClipQuoted(strings.Repeat(`"a" `, 1000)); len(got) > MaxLine+20 {
		t.Errorf("a line of many short quoted values: %d bytes, want at most %d", len(got), MaxLine+20)
	}
}
