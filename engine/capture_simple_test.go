package engine_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// This file holds the test-only reference for the capture problem and the generators
// of the games the tests and benchmarks play.

// capturePt is a board point.
type capturePt struct{ X, Y int }

// captureSimple is the deliberately simple reference: a dense board and, after each
// move, a breadth-first search of every group beside the move. Slow (a move costs the
// size of the groups it touches, and the board costs S*S), but obviously right.
type captureSimple struct {
	size     int
	cells    []int8  // 0 empty, 1 black, 2 white; y*size+x
	seen     []int32 // the search that last reached a point
	search   int32
	moves    int
	captured int
}

func newCaptureSimple(size int) *captureSimple {
	return &captureSimple{size: size, cells: make([]int8, size*size), seen: make([]int32, size*size)}
}

func (s *captureSimple) at(p capturePt) int8 { return s.cells[p.Y*s.size+p.X] }

// neighbours returns the points beside p that are on the board.
func (s *captureSimple) neighbours(p capturePt) (out [4]capturePt, n int) {
	for _, d := range [4]capturePt{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
		q := capturePt{p.X + d.X, p.Y + d.Y}
		if q.X >= 0 && q.X < s.size && q.Y >= 0 && q.Y < s.size {
			out[n] = q
			n++
		}
	}
	return out, n
}

// group returns the stones of p's group and whether it has a liberty.
func (s *captureSimple) group(p capturePt) ([]capturePt, bool) {
	c := s.at(p)
	s.search++
	s.seen[p.Y*s.size+p.X] = s.search
	queue := []capturePt{p}
	free := false
	for i := 0; i < len(queue); i++ {
		nb, n := s.neighbours(queue[i])
		for _, q := range nb[:n] {
			switch {
			case s.at(q) == 0:
				free = true
			case s.at(q) == c && s.seen[q.Y*s.size+q.X] != s.search:
				s.seen[q.Y*s.size+q.X] = s.search
				queue = append(queue, q)
			}
		}
	}
	return queue, free
}

// removeIfDead removes p's group if it has no liberty.
func (s *captureSimple) removeIfDead(p capturePt) {
	if s.at(p) == 0 {
		return
	}
	stones, free := s.group(p)
	if free {
		return
	}
	for _, q := range stones {
		s.cells[q.Y*s.size+q.X] = 0
	}
	s.captured += len(stones)
}

// play plays the next move; false if p is occupied (the board is then unchanged).
func (s *captureSimple) play(p capturePt) bool {
	if s.at(p) != 0 {
		return false
	}
	c := int8(1 + s.moves%2)
	s.moves++
	s.cells[p.Y*s.size+p.X] = c
	nb, n := s.neighbours(p)
	for _, q := range nb[:n] {
		if s.at(q) == 3-c {
			s.removeIfDead(q)
		}
	}
	s.removeIfDead(p)
	return true
}

// captureSimpleCount plays a whole game with the reference: the stones captured, or
// the index of the first move on an occupied point (-1 if none).
func captureSimpleCount(size int, moves []capturePt) (captured, bad int) {
	s := newCaptureSimple(size)
	for i, p := range moves {
		if !s.play(p) {
			return 0, i
		}
	}
	return s.captured, -1
}

// captureGame is a generated game.
type captureGame struct {
	size  int
	moves []capturePt
	want  int // the captures its generator intends, -1 if it does not know
	// byRef says that the reference played the game as it was generated: want is its
	// count and bad the index of the move on an occupied point (-1 if none).
	byRef bool
	bad   int
}

// text is the game's contest input.
func (g *captureGame) text() []byte {
	b := make([]byte, 0, 16+12*len(g.moves))
	b = fmt.Appendf(b, "%d %d\n", g.size, len(g.moves))
	for _, p := range g.moves {
		b = strconv.AppendInt(b, int64(p.X), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(p.Y), 10)
		b = append(b, '\n')
	}
	return b
}

// captureGen builds a game move by move. Colours alternate, so when a shape needs two
// stones of one colour in a row, the other colour plays a filler: a lone stone on a
// point of a filler region where no two fillers touch and nothing else is played.
type captureGen struct {
	captureGame
	fillX0, fillY0, fillCols, fillRows int
	fills                              int
}

func newCaptureGen(size int) *captureGen {
	return &captureGen{captureGame: captureGame{size: size}}
}

// fillRegion sets the filler region: the rectangle [x0,x1]x[y0,y1], every other point.
func (g *captureGen) fillRegion(x0, y0, x1, y1 int) {
	g.fillX0, g.fillY0 = x0, y0
	g.fillCols, g.fillRows = (x1-x0)/2+1, (y1-y0)/2+1
	g.fills = 0
}

func (g *captureGen) filler() capturePt {
	if g.fills >= g.fillCols*g.fillRows {
		panic("capture generator: filler region full")
	}
	k := g.fills
	g.fills++
	return capturePt{g.fillX0 + 2*(k%g.fillCols), g.fillY0 + 2*(k/g.fillCols)}
}

// play plays p for colour c (0 black, 1 white), after a filler if it is not c's turn.
func (g *captureGen) play(c int, p capturePt) {
	if len(g.moves)%2 != c {
		g.moves = append(g.moves, g.filler())
	}
	g.moves = append(g.moves, p)
}

// zip plays black's and white's stones alternately, each list in order.
func (g *captureGen) zip(black, white []capturePt) {
	for i := 0; i < len(black) || i < len(white); i++ {
		if i < len(black) {
			g.play(0, black[i])
		}
		if i < len(white) {
			g.play(1, white[i])
		}
	}
}

// snake builds, in the board's top-left corner, a black group of about H+(W-1)*H/2
// stones (a comb: a spine down column 0 and teeth along the even rows) interlocked with
// a living white comb, so that black's only liberties are the eye at (0,0) and the far
// end (0,H). H must be even. It returns the eye. The region used is [0,W+1]x[0,H].
func (g *captureGen) snake(w, h int) (eye capturePt) {
	var black, white []capturePt
	black = append(black, capturePt{1, 1}, capturePt{0, 1})
	for x := 1; x < w; x++ {
		black = append(black, capturePt{x, 0})
	}
	for y := 2; y < h; y++ {
		black = append(black, capturePt{0, y})
		if y%2 == 0 {
			for x := 1; x < w; x++ {
				black = append(black, capturePt{x, y})
			}
		}
	}
	for y := 0; y < h; y++ {
		white = append(white, capturePt{w, y})
	}
	for y := 1; y < h; y += 2 {
		from := 1
		if y == 1 {
			from = 2
		}
		for x := w - 1; x >= from; x-- {
			white = append(white, capturePt{x, y})
		}
	}
	g.zip(black, white)
	return capturePt{0, 0}
}

// suicides has white play into the eye n times: each stone is captured at once.
func (g *captureGen) suicides(eye capturePt, n int) {
	for range n {
		g.play(1, eye)
	}
	g.want += n
}

// block builds a b x b black block in the bottom-left corner while white walls it
// in; white's last wall stone captures all b*b stones. The region used is [0,b] x
// [size-1-b, size-1].
func (g *captureGen) block(b int) {
	at := func(x, y int) capturePt { return capturePt{x, g.size - 1 - y} }
	var black, walls []capturePt
	for y := range b {
		for x := range b {
			black = append(black, at(x, y))
		}
	}
	for i := range b {
		walls = append(walls, at(b, i), at(i, b))
	}
	g.zip(black, walls[:len(walls)-1])
	g.play(1, walls[len(walls)-1])
	g.want += b * b
}

// ladder plays a ladder: the black runner starts at (ox,oy) in atari and runs down
// the diagonal, white chasing, until it meets the right edge, where white captures it
// (about 2*(size-ox) stones). oy <= ox keeps it on the board; the region used is the
// diagonal band from (ox-1,oy-1) to (size-1, oy+size-ox).
func (g *captureGen) ladder(ox, oy int) {
	at := func(x, y int) capturePt { return capturePt{ox + x, oy + y} }
	g.play(0, at(0, 0))
	for _, p := range []capturePt{at(-1, 0), at(0, 1), at(1, -1), at(0, -1)} {
		g.play(1, p)
	}
	runner := 1
	for k := 0; ; k++ {
		g.play(0, at(k+1, k))
		runner++
		if ox+k+2 >= g.size {
			g.play(1, at(k+1, k+1)) // the edge took the other liberty
			break
		}
		g.play(1, at(k+2, k))
		g.play(0, at(k+1, k+1))
		runner++
		g.play(1, at(k+1, k+2))
	}
	g.want += runner
}

// captureSnakeGame is a 6,000-stone snake, then white suicides into its eye until the
// game has 25,000 moves.
func captureSnakeGame() *captureGame {
	g := newCaptureGen(400)
	g.fillRegion(70, 0, 398, 398)
	eye := g.snake(59, 200)
	g.suicides(eye, (25000-len(g.moves))/2)
	return &g.captureGame
}

// captureBlockGame is a 100x100 block captured by one move.
func captureBlockGame() *captureGame {
	g := newCaptureGen(300)
	g.fillRegion(110, 0, 298, 298)
	g.block(100)
	return &g.captureGame
}

// captureLadderGame is a ladder of about 12,000 stones.
func captureLadderGame() *captureGame {
	g := newCaptureGen(3100)
	g.fillRegion(0, 3000, 40, 3098)
	g.ladder(3100-2-2998, 1)
	return &g.captureGame
}

// captureMixedGame is the big adversarial game: a 12,000-stone ladder, a 50x50 block,
// a 1,600-stone snake and suicides into its eye, 25,000 moves in all.
func captureMixedGame() *captureGame {
	g := newCaptureGen(3100)
	g.fillRegion(100, 1700, 1500, 3000)
	g.ladder(3100-2-2998, 1)
	g.block(50)
	eye := g.snake(31, 100)
	g.suicides(eye, (25000-len(g.moves))/2)
	return &g.captureGame
}

// captureRandomGame plays n random moves on a size x size board, each on an empty
// point, except that with probability occupied a move picks any point (and so may be
// an error). Small boards make captures frequent.
func captureRandomGame(r *rand.Rand, size, n int, occupied float64) *captureGame {
	s := newCaptureSimple(size)
	g := &captureGame{size: size, byRef: true, bad: -1}
	for range n {
		p := capturePt{r.IntN(size), r.IntN(size)}
		if r.Float64() >= occupied {
			for tries := 0; s.at(p) != 0 && tries < 4*size*size; tries++ {
				p = capturePt{r.IntN(size), r.IntN(size)}
			}
			if s.at(p) != 0 {
				break // the board is full
			}
		}
		g.moves = append(g.moves, p)
		if !s.play(p) {
			g.bad = len(g.moves) - 1
			break // an error ends the game
		}
	}
	g.want = s.captured
	return g
}
