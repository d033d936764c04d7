package logging

import (
	"strconv"
	"strings"
)

// MaxValue bounds a value that someone else chose (a header, a subject, a user name,
// a worker's error text) in a log line: a tool that sends 1 MB values must not make
// 1 MB log lines, which fill a journal or an SD card at its pace.
const MaxValue = 128

// Clip is s, or its first MaxValue bytes (whole UTF-8 characters) followed by "…"
// and its length, so that a reader knows it was cut and by how much.
func Clip(s string) string { return cut(s, MaxValue) }

// ClipText is Clip for a text someone else wrote that may quote values (a worker's
// error, which quotes the unit's bytes): cut to MaxLine.
func ClipText(s string) string { return cut(s, MaxLine) }

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// MaxLine bounds a line of text written by someone else's code that may quote values
// its clients chose (the embedded nats-server's log lines): cut beyond it.
const MaxLine = 640

// ClipQuoted is a line of text with each double-quoted string in it (as %q writes
// one: a user name, a connection's name, a subject) cut as Clip cuts a value, inside
// its quotes, and the whole then cut to MaxLine. A quoted value's cut stops before an
// escape it would split.
func ClipQuoted(s string) string {
	if len(s) <= MaxValue && !strings.Contains(s, `"`) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
		end := quotedEnd(s)
		v := s[:end]
		if len(v) > MaxValue {
			cut := v[:MaxValue]
			if k := strings.LastIndexByte(cut, '\\'); k >= 0 && k >= len(cut)-10 {
				cut = cut[:k]
			}
			v = strings.ToValidUTF8(cut, "") + "…(" + strconv.Itoa(len(v)) + " bytes)"
		}
		b.WriteString(v)
		s = s[end:]
		if s == "" {
			break
		}
		b.WriteByte('"')
		s = s[1:]
	}
	return cut(b.String(), MaxLine)
}

// quotedEnd is the index of the quote that ends the quoted string s starts with
// (after its opening quote), or len(s) when none does.
func quotedEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(s)
}
