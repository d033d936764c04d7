package engine

import (
	"bytes"
	"fmt"
	"math/bits"
	"strconv"
)

// The Go problems (goscore, territory, replay) share one board core: a board of up to
// 19x19 points kept as one uint32 bitmask per row, bit c standing for column c. Whole
// rows are combined at once, so a flood fill moves a whole run of a row per step.

// boardMax is the largest board side any of the Go problems allows.
const boardMax = 19

// boardRows is a set of points: row r holds bit c for the point (r, c).
type boardRows [boardMax]uint32

// boardRowMask is the set of columns of an n-wide board.
func boardRowMask(n int) uint32 { return 1<<uint(n) - 1 }

// boardCount is the number of points in the set.
func boardCount(s *boardRows) int {
	c := 0
	for _, r := range s {
		c += bits.OnesCount32(r)
	}
	return c
}

// A flood runs on uint64 rows holding two sets at once: one in bits 0-18 and one in
// bits boardHi to boardHi+18. The gap keeps them apart: a carry out of the low set
// stops in bit 19, and a shift by at most 16 moves the high set no lower than bit 24.
const boardHi = 40

// boardRunMasks holds, for one row of a region, the masks of columns from which a
// fill may move 1, 2, 4, 8 and 16 columns down (towards bit 0) inside the region.
// They depend on the region only, so a flood computes them once per row and reuses
// them on every sweep.
type boardRunMasks [5]uint64

func boardRunMasksOf(m uint64) boardRunMasks {
	p2 := m & (m >> 1)
	p4 := p2 & (p2 >> 2)
	p8 := p4 & (p4 >> 4)
	return boardRunMasks{m, p2, p4, p8, p8 & (p8 >> 8)}
}

// boardRowFill returns the runs of m (maximal horizontal stretches) that hold a bit
// of s. s must be a subset of m. Towards higher columns a carry does it: adding s to
// m carries from each run's lowest seed to the run's top. Towards lower columns no
// carry helps, so the seeds spread by doubling shifts (5 steps cover 19 columns).
func boardRowFill(m, s uint64, p *boardRunMasks) uint64 {
	up := ((m+s)^m^s)&m | s
	down := s
	down |= p[0] & (down >> 1)
	down |= p[1] & (down >> 2)
	down |= p[2] & (down >> 4)
	down |= p[3] & (down >> 8)
	down |= p[4] & (down >> 16)
	return up | down
}

// boardRowFillOnce is boardRowFill of one set, for a region used once.
func boardRowFillOnce(m, s uint32) uint32 {
	p := boardRunMasksOf(uint64(m))
	return uint32(boardRowFill(uint64(m), uint64(s), &p))
}

// boardOwned counts the empty points owned by each colour: the points of empty
// regions that border stones of that colour only. A region bordering no stone at all
// belongs to nobody.
//
// The regions are never labelled. Two floods through the empty points, one from the
// empty points next to a black stone and one from those next to a white stone, reach
// exactly the regions bordering black and those bordering white; black owns what only
// the first reached. Both floods run at once, black's in the low bits of each row and
// white's in the high ones.
func boardOwned(black, white *boardRows, n int) (b, w int) {
	var (
		empty, fill [boardMax]uint64
		masks       [boardMax]boardRunMasks
	)
	n = min(n, boardMax)
	full := boardRowMask(n)
	for r := 0; r < n; r++ {
		e := full &^ (black[r] | white[r])
		nb := black[r]<<1 | black[r]>>1
		nw := white[r]<<1 | white[r]>>1
		if r > 0 {
			nb |= black[r-1]
			nw |= white[r-1]
		}
		if r+1 < n {
			nb |= black[r+1]
			nw |= white[r+1]
		}
		e2 := uint64(e) | uint64(e)<<boardHi
		empty[r] = e2
		fill[r] = uint64(nb&e) | uint64(nw&e)<<boardHi
		masks[r] = boardRunMasksOf(e2)
	}
	boardFlood(&empty, &fill, &masks, n)
	for r := 0; r < n; r++ {
		fb, fw := uint32(fill[r]), uint32(fill[r]>>boardHi)
		b += bits.OnesCount32(fb &^ fw)
		w += bits.OnesCount32(fw &^ fb)
	}
	return b, w
}

// boardFlood grows the seed set f, inside m, to the regions of m it touches. Sweeps
// run down the rows and back up, each carrying the fill through any number of rows
// in its direction and along whole runs, until a sweep changes nothing (at least two
// sweeps). A region needs one more sweep each time it turns back on itself.
func boardFlood(m, f *[boardMax]uint64, masks *[boardMax]boardRunMasks, n int) {
	// The first sweep fills each row's runs from its own seeds and from the row
	// above; the later ones only redo a row when its neighbour brings new points.
	var prev uint64
	for r := 0; r < n; r++ {
		f[r] = boardRowFill(m[r], f[r]|prev&m[r], &masks[r])
		prev = f[r]
	}
	for pass := 1; ; pass++ {
		changed := false
		prev = 0
		for i := 0; i < n; i++ {
			r := i
			if pass%2 == 1 {
				r = n - 1 - i // odd passes go back up
			}
			if x := prev & m[r] &^ f[r]; x != 0 {
				f[r] = boardRowFill(m[r], f[r]|x, &masks[r])
				changed = true
			}
			prev = f[r]
		}
		if !changed {
			return
		}
	}
}

// BoardScore is the answer of goscore and replay: the points of each colour.
type BoardScore struct {
	Black int `json:"black"`
	White int `json:"white"`
}

// AppendText appends the contest output line "B W\n".
func (s BoardScore) AppendText(dst []byte) []byte {
	dst = strconv.AppendInt(dst, int64(s.Black), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(s.White), 10)
	return append(dst, '\n')
}

// boardNextLine splits off the first line of text (without its "\n"). A last line
// without "\n" counts as a line; ok is false when text is empty.
func boardNextLine(text []byte) (line, rest []byte, ok bool) {
	if len(text) == 0 {
		return nil, nil, false
	}
	if i := bytes.IndexByte(text, '\n'); i >= 0 {
		return text[:i], text[i+1:], true
	}
	return text, nil, true
}

// boardNextToken splits off the first white-space separated token of a line; tok
// is empty when the line holds no more.
func boardNextToken(line []byte) (tok, rest []byte) {
	i := 0
	for i < len(line) && textSpace(line[i]) {
		i++
	}
	j := i
	for j < len(line) && !textSpace(line[j]) {
		j++
	}
	return line[i:j], line[j:]
}

// boardBig stands for any integer too large to matter: parsing saturates there, so
// no input number can overflow or size anything.
const boardBig = 1 << 30

// boardAtoi parses an optionally signed decimal integer, saturating at ±boardBig.
func boardAtoi(tok []byte) (int, bool) {
	v, next, ok := boardParseInt(tok, 0)
	return v, ok && next == len(tok)
}

// boardParseInt parses an optionally signed decimal integer at s[i:], saturating at
// ±boardBig, and returns the index after it.
func boardParseInt(s []byte, i int) (v, next int, ok bool) {
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for ; i < len(s) && s[i]-'0' <= 9; i++ {
		if v < boardBig {
			v = v*10 + int(s[i]-'0')
		}
	}
	v = min(v, boardBig)
	if neg {
		v = -v
	}
	return v, i, i > start
}

// boardSkipSpace returns the index of the first byte at or after i that is not
// white space.
func boardSkipSpace(s []byte, i int) int {
	for i < len(s) && textSpace(s[i]) {
		i++
	}
	return i
}

// boardQuote quotes input text for an error message, cut to a readable length.
func boardQuote(b []byte) string {
	const max = 40
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}

// boardQuoteByte quotes one input byte for an error message.
func boardQuoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return fmt.Sprintf("byte 0x%02x", c)
}
