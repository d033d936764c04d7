package main

import (
	"bytes"
	"math/rand/v2"
	"strconv"

	"github.com/goclub/scoreboard/engine"
)

// The large contest inputs the whole-process benchmarks run, one generator a problem.
// Each is seeded, so a run is reproducible, and valid, so the plain peers (which do
// not check input) give the same output as the scoreboard.

// goSim is a dense board for generating legal Go games: 0 empty, 1 black, 2 white.
type goSim struct {
	n     int
	cells []int8
	seen  []int32
	stamp int32
	queue []int
}

func newGoSim(n int) *goSim {
	return &goSim{n: n, cells: make([]int8, n*n), seen: make([]int32, n*n)}
}

// group collects the group at p in s.queue and says whether it has a liberty.
func (s *goSim) group(p int) bool {
	col := s.cells[p]
	s.stamp++
	s.seen[p] = s.stamp
	s.queue = append(s.queue[:0], p)
	free := false
	for i := 0; i < len(s.queue); i++ {
		q := s.queue[i]
		x, y := q%s.n, q/s.n
		for _, d := range [4][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
			nx, ny := x+d[0], y+d[1]
			if nx < 0 || ny < 0 || nx >= s.n || ny >= s.n {
				continue
			}
			r := ny*s.n + nx
			switch {
			case s.cells[r] == 0:
				free = true
			case s.cells[r] == col && s.seen[r] != s.stamp:
				s.seen[r] = s.stamp
				s.queue = append(s.queue, r)
			}
		}
	}
	return free
}

// play puts col on the empty point p and captures. A suicide is undone and refused.
func (s *goSim) play(p int, col int8) bool {
	s.cells[p] = col
	x, y := p%s.n, p/s.n
	took := false
	for _, d := range [4][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
		nx, ny := x+d[0], y+d[1]
		if nx < 0 || ny < 0 || nx >= s.n || ny >= s.n || s.cells[ny*s.n+nx] != 3-col {
			continue
		}
		if !s.group(ny*s.n + nx) {
			for _, q := range s.queue {
				s.cells[q] = 0
			}
			took = true
		}
	}
	if !took && !s.group(p) {
		s.cells[p] = 0
		return false
	}
	return true
}

// randomEmpty returns a random empty point, or -1 after too many tries.
func (s *goSim) randomEmpty(r *rand.Rand) int {
	for range 64 {
		if p := r.IntN(s.n * s.n); s.cells[p] == 0 {
			return p
		}
	}
	return -1
}

// genReplay makes games of 300 placements on 19x19 boards, each legal (no suicide),
// colours mostly alternating, until the input holds size bytes.
func genReplay(size int) []byte {
	r := rand.New(rand.NewPCG(15, 1))
	var b []byte
	var game [][3]int
	for len(b) < size {
		s := newGoSim(19)
		game = game[:0]
		col := int8(1)
		for len(game) < 300 {
			p := s.randomEmpty(r)
			if p < 0 {
				break
			}
			if r.IntN(20) == 0 {
				col = 3 - col // a pass
			}
			if s.play(p, col) {
				game = append(game, [3]int{int(col), p%19 - 9, p/19 - 9})
				col = 3 - col
			}
		}
		b = append(b, "19 "...)
		b = strconv.AppendInt(b, int64(len(game)), 10)
		b = append(b, '\n')
		for _, m := range game {
			b = append(b, "BW"[m[0]-1], '(')
			b = strconv.AppendInt(b, int64(m[1]), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(m[2]), 10)
			b = append(b, ")\n"...)
		}
	}
	return append(b, "0 0\n"...)
}

// genTerritory makes crowded 19x19 positions (150 to 350 stones, as after a long
// game), three lines a case, until the input holds size bytes.
func genTerritory(size int) []byte {
	r := rand.New(rand.NewPCG(15, 2))
	var b []byte
	for len(b) < size {
		stones := 150 + r.IntN(200)
		pts := r.Perm(361)[:stones]
		black := stones / 2
		b = append(b, "19 "...)
		b = strconv.AppendInt(b, int64(black), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(stones-black), 10)
		for i, p := range pts {
			if i == 0 || i == black {
				b = append(b, '\n')
			} else {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, int64(p/19+1), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(p%19+1), 10)
		}
		b = append(b, '\n')
	}
	return append(b, "0\n"...)
}

// genOthello makes one session of games from the opening, played out with random
// legal moves, an L before most moves, until the input holds size bytes.
func genOthello(size int) []byte {
	r := rand.New(rand.NewPCG(15, 3))
	var games bytes.Buffer
	n := 0
	start := engine.OthelloStart.AppendBoard(nil)
	for games.Len() < size {
		n++
		games.Write(start)
		games.WriteString("B\n")
		pos := engine.OthelloStart
		for {
			if r.IntN(4) != 0 {
				games.WriteString("L\n")
			}
			moves := pos.Moves()
			if moves == 0 {
				p := pos
				p.Side = p.Side.Other()
				if moves = p.Moves(); moves == 0 {
					break
				}
			}
			k := r.IntN(popcount(moves))
			for range k {
				moves &= moves - 1
			}
			sq := trailingZeros(moves)
			pos.Play(sq)
			games.Write([]byte{'M', byte('1' + sq/8), byte('1' + sq%8), '\n'})
		}
		games.WriteString("Q\n")
	}
	return append(strconv.AppendInt(nil, int64(n), 10), append([]byte{'\n'}, games.Bytes()...)...)
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func trailingZeros(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

// genCapture makes games of 25,000 moves on a 200x200 board, each on a point never
// played before in its game (so always empty, without simulating the captures),
// until the input holds size bytes. The board ends up 60% full: groups grow large,
// and captures and suicides happen all along.
func genCapture(size int) []byte {
	r := rand.New(rand.NewPCG(15, 4))
	var b []byte
	const side, moves = 200, 25000
	for len(b) < size {
		b = append(b, "200 25000\n"...)
		for _, p := range r.Perm(side * side)[:moves] {
			b = strconv.AppendInt(b, int64(p%side), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(p/side), 10)
			b = append(b, '\n')
		}
	}
	return b
}

// genCaptureWorst is the worst case for a search after each move: a black comb of
// about 6,000 stones whose only liberties are an eye in the corner and the far end of
// its spine, and then white playing into the eye (a suicide, so every such move
// searches the whole comb) until the game has 25,000 moves.
func genCaptureWorst() []byte {
	const size, w, h = 400, 59, 200
	var moves [][2]int
	fill := 0
	filler := func() [2]int { // lone stones far from the comb, never touching
		k := fill
		fill++
		return [2]int{70 + 2*(k%165), 2 * (k / 165)}
	}
	play := func(c int, p [2]int) {
		if len(moves)%2 != c {
			moves = append(moves, filler())
		}
		moves = append(moves, p)
	}
	var black, white [][2]int
	black = append(black, [2]int{1, 1}, [2]int{0, 1})
	for x := 1; x < w; x++ {
		black = append(black, [2]int{x, 0})
	}
	for y := 2; y < h; y++ {
		black = append(black, [2]int{0, y})
		if y%2 == 0 {
			for x := 1; x < w; x++ {
				black = append(black, [2]int{x, y})
			}
		}
	}
	for y := 0; y < h; y++ {
		white = append(white, [2]int{w, y})
	}
	for y := 1; y < h; y += 2 {
		from := 1
		if y == 1 {
			from = 2
		}
		for x := w - 1; x >= from; x-- {
			white = append(white, [2]int{x, y})
		}
	}
	for i := 0; i < len(black) || i < len(white); i++ {
		if i < len(black) {
			play(0, black[i])
		}
		if i < len(white) {
			play(1, white[i])
		}
	}
	for len(moves)+2 <= 25000 {
		play(1, [2]int{0, 0})
	}
	b := strconv.AppendInt(nil, size, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(moves)), 10)
	b = append(b, '\n')
	for _, m := range moves {
		b = strconv.AppendInt(b, int64(m[0]), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(m[1]), 10)
		b = append(b, '\n')
	}
	return b
}
