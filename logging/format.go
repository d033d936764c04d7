package logging

import (
	"fmt"
	"strings"
)

// maxVerbWidth and maxVerbs bound what a format's verbs may write in Sprintf: the
// widest of nats-server's own formats is %0100d, and its lines have a few verbs.
const (
	maxVerbWidth = 100
	maxVerbs     = 32
)

// Sprintf is fmt.Sprintf for a format that may hold text a client chose:
// nats-server writes a connection's name into its log lines' formats (inside %q,
// which leaves '%' as it is), so a client named "%99999[1]s%99999[1]s..." had one
// line allocate some 30 MB (a CONNECT holds 4 KB of such verbs). A format whose
// verbs ask for a width or precision over maxVerbWidth, one from an argument ('*'),
// or more than maxVerbs verbs, is not expanded: it is written as it is, its
// arguments after it.
func Sprintf(format string, v ...any) string {
	if !wideFormat(format) {
		return fmt.Sprintf(format, v...)
	}
	if len(v) == 0 {
		return format
	}
	return strings.TrimSuffix(format+" "+fmt.Sprintln(v...), "\n")
}

// wideFormat says whether format's verbs could write more than maxVerbs verbs of
// maxVerbWidth bytes each. It reads a verb as fmt does: flags, an argument index,
// a width, a precision with its own index, an index, then the verb, whatever
// character that is ('%' too).
func wideFormat(format string) bool {
	verbs := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("#0+- ", format[i]) >= 0 {
			i++
		}
		i = skipArgIndex(format, i)
		if i < len(format) && format[i] == '*' {
			return true
		}
		var n int
		if n, i = number(format, i); n > maxVerbWidth {
			return true
		}
		if i < len(format) && format[i] == '.' {
			i = skipArgIndex(format, i+1)
			if i < len(format) && format[i] == '*' {
				return true
			}
			if n, i = number(format, i); n > maxVerbWidth {
				return true
			}
		}
		i = skipArgIndex(format, i)
		if i < len(format) && format[i] != '%' {
			if verbs++; verbs > maxVerbs {
				return true
			}
		}
		// The loop's i++ steps over the verb.
	}
	return false
}

// skipArgIndex is i past an argument index ("[n]") at format[i], as fmt reads one:
// up to the first ']', or only the '[' without one.
func skipArgIndex(format string, i int) int {
	if i >= len(format) || format[i] != '[' {
		return i
	}
	if j := strings.IndexByte(format[i:], ']'); j > 0 {
		return i + j + 1
	}
	return i + 1
}

// number reads the digits at format[i]: their value (held at maxVerbWidth+1 once
// past it) and i past them.
func number(format string, i int) (int, int) {
	n := 0
	for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
		n = min(n*10+int(format[i]-'0'), maxVerbWidth+1)
	}
	return n, i
}
