package engine

// Othello's input: a unit's board rows, side and commands parsed, each error with its
// line; the unit run, and its answer as text and JSON.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
)

// othelloTrim drops the trailing blanks (and a CR) the stream may carry.
func othelloTrim(line []byte) []byte {
	for len(line) > 0 {
		switch line[len(line)-1] {
		case ' ', '\t', '\r':
			line = line[:len(line)-1]
		default:
			return line
		}
	}
	return line
}

// othelloParseRow sets row (0..7) of p from line, or says what is wrong with it.
func othelloParseRow(p *OthelloPosition, row int, line []byte) string {
	if line == nil {
		return fmt.Sprintf("board row %d: the line was dropped (too long)", row+1)
	}
	t := othelloTrim(line)
	if len(t) != 8 {
		return fmt.Sprintf("board row %d %q: %d cells, want 8 of '-', 'B' and 'W'", row+1, t, len(t))
	}
	// Eight cells at once: the cells of real boards are unpredictable, and a branch on
	// each one cost most of Append's time.
	x := binary.LittleEndian.Uint64(t)
	black, white := othelloBytesEqual(x, 'B'), othelloBytesEqual(x, 'W')
	if black|white|othelloBytesEqual(x, '-') != 0xff {
		c := 0
		for t[c] == '-' || t[c] == 'B' || t[c] == 'W' {
			c++
		}
		return fmt.Sprintf("board row %d %q: column %d is %q, want '-', 'B' or 'W'", row+1, t, c+1, rune(t[c]))
	}
	p.Black |= black << (row * 8)
	p.White |= white << (row * 8)
	return ""
}

// othelloBytesEqual returns a bit for each of the 8 bytes of x equal to c, the first
// byte's in bit 0.
func othelloBytesEqual(x uint64, c byte) uint64 {
	const ones, low7, high = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	y := x ^ ones*uint64(c)
	// A byte's high bit ends up clear exactly when the byte of y is zero; adding
	// within 7 bits never carries into the next byte.
	zero := ^((y&low7 + low7) | y) & high
	// Gather the 8 high bits into the top byte: the multiplier's terms never collide.
	return (zero >> 7) * 0x0102040810204080 >> 56
}

// othelloParseSide sets the side to move of p from line, or says what is wrong.
func othelloParseSide(p *OthelloPosition, line []byte) string {
	t := othelloTrim(line)
	switch {
	case line == nil:
		return "side to move: the line was dropped (too long)"
	case len(t) == 1 && t[0] == 'B':
		p.Side = OthelloBlack
	case len(t) == 1 && t[0] == 'W':
		p.Side = OthelloWhite
	default:
		return fmt.Sprintf("side to move %q: want B or W", t)
	}
	return ""
}

// othelloParseCommand reads L, Q or Mrc (sq is the move's square), or says what is
// wrong.
func othelloParseCommand(line []byte) (cmd byte, sq int, msg string) {
	if line == nil {
		return 0, 0, "command: the line was dropped (too long)"
	}
	t := othelloTrim(line)
	switch {
	case len(t) == 1 && (t[0] == 'L' || t[0] == 'Q'):
		return t[0], 0, ""
	case len(t) == 3 && t[0] == 'M' && othelloDigit(t[1]) && othelloDigit(t[2]):
		r, c := int(t[1]-'0'), int(t[2]-'0')
		switch {
		case r < 1 || r > 8:
			return 0, 0, fmt.Sprintf("%s: row %d is off the board", t, r)
		case c < 1 || c > 8:
			return 0, 0, fmt.Sprintf("%s: column %d is off the board", t, c)
		}
		return 'M', OthelloSquare(r, c), ""
	case len(t) > 0 && t[0] == 'M':
		return 0, 0, fmt.Sprintf("%q: want M and two digits, the row and column 1-8", t)
	}
	return 0, 0, fmt.Sprintf("%q: want a command, L, Mrc or Q", t)
}

func othelloDigit(b byte) bool { return b >= '0' && b <= '9' }

// othelloParseCount reads a game count, or says what is wrong.
func othelloParseCount(line []byte) (int, string) {
	if line == nil {
		return 0, "number of games: the line was dropped (too long)"
	}
	t := textTrim(line)
	n := 0
	for _, ch := range t {
		if !othelloDigit(ch) {
			return 0, fmt.Sprintf("%q: want the number of games, a positive integer", t)
		}
		if n = n*10 + int(ch-'0'); n > othelloMaxGames {
			return 0, fmt.Sprintf("%q: more than %d games", t, othelloMaxGames)
		}
	}
	if n == 0 {
		return 0, fmt.Sprintf("%q: want the number of games, a positive integer", t)
	}
	return n, ""
}

// othelloUnit is one parsed unit: a position and one command.
type othelloUnit struct {
	sep     bool // the answer begins with the blank line between games
	pos     OthelloPosition
	cmd     byte // 'L', 'M' or 'Q'
	sq      int  // the square of an M
	cmdLine int  // the command's line in the unit
}

// othelloLines iterates over the lines of a unit; the last may lack its "\n".
type othelloLines struct {
	rest []byte
	n    int
}

func (ls *othelloLines) next() ([]byte, bool) {
	if len(ls.rest) == 0 {
		return nil, false
	}
	ls.n++
	line := ls.rest
	if len(line) > 8 && line[8] == '\n' && bytes.IndexByte(line[:8], '\n') < 0 {
		// A board row, as the framer writes it: no search past it.
		line, ls.rest = line[:8], line[9:]
	} else if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line, ls.rest = line[:i], line[i+1:]
	} else {
		ls.rest = nil
	}
	return line, true
}

func othelloUnitError(line int, format string, args ...any) error {
	return Errorf(othelloName, line, format, args...)
}

// parse reads a unit as the framer emits it: an optional blank line, 8 board rows,
// the side to move and one command. Trailing blank lines are tolerated, for units
// written by hand.
func (u *othelloUnit) parse(unit []byte) error {
	ls := othelloLines{rest: unit}
	line, ok := ls.next()
	if !ok {
		return othelloUnitError(1, "empty unit: want 8 board rows, the side to move and a command")
	}
	if textBlank(line) {
		u.sep = true
		line, ok = ls.next()
	}
	for row := 0; row < 8; row++ {
		if !ok {
			return othelloUnitError(ls.n+1, "the unit ends after %d of 8 board rows", row)
		}
		if msg := othelloParseRow(&u.pos, row, line); msg != "" {
			return othelloUnitError(ls.n, "%s", msg)
		}
		line, ok = ls.next()
	}
	if !ok {
		return othelloUnitError(ls.n+1, "the unit ends before the side to move")
	}
	if msg := othelloParseSide(&u.pos, line); msg != "" {
		return othelloUnitError(ls.n, "%s", msg)
	}
	if line, ok = ls.next(); !ok {
		return othelloUnitError(ls.n+1, "the unit ends before its command")
	}
	cmd, sq, msg := othelloParseCommand(line)
	if msg != "" {
		return othelloUnitError(ls.n, "%s", msg)
	}
	u.cmd, u.sq, u.cmdLine = cmd, sq, ls.n
	for {
		line, ok := ls.next()
		if !ok {
			return nil
		}
		if !textBlank(line) {
			return othelloUnitError(ls.n, "%q after the command: a unit holds one command", othelloTrim(line))
		}
	}
}

// othelloAnswer is the answer to one unit.
type othelloAnswer struct {
	sep    bool
	cmd    byte
	player OthelloSide     // L: whose moves; M: who moved
	moves  uint64          // L
	sq     int             // M
	pos    OthelloPosition // M, Q: the board after the command
}

// runInto answers the unit's command into *a, which it overwrites: the framer's
// answers go through one othelloAnswer instead of copies of it.
func (u *othelloUnit) runInto(a *othelloAnswer) error {
	// The whole answer is overwritten: nothing of the framer's previous one survives.
	*a = othelloAnswer{sep: u.sep, cmd: u.cmd, player: u.pos.Side, sq: u.sq, pos: u.pos}
	switch u.cmd {
	case 'L':
		a.moves = a.pos.Moves()
	case 'M':
		mover, ok := a.pos.Play(u.sq)
		if !ok {
			return othelloUnitError(u.cmdLine, "%s", othelloMoveError(u.pos, u.sq))
		}
		a.player = mover
	}
	return nil
}

// AppendText appends the contest output for the unit.
func (a othelloAnswer) AppendText(dst []byte) []byte { return a.appendText(dst) }

// appendText is AppendText without a copy of the answer, for the framer.
func (a *othelloAnswer) appendText(dst []byte) []byte {
	if a.sep {
		dst = append(dst, '\n')
	}
	switch a.cmd {
	case 'L':
		return OthelloAppendMoves(dst, a.moves)
	case 'M':
		b, w := a.pos.Count()
		return OthelloAppendCount(dst, b, w)
	}
	return a.pos.AppendBoard(dst)
}

// MarshalJSON gives each command its own shape:
//
//	{"command":"L","player":"B","moves":["(3,5)","(4,6)"]}
//	{"command":"M","move":"(3,5)","player":"W","black":1,"white":4}
//	{"command":"Q","board":["--------",...]}
func (a othelloAnswer) MarshalJSON() ([]byte, error) {
	switch a.cmd {
	case 'L':
		moves := make([]string, 0, bits.OnesCount64(a.moves))
		for m := a.moves; m != 0; m &= m - 1 {
			moves = append(moves, othelloSquareName(bits.TrailingZeros64(m)))
		}
		return json.Marshal(struct {
			Command string   `json:"command"`
			Player  string   `json:"player"`
			Moves   []string `json:"moves"`
		}{"L", string(a.player.Letter()), moves})
	case 'M':
		b, w := a.pos.Count()
		return json.Marshal(struct {
			Command string `json:"command"`
			Move    string `json:"move"`
			Player  string `json:"player"`
			Black   int    `json:"black"`
			White   int    `json:"white"`
		}{"M", othelloSquareName(a.sq), string(a.player.Letter()), b, w})
	}
	text := a.pos.AppendBoard(nil)
	board := make([]string, 8)
	for i := range board {
		board[i] = string(text[i*9 : i*9+8])
	}
	return json.Marshal(struct {
		Command string   `json:"command"`
		Board   []string `json:"board"`
	}{"Q", board})
}

func othelloSquareName(sq int) string { return fmt.Sprintf("(%d,%d)", sq/8+1, sq%8+1) }
