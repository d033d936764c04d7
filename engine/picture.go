package engine

import "math/bits"

// What pictures and game records need beyond the score: the final position, who owns
// each empty point, the moves as played. Solve's answers carry the compact state they
// already have (a few bitboards, copied by value); the position is expanded only when
// asked for, so the workers' hot path pays nothing for it, and none of it is in the
// answers' JSON.

// The states of a point in a GoPosition.
const (
	PointEmpty uint8 = iota
	PointBlack
	PointWhite
)

// GoPosition is a square Go board, its points row-major: point (r, c) is r*Size+c,
// row 0 at the top.
type GoPosition struct {
	Size int
	// Stones holds PointEmpty, PointBlack or PointWhite per point.
	Stones []uint8
	// Owner holds, per empty point, PointBlack or PointWhite when its empty region
	// borders stones of that colour only (the points each side's score counts), and
	// PointEmpty otherwise. Stones are owned by nobody here.
	Owner []uint8
}

// Count returns the stones of each colour and the empty points each owns.
func (p GoPosition) Count() (black, white, ownBlack, ownWhite int) {
	for i, s := range p.Stones {
		switch s {
		case PointBlack:
			black++
		case PointWhite:
			white++
		}
		switch p.Owner[i] {
		case PointBlack:
			ownBlack++
		case PointWhite:
			ownWhite++
		}
	}
	return black, white, ownBlack, ownWhite
}

// boardPosition expands two bitboards of an n x n board, with the ownership of the
// empty regions found by a plain flood (this is for pictures, not the hot path).
func boardPosition(n int, black, white *boardRows) GoPosition {
	p := GoPosition{Size: n, Stones: make([]uint8, n*n), Owner: make([]uint8, n*n)}
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			switch {
			case black[r]>>uint(c)&1 != 0:
				p.Stones[r*n+c] = PointBlack
			case white[r]>>uint(c)&1 != 0:
				p.Stones[r*n+c] = PointWhite
			}
		}
	}
	seen := make([]bool, n*n)
	var region, stack []int
	for start := range p.Stones {
		if p.Stones[start] != PointEmpty || seen[start] {
			continue
		}
		region, stack = region[:0], append(stack[:0], start)
		seen[start] = true
		var borders uint8 // bit PointBlack, bit PointWhite
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			region = append(region, i)
			r, c := i/n, i%n
			for _, d := range [4][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
				rr, cc := r+d[0], c+d[1]
				if rr < 0 || rr >= n || cc < 0 || cc >= n {
					continue
				}
				j := rr*n + cc
				if s := p.Stones[j]; s != PointEmpty {
					borders |= 1 << s
				} else if !seen[j] {
					seen[j] = true
					stack = append(stack, j)
				}
			}
		}
		owner := PointEmpty
		switch borders {
		case 1 << PointBlack:
			owner = PointBlack
		case 1 << PointWhite:
			owner = PointWhite
		}
		for _, i := range region {
			p.Owner[i] = owner
		}
	}
	return p
}

// GoscoreAnswer is goscore's structured answer: the score, and the board it came from.
// It marshals as its BoardScore alone.
type GoscoreAnswer struct {
	BoardScore
	board GoscoreBoard
}

// Position is the board with each empty point's owner.
func (a GoscoreAnswer) Position() GoPosition {
	return boardPosition(goscoreSide, &a.board.Black, &a.board.White)
}

// ReplayAnswer is replay's structured answer: the score, and the final position of
// the game. It marshals as its BoardScore alone.
type ReplayAnswer struct {
	BoardScore
	game ReplayGame
}

// Position is the final position with each empty point's owner.
func (a ReplayAnswer) Position() GoPosition {
	return boardPosition(a.game.N, &a.game.Black, &a.game.White)
}

// Captures returns the stones each side captured: white ones by Black, black ones by
// White.
func (a ReplayAnswer) Captures() (byBlack, byWhite int) {
	return a.game.CapturedByBlack, a.game.CapturedByWhite
}

// ReplayMove is one placement of a replay unit, on the board: row 0 is y = -h, column
// 0 is x = -h, for a board of side 2h+1.
type ReplayMove struct {
	White    bool
	Row, Col int
}

// ReplayMoves lists the placements of a replay unit, in order, for game records. The
// unit must be one Solve accepted; otherwise the error says where it is wrong.
func ReplayMoves(unit []byte) (size int, moves []ReplayMove, err error) {
	var g ReplayGame
	if err := g.Play(unit); err != nil {
		return 0, nil, err
	}
	_, rest, _ := boardNextLine(unit)
	h := (g.N - 1) / 2
	for {
		line, r, ok := boardNextLine(rest)
		if !ok {
			break
		}
		rest = r
		white, x, y, ok := replayParseMove(line)
		if !ok {
			break // after the last placement: Play accepted the unit, so only blanks
		}
		moves = append(moves, ReplayMove{White: white, Row: y + h, Col: x + h})
	}
	return g.N, moves, nil
}

// TerritoryAnswer is territory's structured answer: the result, and the board it
// came from. It marshals as its TerritoryScore alone.
type TerritoryAnswer struct {
	TerritoryScore
	n            int
	black, white boardRows
}

// Position is the board with each empty point's owner.
func (a TerritoryAnswer) Position() GoPosition { return boardPosition(a.n, &a.black, &a.white) }

// OthelloAnswer is othello's structured answer to one command.
type OthelloAnswer = othelloAnswer

// Command is 'L', 'M' or 'Q'.
func (a othelloAnswer) Command() byte { return a.cmd }

// Position is the board after the command, and the side to move then.
func (a othelloAnswer) Position() OthelloPosition { return a.pos }

// Legal is, after L, the legal moves of Player (a bit per square, as OthelloSquare).
func (a othelloAnswer) Legal() uint64 { return a.moves }

// Move is, after M, the square played (as OthelloSquare).
func (a othelloAnswer) Move() int { return a.sq }

// Player is whose moves L listed, or who moved on M.
func (a othelloAnswer) Player() OthelloSide { return a.player }

// CaptureWindow is a part of a capture game's final board: the columns X..X+W-1 and
// rows Y..Y+H-1, never more than the board holds nor more than CaptureWindowMax on a
// side, however large S is.
type CaptureWindow struct {
	X, Y, W, H int
	// Stones holds PointEmpty, PointBlack or PointWhite per point of the window,
	// row-major (row y-Y, column x-X).
	Stones []uint8
	// Last are the game's last moves (up to CaptureWindowLast), oldest first; Black
	// played move number First, White the next, and so on.
	Last  []CaptureMove
	First int
}

// The bounds of a CaptureWindow.
const (
	CaptureWindowMax  = 19
	CaptureWindowMin  = 9
	CaptureWindowLast = 8
)

// Window plays the game and returns the part of the final board around its last
// moves: their bounding box, grown to CaptureWindowMin and cut to CaptureWindowMax on
// a side (keeping the very last move inside), and never beyond the board.
func (g *CaptureGame) Window() (CaptureWindow, error) {
	if _, err := g.Play(); err != nil {
		return CaptureWindow{}, err
	}
	var b captureBoard
	moves := make([]captureMove, len(g.Moves))
	for i, m := range g.Moves {
		moves[i] = captureMove{x: int32(m.X), y: int32(m.Y), line: int32(m.Line)}
	}
	if _, err := b.play(g.Size, moves); err != nil {
		return CaptureWindow{}, err
	}
	first := max(0, len(g.Moves)-CaptureWindowLast)
	w := CaptureWindow{Last: g.Moves[first:], First: first + 1}
	if len(w.Last) == 0 {
		w.W, w.H = min(g.Size, CaptureWindowMin), min(g.Size, CaptureWindowMin)
		w.Stones = make([]uint8, w.W*w.H)
		return w, nil
	}
	lastMove := w.Last[len(w.Last)-1]
	span := func(get func(CaptureMove) int) (lo, n int) {
		lo, hi := get(lastMove), get(lastMove)
		for _, m := range w.Last {
			// Only moves that still fit beside the last one widen the box.
			if v := get(m); v < lo && hi-v < CaptureWindowMax {
				lo = v
			} else if v > hi && v-lo < CaptureWindowMax {
				hi = v
			}
		}
		n = min(g.Size, max(hi-lo+1, CaptureWindowMin))
		lo -= (n - (hi - lo + 1)) / 2
		return max(0, min(lo, g.Size-n)), n
	}
	w.X, w.W = span(func(m CaptureMove) int { return m.X })
	w.Y, w.H = span(func(m CaptureMove) int { return m.Y })
	w.Stones = make([]uint8, w.W*w.H)
	for i, m := range g.Moves {
		x, y := m.X-w.X, m.Y-w.Y
		if x < 0 || x >= w.W || y < 0 || y >= w.H {
			continue
		}
		w.Stones[y*w.W+x] = uint8(b.pts[b.moves[i]].color)
	}
	return w, nil
}

// OthelloSquares lists the squares of a bit set, ascending.
func OthelloSquares(set uint64) []int {
	var sq []int
	for ; set != 0; set &= set - 1 {
		sq = append(sq, bits.TrailingZeros64(set))
	}
	return sq
}
