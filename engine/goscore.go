package engine

import (
	"bytes"
	"encoding/binary"
)

// goscore: area scoring of a 19x19 board dump (seed 000, Go Scoring). A unit is a
// blank spacer line and 19 rows of 19 " X" pairs; the answer is "B W": each colour's
// stones plus the empty regions bordered by that colour only.

const (
	goscoreName = "goscore"
	goscoreSide = 19
	// goscoreRowLen is the length of a row: 19 pairs " X".
	goscoreRowLen = 2 * goscoreSide
	// goscoreMaxLine leaves room for trailing white space after a row's 38 bytes;
	// a longer line is dropped by the reader and breaks its board.
	goscoreMaxLine = 128
)

func init() { Register(goscoreProblem{}) }

type goscoreProblem struct{}

func (goscoreProblem) Name() string { return goscoreName }

func (goscoreProblem) Limits() Limits {
	return Limits{
		MaxLine: goscoreMaxLine, MaxUnit: 1 + goscoreSide*(goscoreMaxLine+1),
		MaxAnswer: maxScoreLine(goscoreSide * goscoreSide),
	}
}

func (goscoreProblem) NewFramer() Framer { return &goscoreFramer{} }

func (goscoreProblem) Append(dst, unit []byte) ([]byte, error) {
	var b GoscoreBoard
	if err := b.Parse(unit); err != nil {
		return dst, err
	}
	return b.Score().AppendText(dst), nil
}

func (goscoreProblem) Solve(unit []byte) (Answer, error) {
	var b GoscoreBoard
	if err := b.Parse(unit); err != nil {
		return nil, err
	}
	return GoscoreAnswer{BoardScore: b.Score(), board: b}, nil
}

// GoscoreBoard is a parsed goscore board.
type GoscoreBoard struct {
	Black, White boardRows
}

// goscoreClass tells which bytes are points.
var goscoreClass = [256]bool{'+': true, '*': true, '@': true, 'O': true}

// Parse reads one unit: the spacer line and 19 rows. Errors are *InputError with the
// line counted from the spacer (1) and the column from 1.
func (b *GoscoreBoard) Parse(unit []byte) error {
	*b = GoscoreBoard{}
	spacer, rest, ok := boardNextLine(unit)
	if !ok {
		return Errorf(goscoreName, 0, "empty unit: want a blank line and 19 rows")
	}
	if !textBlank(spacer) {
		return Errorf(goscoreName, 1, "%s: a board starts with a blank line", boardQuote(spacer))
	}
	for r := 0; r < goscoreSide; r++ {
		var line []byte
		if len(rest) > goscoreRowLen && rest[goscoreRowLen] == '\n' {
			// The usual row: no trailing white space, so no need to search.
			line, rest = rest[:goscoreRowLen], rest[goscoreRowLen+1:]
		} else if line, rest, ok = boardNextLine(rest); !ok {
			return Errorf(goscoreName, r+1, "the board ends after %d of 19 rows", r)
		}
		if err := b.parseRow(r, line); err != nil {
			return err
		}
	}
	if len(rest) > 0 {
		return Errorf(goscoreName, goscoreSide+2, "unexpected line after the 19th row")
	}
	return nil
}

// parseRow reads row r (line r+2 of the unit).
func (b *GoscoreBoard) parseRow(r int, line []byte) error {
	if len(line) < goscoreRowLen || !textBlank(line[goscoreRowLen:]) {
		return goscoreRowError(r, line)
	}
	black, white, ok := goscoreRowBits((*[goscoreRowLen]byte)(line))
	if !ok {
		return goscoreRowError(r, line)
	}
	b.Black[r], b.White[r] = black, white
	return nil
}

// goscoreRowBits reads the points of a row 8 bytes (4 pairs) at a time. The point
// bytes differ in two bits: bit 6 (set in '@' and 'O') and bit 0 (set in '+' and
// 'O'). From those two bits of each point it rebuilds the word a valid row would
// have (spaces, and the one point byte with those bits); any other byte anywhere
// makes the word differ. The black and white bits of the 4 points, one per 16-bit
// lane, are then gathered into 4 adjacent bits by one multiplication.
func goscoreRowBits(row *[goscoreRowLen]byte) (black, white uint32, ok bool) {
	// Words at offsets 0, 8, 16, 24 hold points 0-15; the one at 30 points 15-18.
	b0, w0, x0 := goscoreWord(binary.LittleEndian.Uint64(row[0:8]))
	b1, w1, x1 := goscoreWord(binary.LittleEndian.Uint64(row[8:16]))
	b2, w2, x2 := goscoreWord(binary.LittleEndian.Uint64(row[16:24]))
	b3, w3, x3 := goscoreWord(binary.LittleEndian.Uint64(row[24:32]))
	b4, w4, x4 := goscoreWord(binary.LittleEndian.Uint64(row[30:38]))
	black = b0 | b1<<4 | b2<<8 | b3<<12 | b4<<15
	white = w0 | w1<<4 | w2<<8 | w3<<12 | w4<<15
	return black, white, x0|x1|x2|x3|x4 == 0
}

// goscoreWord reads 4 pairs: their black and white bits, and non-zero bad if the
// word is not 4 valid pairs.
func goscoreWord(w uint64) (black, white uint32, bad uint64) {
	const (
		lanes  = 0x0001000100010001 // bit 0 of each 16-bit lane
		spaces = 0x0020002000200020 // the even bytes of a valid word
		// gather moves lane i's bit 16i to bit 56+i; the other products land
		// below bit 56 or beyond bit 63, without carries.
		gather = 1<<56 | 1<<41 | 1<<26 | 1<<11
	)
	b0 := w >> 8 & lanes
	b6 := w >> 14 & lanes
	wh := b0 & b6
	bl := b6 &^ b0
	want := spaces | ('*'*lanes+b0+('@'-'*')*b6+('O'-'@'-1)*wh)<<8
	return uint32(bl * gather >> 56), uint32(wh * gather >> 56), w ^ want
}

// goscoreRowError names the first thing wrong with a row the fast path rejected.
func goscoreRowError(r int, line []byte) error {
	ln := r + 2
	for i := 0; i < goscoreRowLen; i++ {
		if i >= len(line) {
			return Errorf(goscoreName, ln, "column %d: the row ends after %d of 19 points", i+1, i/2)
		}
		c := line[i]
		if i%2 == 0 {
			if c != ' ' {
				return Errorf(goscoreName, ln, "column %d: %s where a space should precede point %d", i+1, boardQuoteByte(c), i/2+1)
			}
		} else if !goscoreClass[c] {
			return Errorf(goscoreName, ln, "column %d: %s is not one of + * @ O", i+1, boardQuoteByte(c))
		}
	}
	for i := goscoreRowLen; i < len(line); i++ {
		if !textSpace(line[i]) {
			return Errorf(goscoreName, ln, "column %d: %s after the 19th point", i+1, boardQuoteByte(line[i]))
		}
	}
	return Errorf(goscoreName, ln, "bad row") // unreachable when the fast path is right
}

// Score is the area score: stones plus the empty points owned.
func (b *GoscoreBoard) Score() BoardScore {
	ob, ow := boardOwned(&b.Black, &b.White, goscoreSide)
	return BoardScore{Black: boardCount(&b.Black) + ob, White: boardCount(&b.White) + ow}
}

// goscoreFramer cuts a stream into boards. A blank line always starts a board, so a
// board cut short never swallows the next one; a non-blank line where a spacer is due
// is skipped up to the next blank line.
type goscoreFramer struct {
	line  int    // stream lines fed so far
	start int    // stream line of the open board's spacer; 0 when none is open
	rows  int    // rows of the open board so far
	lost  int    // stream line of the open board's first dropped row, or 0
	buf   []byte // the open board's text
	// skipFrom..skipTo are the garbage lines skipped so far; skipFrom 0 when none.
	skipFrom, skipTo int
}

func (f *goscoreFramer) Feed(dst []Frame, line []byte) []Frame {
	f.line++
	switch {
	case textBlank(line):
		dst = f.endSkip(dst)
		if f.start != 0 && f.rows > 0 {
			dst = append(dst, Frame{Line: f.start, Err: Errorf(goscoreName, f.start,
				"board cut short after %d of 19 rows by the blank line %d", f.rows, f.line)})
		}
		// Extra blank lines before a board's rows just move its start.
		f.start, f.rows, f.lost = f.line, 0, 0
		f.buf = append(f.buf[:0], '\n')
	case f.start == 0:
		if f.skipFrom == 0 {
			f.skipFrom = f.line
		}
		f.skipTo = f.line
	default:
		f.rows++
		if line == nil {
			if f.lost == 0 {
				f.lost = f.line
			}
		} else {
			f.buf = append(f.buf, line...)
			f.buf = append(f.buf, '\n')
		}
		if f.rows == goscoreSide {
			if f.lost != 0 {
				dst = append(dst, Frame{Line: f.start, Err: Errorf(goscoreName, f.lost,
					"row %d of the board at line %d was dropped (too long or unreadable)", f.lost-f.start, f.start)})
			} else {
				dst = append(dst, Frame{Line: f.start, Unit: f.buf})
			}
			f.start, f.rows, f.lost = 0, 0, 0
		}
	}
	return dst
}

// goscoreUnitLen is the length of a board in the fixed layout: "\n" and 19 rows of
// exactly 38 bytes and their "\n".
const goscoreUnitLen = 1 + goscoreSide*(goscoreRowLen+1)

// feedBlock takes a board in the fixed layout straight from the stream's text: when
// no board is open, text starts with a blank line and the next 19 lines are 38 bytes
// each, the board is scored in place, without copying its rows. Anything else, and a
// board that does not parse (whose rows the framer may cut differently), goes through
// Feed line by line.
func (f *goscoreFramer) feedBlock(s *contestStream, text []byte) {
	for len(text) > 0 && s.werr == nil {
		if f.rows == 0 && f.skipFrom == 0 && goscoreFixedLayout(text) {
			out, err := goscoreProblem{}.Append(s.out, text[:goscoreUnitLen])
			if err == nil {
				s.out = out
				s.line += 1 + goscoreSide
				f.line += 1 + goscoreSide
				f.start, f.rows, f.lost = 0, 0, 0
				text = text[goscoreUnitLen:]
				if len(s.out) >= contestFlush {
					s.flush()
				}
				continue
			}
		}
		i := bytes.IndexByte(text, '\n')
		s.feedLine(text[:i], 1)
		text = text[i+1:]
	}
}

// goscoreFixedLayout reports whether text starts with a board in the fixed layout: an
// empty line and 19 lines of 38 bytes. Only the 20 line ends are checked; the rows'
// bytes are the parser's.
func goscoreFixedLayout(text []byte) bool {
	if len(text) < goscoreUnitLen || text[0] != '\n' {
		return false
	}
	for k := 1 + goscoreRowLen; k < goscoreUnitLen; k += goscoreRowLen + 1 {
		if text[k] != '\n' {
			return false
		}
	}
	return true
}

// endSkip reports the garbage lines skipped so far, if any.
func (f *goscoreFramer) endSkip(dst []Frame) []Frame {
	if f.skipFrom == 0 {
		return dst
	}
	from := f.skipFrom
	var err error
	if f.skipFrom == f.skipTo {
		err = Errorf(goscoreName, f.skipFrom, "line skipped: a board starts with a blank line")
	} else {
		err = Errorf(goscoreName, f.skipFrom, "lines %d-%d skipped: a board starts with a blank line", f.skipFrom, f.skipTo)
	}
	f.skipFrom, f.skipTo = 0, 0
	return append(dst, Frame{Line: from, Err: err})
}

func (f *goscoreFramer) End(dst []Frame) []Frame {
	dst = f.endSkip(dst)
	if f.start != 0 && f.rows > 0 {
		dst = append(dst, Frame{Line: f.start, Err: Errorf(goscoreName, f.start,
			"board cut short after %d of 19 rows by the end of input", f.rows)})
	}
	f.start, f.rows, f.lost = 0, 0, 0
	return dst
}

func (f *goscoreFramer) Reset() int {
	n := 0
	if f.start != 0 {
		n += 1 + f.rows
	}
	if f.skipFrom != 0 {
		n += f.skipTo - f.skipFrom + 1
	}
	*f = goscoreFramer{buf: f.buf[:0]}
	return n
}
