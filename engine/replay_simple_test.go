package engine_test

import (
	"fmt"
	"regexp"
	"strconv"
)

var replaySimpleMove = regexp.MustCompile(`^[ \t\r\v\f]*([BW])\([ \t\r\v\f]*([+-]?[0-9]+)[ \t\r\v\f]*,[ \t\r\v\f]*([+-]?[0-9]+)[ \t\r\v\f]*\)[ \t\r\v\f]*$`)

// replaySimple replays one replay unit on a byte grid, or says it is invalid.
func replaySimple(unit string) (string, bool) {
	lines := boardSimpleLines(unit)
	if len(lines) == 0 {
		return "", false
	}
	head := boardSimpleFields(lines[0])
	if len(head) != 2 {
		return "", false
	}
	n, err1 := strconv.Atoi(head[0])
	m, err2 := strconv.Atoi(head[1])
	if err1 != nil || err2 != nil || n < 3 || n > 19 || n%2 == 0 || m < 0 || m > 10000 || len(lines) != 1+m {
		return "", false
	}
	h := (n - 1) / 2
	g := boardNewGrid(n)
	captured := map[byte]int{}
	for _, line := range lines[1:] {
		mv := replaySimpleMove.FindStringSubmatch(line)
		if mv == nil {
			return "", false
		}
		x, err1 := strconv.Atoi(mv[2])
		y, err2 := strconv.Atoi(mv[3])
		if err1 != nil || err2 != nil || x < -h || x > h || y < -h || y > h {
			return "", false
		}
		took, legal := boardSimplePlay(g, mv[1][0], y+h, x+h)
		if !legal {
			return "", false
		}
		captured[mv[1][0]] += took
	}
	b, w := boardSimpleOwned(g)
	return fmt.Sprintf("%d %d\n", b+captured['B'], w+captured['W']), true
}
