package engine

// Othello's board: the position as two bitboards, the legal moves and the flips of
// a move, and the contest's text of a board, a move list and a count.

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

const (
	othelloName     = "othello"
	othelloMaxGames = 1000000
	// A row is 8 cells and a command 3 bytes; the slack is for trailing blanks.
	othelloMaxLine = 64
	// The framer's units are at most 1+8*9+2+4 = 79 bytes.
	othelloMaxUnit = 200
)

// OthelloSide is a player; its zero value is Black.
type OthelloSide uint8

// The two players.
const (
	OthelloBlack OthelloSide = 0
	OthelloWhite OthelloSide = 1
)

// Other returns the opponent.
func (s OthelloSide) Other() OthelloSide { return s ^ 1 }

// Letter returns 'B' or 'W', as on the board.
func (s OthelloSide) Letter() byte {
	if s == OthelloWhite {
		return 'W'
	}
	return 'B'
}

func (s OthelloSide) String() string {
	if s == OthelloWhite {
		return "White"
	}
	return "Black"
}

// OthelloPosition is a board and the side to move. Square (r,c), both 1..8, is bit
// OthelloSquare(r,c) of Black or White, so ascending bits are row-major order: the
// order the contest lists moves in.
type OthelloPosition struct {
	Black, White uint64
	Side         OthelloSide
}

// OthelloSquare returns the bit index of row r, column c (both 1..8).
func OthelloSquare(r, c int) int { return (r-1)*8 + c - 1 }

// OthelloStart is the standard opening position, Black to move.
var OthelloStart = OthelloPosition{
	Black: 1<<OthelloSquare(4, 5) | 1<<OthelloSquare(5, 4),
	White: 1<<OthelloSquare(4, 4) | 1<<OthelloSquare(5, 5),
}

// sides returns the disks of the side to move and of its opponent.
func (p *OthelloPosition) sides() (own, opp uint64) {
	if p.Side == OthelloWhite {
		return p.White, p.Black
	}
	return p.Black, p.White
}

// Moves returns the legal moves of the side to move, a bit per square.
func (p *OthelloPosition) Moves() uint64 {
	own, opp := p.sides()
	return othelloMoves(own, opp)
}

// Flips returns the disks a move of the side to move at square sq would turn over;
// none means the move is illegal.
func (p *OthelloPosition) Flips(sq int) uint64 {
	own, opp := p.sides()
	return othelloFlips(own, opp, sq)
}

// Play makes the contest's move at square sq: if the side to move has no legal move,
// the other side moves instead. It returns the side that moved, and false (with the
// position unchanged) if the move is illegal for that side.
func (p *OthelloPosition) Play(sq int) (OthelloSide, bool) {
	mover := p.Side
	own, opp := p.sides()
	// A move that flips something is legal for the side to move, which therefore does
	// not pass: the full move generation is only needed when it flips nothing.
	flips := othelloFlips(own, opp, sq)
	if flips == 0 {
		if othelloMoves(own, opp) != 0 {
			return mover, false
		}
		mover = mover.Other()
		own, opp = opp, own
		if flips = othelloFlips(own, opp, sq); flips == 0 {
			return mover, false
		}
	}
	own |= flips | 1<<sq
	opp &^= flips
	if mover == OthelloWhite {
		p.White, p.Black = own, opp
	} else {
		p.Black, p.White = own, opp
	}
	p.Side = mover.Other()
	return mover, true
}

// Count returns the number of black and white disks.
func (p *OthelloPosition) Count() (black, white int) {
	return bits.OnesCount64(p.Black), bits.OnesCount64(p.White)
}

// AppendBoard appends the 8 rows of the board, as the contest prints them. Black and
// White must not share a square.
func (p *OthelloPosition) AppendBoard(dst []byte) []byte {
	var rows [72]byte
	for r := range 8 {
		black := othelloSpreadBits(byte(p.Black >> (r * 8)))
		white := othelloSpreadBits(byte(p.White >> (r * 8)))
		// Per byte: '-' (45), or 'B' (45+21), or 'W' (45+42); no byte carries.
		binary.LittleEndian.PutUint64(rows[r*9:], 0x2d2d2d2d2d2d2d2d+black*21+white*42)
		rows[r*9+8] = '\n'
	}
	return append(dst, rows[:]...)
}

// othelloSpreadBits turns the 8 bits of b into 8 bytes of 0 or 1, bit 0 in the first
// byte: the inverse of othelloBytesEqual, for writing a row without a branch per cell.
func othelloSpreadBits(b byte) uint64 {
	const ones, low7, diagonal = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8040201008040201
	x := uint64(b) * ones & diagonal // byte k keeps bit k
	return ((x&low7 + low7) | x) >> 7 & ones
}

// OthelloAppendMoves appends the contest's answer to L for a set of moves.
func OthelloAppendMoves(dst []byte, moves uint64) []byte {
	if moves == 0 {
		return append(dst, "No legal move.\n"...)
	}
	for sep := false; moves != 0; moves &= moves - 1 {
		sq := bits.TrailingZeros64(moves)
		if sep {
			dst = append(dst, ' ')
		}
		sep = true
		dst = append(dst, '(', byte('1'+sq/8), ',', byte('1'+sq%8), ')')
	}
	return append(dst, '\n')
}

// OthelloAppendCount appends the contest's answer to M, "Black - %2d White - %2d".
func OthelloAppendCount(dst []byte, black, white int) []byte {
	dst = append(dst, "Black - "...)
	dst = othelloAppend2d(dst, black)
	dst = append(dst, " White - "...)
	dst = othelloAppend2d(dst, white)
	return append(dst, '\n')
}

// othelloAppend2d is %2d for 0..64, without fmt's allocations.
func othelloAppend2d(dst []byte, n int) []byte {
	if n < 10 {
		return append(dst, ' ', byte('0'+n))
	}
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

// Where a shift may land without having wrapped around a row's end: a shift towards
// higher columns never lands in column 1, one towards lower columns never in column 8.
const (
	othelloNotCol1 uint64 = 0xfefefefefefefefe
	othelloNotCol8 uint64 = 0x7f7f7f7f7f7f7f7f
	othelloAll     uint64 = ^uint64(0)
)

// othelloMoves is the legal moves of own against opp: in each of the 8 directions,
// the runs of opp disks next to own disks (at most 6 long), and the empty square past
// each run.
func othelloMoves(own, opp uint64) uint64 {
	empty := ^(own | opp)
	// One line an axis: along the row, the column, and the two diagonals. Written
	// out: a loop over a table of the directions costs half as much again.
	return othelloMovesUp(own, opp, empty, 1, othelloNotCol1) | othelloMovesDown(own, opp, empty, 1, othelloNotCol8) |
		othelloMovesUp(own, opp, empty, 8, othelloAll) | othelloMovesDown(own, opp, empty, 8, othelloAll) |
		othelloMovesUp(own, opp, empty, 9, othelloNotCol1) | othelloMovesDown(own, opp, empty, 9, othelloNotCol8) |
		othelloMovesUp(own, opp, empty, 7, othelloNotCol8) | othelloMovesDown(own, opp, empty, 7, othelloNotCol1)
}

// othelloMovesUp is one direction of othelloMoves, towards higher bits by s.
func othelloMovesUp(own, opp, empty uint64, s uint, land uint64) uint64 {
	return othelloRunUp(own, opp&land, s) << s & land & empty
}

// othelloMovesDown is one direction of othelloMoves, towards lower bits by s.
func othelloMovesDown(own, opp, empty uint64, s uint, land uint64) uint64 {
	return othelloRunDown(own, opp&land, s) >> s & land & empty
}

// othelloFlips is the opp disks a move of own at sq brackets; 0 if sq is occupied.
func othelloFlips(own, opp uint64, sq int) uint64 {
	m := uint64(1) << (sq & 63)
	if (own|opp)&m != 0 {
		return 0
	}
	// The axes as in othelloMoves.
	return othelloFlipsUp(own, opp, m, 1, othelloNotCol1) | othelloFlipsDown(own, opp, m, 1, othelloNotCol8) |
		othelloFlipsUp(own, opp, m, 8, othelloAll) | othelloFlipsDown(own, opp, m, 8, othelloAll) |
		othelloFlipsUp(own, opp, m, 9, othelloNotCol1) | othelloFlipsDown(own, opp, m, 9, othelloNotCol8) |
		othelloFlipsUp(own, opp, m, 7, othelloNotCol8) | othelloFlipsDown(own, opp, m, 7, othelloNotCol1)
}

// othelloFlipsUp is the run of opp disks from m towards higher bits by s, if an own
// disk closes it.
func othelloFlipsUp(own, opp, m uint64, s uint, land uint64) uint64 {
	// The call sits in the if, and the else is spelled out, so that othelloFlips
	// compiles to the same code as with the run written out here: with x on a line
	// of its own, go1.26 leaves the inlined call's mark in it, a NOP per direction.
	if x := othelloRunUp(m, opp&land, s); x<<s&land&own == 0 {
		return 0
	} else {
		return x
	}
}

// othelloFlipsDown is othelloFlipsUp towards lower bits.
func othelloFlipsDown(own, opp, m uint64, s uint, land uint64) uint64 {
	if x := othelloRunDown(m, opp&land, s); x>>s&land&own == 0 {
		return 0
	} else {
		return x
	}
}

// othelloRunUp is the squares of o reached from the squares of seed by steps of s
// towards higher bits, through o only: the runs of opp disks that move generation
// looks past, and that a move flips when an own disk closes them. Six steps
// suffice: between two squares of a line lie at most six.
func othelloRunUp(seed, o uint64, s uint) uint64 {
	x := seed << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	return x
}

// othelloRunDown is othelloRunUp towards lower bits.
func othelloRunDown(seed, o uint64, s uint) uint64 {
	x := seed >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	return x
}

// othelloMoveError says why the contest's move at sq is illegal in p.
func othelloMoveError(p OthelloPosition, sq int) string {
	r, c := sq/8+1, sq%8+1
	mover := p.Side
	pass := ""
	if p.Moves() == 0 {
		mover = mover.Other()
		pass = fmt.Sprintf("%v has no legal move, so the move is %v's, and ", p.Side, mover)
		p.Side = mover
		if p.Moves() == 0 {
			return fmt.Sprintf("M%d%d: neither Black nor White has a legal move", r, c)
		}
	}
	if (p.Black|p.White)&(1<<sq) != 0 {
		return fmt.Sprintf("M%d%d: %s(%d,%d) is occupied", r, c, pass, r, c)
	}
	return fmt.Sprintf("M%d%d: %s(%d,%d) brackets no disk for %v", r, c, pass, r, c, mover)
}
