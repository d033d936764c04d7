package engine

// What white space and a blank line are, for every problem's framer and parser. The
// rule lives here once so that the problems cannot drift apart: before it, othello
// called a line of Unicode spaces (U+00A0, U+3000, ...) blank and the others did not.

// textSpace reports whether c is white space inside a line: C's isspace in the "C"
// locale, the set a contest solution's scanf and getline code skips, less the "\n"
// that ends a line. Bytes of other encodings are not space: the contest inputs are
// ASCII, and a line of non-breaking spaces is more likely damage than a separator.
func textSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// textBlank reports whether a line, without its "\n", is blank: empty or white space
// only. A nil line stands for one the reader dropped (see Framer.Feed), which is never
// valid and never blank: a dropped board row taken for a separator would shift every
// row after it.
func textBlank(line []byte) bool {
	if line == nil {
		return false
	}
	for _, c := range line {
		if !textSpace(c) {
			return false
		}
	}
	return true
}

// textTrim cuts white space from both ends of a line.
func textTrim(line []byte) []byte {
	for len(line) > 0 && textSpace(line[0]) {
		line = line[1:]
	}
	for len(line) > 0 && textSpace(line[len(line)-1]) {
		line = line[:len(line)-1]
	}
	return line
}
