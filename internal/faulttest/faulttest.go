// Package faulttest counts what became of the units a fault test sent: answered
// right, reported as errors, lost, answered twice. The fault tests of every package
// log the counts in one format, which RELIABILITY.md quotes.
package faulttest

import (
	"fmt"
	"strings"
	"testing"
)

// ErrorPrefix starts the line a port writes for a unit that gets no answer
// (--port-error-line).
const ErrorPrefix = "error: "

// Counts is what became of the units of a fault scenario.
type Counts struct {
	Scenario string
	Sent     int // valid units sent
	Right    int // answered, with the right answer, in order
	Errors   int // reported as errors (error lines, error results, or logged cuts)
	Lost     int // valid units with neither an answer nor an error
	Twice    int // answers that came again
	Wrong    int // text that is no expected answer

	// First says where the text first went astray, with what came there, so that a
	// failure in CI can be understood from its log alone.
	First string
}

func (c Counts) String() string {
	return fmt.Sprintf("counts: scenario=%s sent=%d right=%d errors=%d lost=%d twice=%d wrong=%d",
		c.Scenario, c.Sent, c.Right, c.Errors, c.Lost, c.Twice, c.Wrong)
}

// Check logs the counts and fails the test unless every valid unit was answered
// right, in order: 0 lost, 0 twice, 0 wrong.
func (c Counts) Check(t testing.TB) {
	t.Helper()
	t.Log(c.String())
	if c.Right != c.Sent || c.Lost != 0 || c.Twice != 0 || c.Wrong != 0 {
		t.Errorf("scenario %s: want every one of %d valid units answered right, in order, once: %s; first astray: %s", c.Scenario, c.Sent, c, c.First)
	}
}

// Tally walks the text a port received (got) against the answers of the valid
// units sent, in order (want). Error lines are counted as errors wherever they are;
// an answer missing is lost; an answer already given that comes again is twice;
// anything else is wrong.
func Tally(scenario string, want []string, got string) Counts {
	c := Counts{Scenario: scenario, Sent: len(want)}
	seen := map[string]bool{}
	rest := got
	skipErrors := func() {
		for strings.HasPrefix(rest, ErrorPrefix) {
			c.Errors++
			_, rest, _ = strings.Cut(rest, "\n")
		}
	}
	for i, w := range want {
		skipErrors()
		if strings.HasPrefix(rest, w) {
			c.Right++
			seen[w] = true
			rest = rest[len(w):]
			continue
		}
		// Skip what does not belong, if this answer comes later; else it is lost: it
		// is lost too when the next answer comes before it.
		k := indexLine(rest, w)
		if c.First == "" {
			c.First = fmt.Sprintf("answer %d of %d (%q) was due; %d bytes came next: %q", i+1, len(want), w, len(rest), head(rest, 400))
		}
		if k < 0 || i+1 < len(want) && want[i+1] != w && between(indexLine(rest, want[i+1]), 0, k) {
			c.Lost++
			continue
		}
		c.skipped(rest[:k], seen)
		rest = rest[k+len(w):]
		c.Right++
		seen[w] = true
	}
	skipErrors()
	if rest != "" && c.First == "" {
		c.First = fmt.Sprintf("every answer came; then %d bytes more: %q", len(rest), head(rest, 400))
	}
	c.skipped(rest, seen)
	return c
}

// indexLine is the index of the first w in s that starts a line, or -1. An answer
// is whole lines: found inside another line ("5 2\n" in "15 2\n"), it is not there.
// Matching inside lines made a unit given up look like 100 lost and 176 wrong
// answers out of order (issue 14).
func indexLine(s, w string) int {
	for off := 0; ; {
		k := strings.Index(s[off:], w)
		if k < 0 {
			return -1
		}
		if off+k == 0 || s[off+k-1] == '\n' {
			return off + k
		}
		off += k + 1
	}
}

func between(k, lo, hi int) bool { return lo <= k && k < hi }

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// skipped counts the lines of text that came where no answer was due.
func (c *Counts) skipped(text string, seen map[string]bool) {
	for line := range strings.Lines(text) {
		switch {
		case strings.HasPrefix(line, ErrorPrefix):
			c.Errors++
		case seen[line]:
			c.Twice++
		default:
			c.Wrong++
		}
	}
}

// GoscoreBoard is a goscore unit whose answer differs for every k below 180*180, so
// that an answer given twice or to the wrong unit shows: a black stones first in
// reading order, b white ones last, the empty points between them neutral, so the
// answer is "a b".
func GoscoreBoard(k int) (unit, answer string) {
	a, b := 1+k%180, 1+(k/180)%180
	var s strings.Builder
	s.WriteString("\n")
	for i := range 361 {
		switch {
		case i < a:
			s.WriteString(" @")
		case i >= 361-b:
			s.WriteString(" O")
		default:
			s.WriteString(" +")
		}
		if i%19 == 18 {
			s.WriteString("\n")
		}
	}
	return s.String(), fmt.Sprintf("%d %d\n", a, b)
}
