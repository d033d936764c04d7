package engine_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/goclub/scoreboard/engine"
)

// A deliberately simple second implementation of Othello, for differential tests and
// as the benchmarks' yardstick: an 8x8 byte array, scanned in the 8 directions.

type othelloRefBoard [8][8]byte // '-', 'B' or 'W'; [row-1][col-1]

var othelloRefDirs = [8][2]int{{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}}

func othelloRefOther(side byte) byte {
	if side == 'B' {
		return 'W'
	}
	return 'B'
}

// othelloRefFlips appends to dst the squares (0-based) a move of side at (r,c) would
// turn over; none if (r,c) is occupied or brackets nothing.
func othelloRefFlips(dst [][2]int, b *othelloRefBoard, side byte, r, c int) [][2]int {
	if b[r][c] != '-' {
		return dst
	}
	opp := othelloRefOther(side)
	for _, d := range othelloRefDirs {
		n := 0
		y, x := r+d[0], c+d[1]
		for y >= 0 && y < 8 && x >= 0 && x < 8 && b[y][x] == opp {
			y, x, n = y+d[0], x+d[1], n+1
		}
		if n > 0 && y >= 0 && y < 8 && x >= 0 && x < 8 && b[y][x] == side {
			for k := 1; k <= n; k++ {
				dst = append(dst, [2]int{r + k*d[0], c + k*d[1]})
			}
		}
	}
	return dst
}

// othelloRefMoves appends the legal moves of side, in row-major order.
func othelloRefMoves(dst [][2]int, b *othelloRefBoard, side byte) [][2]int {
	var flips [64][2]int
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			if len(othelloRefFlips(flips[:0], b, side, r, c)) > 0 {
				dst = append(dst, [2]int{r, c})
			}
		}
	}
	return dst
}

// othelloRefPlay plays side at (r,c) and reports whether the move was legal.
func othelloRefPlay(b *othelloRefBoard, side byte, r, c int) bool {
	var buf [64][2]int
	flips := othelloRefFlips(buf[:0], b, side, r, c)
	if len(flips) == 0 {
		return false
	}
	for _, f := range flips {
		b[f[0]][f[1]] = side
	}
	b[r][c] = side
	return true
}

func othelloRefCount(b *othelloRefBoard) (black, white int) {
	for r := range b {
		for _, ch := range b[r] {
			switch ch {
			case 'B':
				black++
			case 'W':
				white++
			}
		}
	}
	return black, white
}

func othelloRefAppendMoves(dst []byte, moves [][2]int) []byte {
	if len(moves) == 0 {
		return append(dst, "No legal move.\n"...)
	}
	for i, m := range moves {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = fmt.Appendf(dst, "(%d,%d)", m[0]+1, m[1]+1)
	}
	return append(dst, '\n')
}

func othelloRefToPosition(b *othelloRefBoard, side byte) engine.OthelloPosition {
	var p engine.OthelloPosition
	for r := range b {
		for c, ch := range b[r] {
			switch ch {
			case 'B':
				p.Black |= 1 << engine.OthelloSquare(r+1, c+1)
			case 'W':
				p.White |= 1 << engine.OthelloSquare(r+1, c+1)
			}
		}
	}
	if side == 'W' {
		p.Side = engine.OthelloWhite
	}
	return p
}

// othelloRefContest runs a whole contest input whose counts and boards are well
// formed; a bad command line or an illegal move is counted in bad, has no output and
// changes nothing, as the framer's contract says.
func othelloRefContest(in string) (out string, bad int) {
	lines := strings.Split(strings.TrimSuffix(in, "\n"), "\n")
	var w []byte
	i := 0
	for i < len(lines) {
		games, err := strconv.Atoi(lines[i])
		if err != nil {
			panic("othelloRefContest: bad count " + lines[i])
		}
		i++
		for g := 0; g < games && i < len(lines); g++ {
			var b othelloRefBoard
			for r := range b {
				copy(b[r][:], lines[i])
				i++
			}
			side := lines[i][0]
			i++
			if g > 0 {
				w = append(w, '\n') // every generated game ends in Q, so every game has output
			}
			for ; i < len(lines); i++ {
				cmd := lines[i]
				switch {
				case cmd == "L":
					w = othelloRefAppendMoves(w, othelloRefMoves(nil, &b, side))
					continue
				case cmd == "Q":
					for r := range b {
						w = append(w, b[r][:]...)
						w = append(w, '\n')
					}
					i++
				case len(cmd) == 3 && cmd[0] == 'M' && cmd[1] >= '1' && cmd[1] <= '8' && cmd[2] >= '1' && cmd[2] <= '8':
					mover := side
					if len(othelloRefMoves(nil, &b, side)) == 0 {
						mover = othelloRefOther(side)
					}
					if !othelloRefPlay(&b, mover, int(cmd[1]-'1'), int(cmd[2]-'1')) {
						bad++
						continue
					}
					side = othelloRefOther(mover)
					bl, wh := othelloRefCount(&b)
					w = fmt.Appendf(w, "Black - %2d White - %2d\n", bl, wh)
					continue
				default:
					bad++
					continue
				}
				break // Q
			}
		}
	}
	return string(w), bad
}

// othelloGenBoard makes a random board: the opening, or cells filled at a random
// density (which gives full boards and positions where one or both sides cannot move).
func othelloGenBoard(rng *rand.Rand) (othelloRefBoard, byte) {
	var b othelloRefBoard
	for r := range b {
		for c := range b[r] {
			b[r][c] = '-'
		}
	}
	side := "BW"[rng.IntN(2)]
	switch k := rng.IntN(10); {
	case k < 4:
		b[3][3], b[3][4], b[4][3], b[4][4] = 'W', 'B', 'B', 'W'
	case k < 5: // full
		for r := range b {
			for c := range b[r] {
				b[r][c] = "BW"[rng.IntN(2)]
			}
		}
	default:
		empty := rng.Float64()
		for r := range b {
			for c := range b[r] {
				if rng.Float64() >= empty {
					b[r][c] = "BW"[rng.IntN(2)]
				}
			}
		}
	}
	return b, side
}

// othelloBadCommands are command lines the framer must reject, the game going on.
var othelloBadCommands = []string{"", "X", "l", "M", "M3", "M345", "M09", "M90", "M3a", " L", "LL", "Q Q", "m35"}

// othelloGenGame appends one random game to in: its board, side and a mix of L, M
// (legal ones mostly, with the pass rule exercised) and some bad and illegal commands,
// ending in Q.
func othelloGenGame(in []byte, rng *rand.Rand, bad bool) []byte {
	b, side := othelloGenBoard(rng)
	for r := range b {
		in = append(in, b[r][:]...)
		in = append(in, '\n')
	}
	in = append(in, side, '\n')
	n := rng.IntN(70)
	for range n {
		switch k := rng.IntN(100); {
		case k < 25:
			in = append(in, "L\n"...)
		case bad && k < 29:
			in = append(in, othelloBadCommands[rng.IntN(len(othelloBadCommands))]...)
			if rng.IntN(2) == 0 {
				in = append(in, " \r"[rng.IntN(2)]) // tolerated trailing blank, or CR
			}
			in = append(in, '\n')
		case bad && k < 33: // any square: mostly illegal
			r, c := rng.IntN(8), rng.IntN(8)
			in = fmt.Appendf(in, "M%d%d\n", r+1, c+1)
			mover := side
			if len(othelloRefMoves(nil, &b, side)) == 0 {
				mover = othelloRefOther(side)
			}
			if othelloRefPlay(&b, mover, r, c) {
				side = othelloRefOther(mover)
			}
		default:
			mover := side
			moves := othelloRefMoves(nil, &b, side)
			if len(moves) == 0 {
				mover = othelloRefOther(side)
				moves = othelloRefMoves(nil, &b, mover)
			}
			if len(moves) == 0 { // the game is over: look once more, and quit
				in = append(in, "L\n"...)
				goto quit
			}
			m := moves[rng.IntN(len(moves))]
			in = fmt.Appendf(in, "M%d%d\n", m[0]+1, m[1]+1)
			othelloRefPlay(&b, mover, m[0], m[1])
			side = othelloRefOther(mover)
		}
	}
quit:
	return append(in, "Q\n"...)
}

// othelloGenContest makes a contest input of sessions of random games.
func othelloGenContest(rng *rand.Rand, sessions int, bad bool) []byte {
	var in []byte
	for range sessions {
		games := 1 + rng.IntN(5)
		in = strconv.AppendInt(in, int64(games), 10)
		in = append(in, '\n')
		for range games {
			in = othelloGenGame(in, rng, bad)
		}
	}
	return in
}
