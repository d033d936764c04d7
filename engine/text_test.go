package engine

import (
	"bytes"
	"testing"
)

// TestTextBlank pins the one blank-line rule (the problems' tables are in
// blank_test.go): ASCII white space but "\n", and a dropped line is not blank.
func TestTextBlank(t *testing.T) {
	for _, c := range []struct {
		line  []byte
		blank bool
	}{
		{nil, false}, // a dropped line
		{[]byte{}, true},
		{[]byte(" "), true},
		{[]byte("\t"), true},
		{[]byte("\r"), true},
		{[]byte(" \r"), true},
		{[]byte("\v\f"), true},
		{[]byte(" \t\r\v\f "), true},
		{[]byte("\u00a0"), false},
		{[]byte("\u0085"), false},
		{[]byte("\u3000"), false},
		{[]byte(" \u2003\r"), false},
		{[]byte("\x00"), false},
		{[]byte(" x "), false},
	} {
		if got := textBlank(c.line); got != c.blank {
			t.Errorf("textBlank(%q) = %v, want %v", c.line, got, c.blank)
		}
	}
	for c := 0; c < 256; c++ {
		want := bytes.IndexByte([]byte(" \t\r\v\f"), byte(c)) >= 0
		if got := textSpace(byte(c)); got != want {
			t.Errorf("textSpace(%q) = %v, want %v", byte(c), got, want)
		}
	}
}

func TestTextTrim(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		" \t\r\v\f":       "",
		"\t 12 \r":        "12",
		"\u00a012\u00a0":  "\u00a012\u00a0", // not white space here: see textSpace
		" a b ":           "a b",
		"\v\fM35\f\v\r\r": "M35",
	} {
		if got := string(textTrim([]byte(in))); got != want {
			t.Errorf("textTrim(%q) = %q, want %q", in, got, want)
		}
	}
}
