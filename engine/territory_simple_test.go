package engine_test

import (
	"fmt"
	"strconv"
	"strings"
)

// territorySimple answers one territory unit (exactly one case, any layout), or says
// it is invalid.
func territorySimple(unit string) (string, bool) {
	tok := boardSimpleFields(strings.ReplaceAll(unit, "\n", " ")) // line breaks fall anywhere
	if len(tok) < 3 {
		return "", false
	}
	var v [3]int
	for i := range v {
		x, err := strconv.Atoi(tok[i])
		if err != nil {
			return "", false
		}
		v[i] = x
	}
	n, b, w := v[0], v[1], v[2]
	if n < 1 || n > 19 || b < 0 || w < 0 || b+w < 1 || b+w > n*n || len(tok) != 3+2*(b+w) {
		return "", false
	}
	g := boardNewGrid(n)
	for i := 0; i < b+w; i++ {
		r, err1 := strconv.Atoi(tok[3+2*i])
		c, err2 := strconv.Atoi(tok[4+2*i])
		if err1 != nil || err2 != nil || r < 1 || r > n || c < 1 || c > n || g[r-1][c-1] != '.' {
			return "", false
		}
		g[r-1][c-1] = 'B'
		if i >= b {
			g[r-1][c-1] = 'W'
		}
	}
	black, white := boardSimpleOwned(g)
	switch {
	case black > white:
		return fmt.Sprintf("Black wins by %d\n", black-white), true
	case white > black:
		return fmt.Sprintf("White wins by %d\n", white-black), true
	}
	return "Draw\n", true
}
