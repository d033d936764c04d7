package engine_test

// The deliberately simple second implementations of the Go problems, and the
// position generators the differential tests share. Obviously correct beats fast
// here: string splitting, byte grids, breadth-first search.

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// boardGrid is a position: '.' empty, 'B' black, 'W' white; grid[r][c].
type boardGrid [][]byte

func boardNewGrid(n int) boardGrid {
	g := make(boardGrid, n)
	for r := range g {
		g[r] = []byte(strings.Repeat(".", n))
	}
	return g
}

// boardSimpleOwned counts the empty points in regions bordering only black, and
// only white, by breadth-first search over each empty region.
func boardSimpleOwned(g boardGrid) (black, white int) {
	n := len(g)
	seen := make([][]bool, n)
	for r := range seen {
		seen[r] = make([]bool, n)
	}
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			if g[r][c] != '.' || seen[r][c] {
				continue
			}
			size, touchB, touchW := 0, false, false
			queue := [][2]int{{r, c}}
			seen[r][c] = true
			for len(queue) > 0 {
				p := queue[0]
				queue = queue[1:]
				size++
				nb, k := boardSimpleNeighbours(n, p[0], p[1])
				for _, q := range nb[:k] {
					switch g[q[0]][q[1]] {
					case 'B':
						touchB = true
					case 'W':
						touchW = true
					case '.':
						if !seen[q[0]][q[1]] {
							seen[q[0]][q[1]] = true
							queue = append(queue, q)
						}
					}
				}
			}
			if touchB && !touchW {
				black += size
			}
			if touchW && !touchB {
				white += size
			}
		}
	}
	return black, white
}

// boardSimpleNeighbours lists the k points next to (r, c) on an n x n board.
func boardSimpleNeighbours(n, r, c int) (out [4][2]int, k int) {
	for _, d := range [4][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
		rr, cc := r+d[0], c+d[1]
		if rr >= 0 && rr < n && cc >= 0 && cc < n {
			out[k] = [2]int{rr, cc}
			k++
		}
	}
	return out, k
}

// boardSimpleGroup returns the group at (r, c) and its number of liberties.
func boardSimpleGroup(g boardGrid, r, c int) (stones [][2]int, liberties int) {
	n := len(g)
	colour := g[r][c]
	seen := make([]bool, n*n) // stones of the group, and liberties counted
	seen[r*n+c] = true
	queue := [][2]int{{r, c}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		stones = append(stones, p)
		nb, k := boardSimpleNeighbours(n, p[0], p[1])
		for _, q := range nb[:k] {
			if seen[q[0]*n+q[1]] {
				continue
			}
			switch g[q[0]][q[1]] {
			case '.':
				seen[q[0]*n+q[1]] = true
				liberties++
			case colour:
				seen[q[0]*n+q[1]] = true
				queue = append(queue, q)
			}
		}
	}
	return stones, liberties
}

// boardSimplePlay places a stone of colour ('B' or 'W') at (r, c) and removes the
// opponent groups left without liberties. It reports how many stones it captured,
// and whether the move was legal (empty point, not suicide); an illegal move leaves
// the grid as it was.
func boardSimplePlay(g boardGrid, colour byte, r, c int) (captured int, legal bool) {
	if g[r][c] != '.' {
		return 0, false
	}
	g[r][c] = colour
	nb, k := boardSimpleNeighbours(len(g), r, c)
	for _, q := range nb[:k] {
		if v := g[q[0]][q[1]]; v != '.' && v != colour {
			if stones, libs := boardSimpleGroup(g, q[0], q[1]); libs == 0 {
				for _, s := range stones {
					g[s[0]][s[1]] = '.'
				}
				captured += len(stones)
			}
		}
	}
	if _, libs := boardSimpleGroup(g, r, c); libs == 0 {
		g[r][c] = '.'
		return 0, false
	}
	return captured, true
}

// boardMove is one placement of a generated game.
type boardMove struct {
	colour byte
	r, c   int
}

// boardGenGame plays up to moves random legal placements on an n x n board: mostly
// alternating, sometimes a pass (the same colour twice), with captures wherever
// random play makes them. It returns the placements and the final position.
func boardGenGame(rng *rand.Rand, n, moves int) ([]boardMove, boardGrid) {
	g := boardNewGrid(n)
	var out []boardMove
	colour := byte('B')
	for tries := 0; len(out) < moves && tries < 4*moves+16; tries++ {
		r, c := rng.IntN(n), rng.IntN(n)
		if _, ok := boardSimplePlay(g, colour, r, c); !ok {
			continue
		}
		out = append(out, boardMove{colour, r, c})
		if rng.IntN(10) != 0 { // one time in ten the other side passes
			colour = 'B' + 'W' - colour
		}
	}
	return out, g
}

// boardGenPosition returns a realistic or extreme n x n position: the end of a random
// game, a random fill, a full board, an empty board, a single-colour board, or walls
// enclosing long snaking regions.
func boardGenPosition(rng *rand.Rand, n int) boardGrid {
	g := boardNewGrid(n)
	fill := func(pB, pW float64) {
		for r := range g {
			for c := range g[r] {
				switch x := rng.Float64(); {
				case x < pB:
					g[r][c] = 'B'
				case x < pB+pW:
					g[r][c] = 'W'
				}
			}
		}
	}
	switch rng.IntN(8) {
	case 0, 1, 2:
		_, g = boardGenGame(rng, n, rng.IntN(n*n*2+1))
	case 3:
		fill(rng.Float64()/2, rng.Float64()/2)
	case 4:
		fill(0.5, 0.5) // full
	case 5:
		// empty
	case 6:
		if rng.IntN(2) == 0 {
			fill(rng.Float64(), 0)
		} else {
			fill(0, rng.Float64())
		}
	case 7:
		// Walls every other row with a gap alternating between the ends, so the
		// empty rows between them form one region that snakes over the board.
		wall := byte('B')
		for r := 1; r < n; r += 2 {
			if rng.IntN(3) == 0 {
				wall = 'B' + 'W' - wall
			}
			for c := range g[r] {
				g[r][c] = wall
			}
			if r%4 == 1 {
				g[r][n-1] = '.'
			} else {
				g[r][0] = '.'
			}
		}
		if rng.IntN(2) == 0 { // and maybe an intruder somewhere
			g[rng.IntN(n)][rng.IntN(n)] = 'B' + 'W' - wall
		}
	}
	return g
}

// goscoreText writes a 19x19 position as a goscore unit, with either empty mark and,
// if messy, trailing white space after some rows.
func goscoreText(rng *rand.Rand, g boardGrid, messy bool) string {
	var b strings.Builder
	b.WriteString("\n")
	for _, row := range g {
		for _, v := range row {
			switch v {
			case 'B':
				b.WriteString(" @")
			case 'W':
				b.WriteString(" O")
			default:
				if rng.IntN(8) == 0 {
					b.WriteString(" *")
				} else {
					b.WriteString(" +")
				}
			}
		}
		if messy && rng.IntN(4) == 0 {
			b.WriteString([]string{" ", "\t", "  \t "}[rng.IntN(3)])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// boardSimpleSpace is the white space every parser of these problems knows.
const boardSimpleSpace = " \t\r\v\f"

func boardSimpleFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(boardSimpleSpace, r) })
}

// boardSimpleLines splits a unit into its lines; a missing final "\n" is allowed.
func boardSimpleLines(unit string) []string {
	if unit == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(unit, "\n"), "\n")
}

// goscoreSimple answers one goscore unit, or says it is invalid.
func goscoreSimple(unit string) (string, bool) {
	lines := boardSimpleLines(unit)
	if len(lines) != 20 || strings.Trim(lines[0], boardSimpleSpace) != "" {
		return "", false
	}
	g := boardNewGrid(19)
	stonesB, stonesW := 0, 0
	for r, line := range lines[1:] {
		row := strings.TrimRight(line, boardSimpleSpace)
		if len(row) != 38 {
			return "", false
		}
		for c := 0; c < 19; c++ {
			if row[2*c] != ' ' {
				return "", false
			}
			switch row[2*c+1] {
			case '@':
				g[r][c] = 'B'
				stonesB++
			case 'O':
				g[r][c] = 'W'
				stonesW++
			case '+', '*':
			default:
				return "", false
			}
		}
	}
	b, w := boardSimpleOwned(g)
	return fmt.Sprintf("%d %d\n", stonesB+b, stonesW+w), true
}
