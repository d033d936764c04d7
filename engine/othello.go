package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
)

// Othello (seed 003, 1992 ACM finals): a count of games; per game 8 board rows, the
// side to move, then commands L (list the legal moves), Mrc (move) and Q (print the
// board, end the game).
//
// The daemon answers each command as soon as its line arrives, and any worker may
// serve it, so a unit is one command together with the position it applies to: the
// framer keeps the position, applying each move with the same code Append uses.

func init() { Register(othelloProblem{}) }

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
	return othelloMovesUp(own, opp, empty, 1, othelloNotCol1) |
		othelloMovesDown(own, opp, empty, 1, othelloNotCol8) |
		othelloMovesUp(own, opp, empty, 8, othelloAll) |
		othelloMovesDown(own, opp, empty, 8, othelloAll) |
		othelloMovesUp(own, opp, empty, 9, othelloNotCol1) |
		othelloMovesDown(own, opp, empty, 9, othelloNotCol8) |
		othelloMovesUp(own, opp, empty, 7, othelloNotCol8) |
		othelloMovesDown(own, opp, empty, 7, othelloNotCol1)
}

// othelloMovesUp is one direction of othelloMoves, towards higher bits by s.
func othelloMovesUp(own, opp, empty uint64, s uint, land uint64) uint64 {
	o := opp & land
	x := own << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	return x << s & land & empty
}

// othelloMovesDown is one direction of othelloMoves, towards lower bits by s.
func othelloMovesDown(own, opp, empty uint64, s uint, land uint64) uint64 {
	o := opp & land
	x := own >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	return x >> s & land & empty
}

// othelloFlips is the opp disks a move of own at sq brackets; 0 if sq is occupied.
func othelloFlips(own, opp uint64, sq int) uint64 {
	m := uint64(1) << (sq & 63)
	if (own|opp)&m != 0 {
		return 0
	}
	return othelloFlipsUp(own, opp, m, 1, othelloNotCol1) |
		othelloFlipsDown(own, opp, m, 1, othelloNotCol8) |
		othelloFlipsUp(own, opp, m, 8, othelloAll) |
		othelloFlipsDown(own, opp, m, 8, othelloAll) |
		othelloFlipsUp(own, opp, m, 9, othelloNotCol1) |
		othelloFlipsDown(own, opp, m, 9, othelloNotCol8) |
		othelloFlipsUp(own, opp, m, 7, othelloNotCol8) |
		othelloFlipsDown(own, opp, m, 7, othelloNotCol1)
}

// othelloFlipsUp is the run of opp disks from m towards higher bits by s, if an own
// disk closes it.
func othelloFlipsUp(own, opp, m uint64, s uint, land uint64) uint64 {
	o := opp & land
	x := m << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	x |= x << s & o
	if x<<s&land&own == 0 {
		return 0
	}
	return x
}

// othelloFlipsDown is othelloFlipsUp towards lower bits.
func othelloFlipsDown(own, opp, m uint64, s uint, land uint64) uint64 {
	o := opp & land
	x := m >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	x |= x >> s & o
	if x>>s&land&own == 0 {
		return 0
	}
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

// othelloBlank reports whether a line that did reach the framer holds nothing.
func othelloBlank(line []byte) bool {
	return line != nil && len(bytes.TrimSpace(line)) == 0
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
	t := bytes.TrimSpace(line)
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
	if othelloBlank(line) {
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
		if !othelloBlank(line) {
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

// run answers the unit's command.
func (u *othelloUnit) run() (othelloAnswer, error) {
	var a othelloAnswer
	err := u.runInto(&a)
	return a, err
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

type othelloProblem struct{}

func (othelloProblem) Name() string { return othelloName }

func (othelloProblem) Limits() Limits {
	return Limits{
		MaxLine: othelloMaxLine, MaxUnit: othelloMaxUnit,
		// The blank line between games, then the longest of the answers: every
		// square a move, "(r,c)" and a blank or the "\n" each.
		MaxAnswer: 1 + 64*len("(r,c) "),
	}
}

func (othelloProblem) NewFramer() Framer { return &othelloFramer{} }

func (othelloProblem) Append(dst, unit []byte) ([]byte, error) {
	var u othelloUnit
	if err := u.parse(unit); err != nil {
		return dst, err
	}
	a, err := u.run()
	if err != nil {
		return dst, err
	}
	return a.AppendText(dst), nil
}

func (othelloProblem) Solve(unit []byte) (Answer, error) {
	var u othelloUnit
	if err := u.parse(unit); err != nil {
		return nil, err
	}
	a, err := u.run()
	if err != nil {
		return nil, err
	}
	return a, nil
}

// What the framer expects next.
type othelloState uint8

const (
	othelloWantCount   othelloState = iota // a game count; blank lines are ignored
	othelloBadCount                        // a game count, after a bad one was reported
	othelloWantBoard                       // board row f.row; blank lines before row 1 are ignored
	othelloWantSide                        // the side to move
	othelloWantCommand                     // L, Mrc or Q
	othelloSkipGame                        // the Q that ends a game with a bad board
)

// othelloFramer keeps the position of the game in play and emits one unit per
// command: the position before it, and the command.
type othelloFramer struct {
	state     othelloState
	line      int // stream lines fed so far
	games     int // the session's game count
	played    int // games of the session that ended
	row       int // board rows read
	boardLine int // the stream line of the board's first row
	pos       OthelloPosition
	gameOut   bool // the game in play emitted a unit
	anyOut    bool // the session emitted a unit: the next game's output needs a blank line
	unit      []byte
	sink      *[]byte // answers go here instead of units (see answerer)
	cmd       othelloUnit
	answer    othelloAnswer
}

func (f *othelloFramer) answerInto(out *[]byte) { f.sink = out }

func (f *othelloFramer) fail(dst []Frame, first, line int, format string, args ...any) []Frame {
	return append(dst, Frame{Line: first, Err: Errorf(othelloName, line, format, args...)})
}

func (f *othelloFramer) Feed(dst []Frame, line []byte) []Frame {
	f.line++
	switch f.state {
	case othelloWantCount, othelloBadCount:
		if othelloBlank(line) {
			return dst
		}
		n, msg := othelloParseCount(line)
		if msg != "" {
			// One error for a run of lines that are not a count (a board sent
			// without its count, say): the framer skips to the next count.
			if f.state == othelloBadCount {
				return dst
			}
			f.state = othelloBadCount
			return f.fail(dst, f.line, f.line, "%s; skipping to the next count", msg)
		}
		f.games, f.played, f.anyOut = n, 0, false
		f.newGame()
	case othelloWantBoard:
		if f.row == 0 {
			if othelloBlank(line) {
				return dst
			}
			f.boardLine = f.line
			f.pos = OthelloPosition{}
		}
		if msg := othelloParseRow(&f.pos, f.row, line); msg != "" {
			return f.badBoard(dst, line, msg)
		}
		if f.row++; f.row == 8 {
			f.state = othelloWantSide
		}
	case othelloWantSide:
		if msg := othelloParseSide(&f.pos, line); msg != "" {
			return f.badBoard(dst, line, msg)
		}
		f.state = othelloWantCommand
	case othelloWantCommand:
		cmd, sq, msg := othelloParseCommand(line)
		if msg != "" {
			return f.fail(dst, f.line, f.line, "%s", msg)
		}
		// The command runs here, as Append runs it on the unit, to know the position
		// after it; with an answer sink its answer is written from that run too, and
		// the position never goes through text.
		u, a := &f.cmd, &f.answer
		u.sep, u.pos, u.cmd, u.sq, u.cmdLine = f.anyOut && !f.gameOut, f.pos, cmd, sq, f.line
		if err := u.runInto(a); err != nil {
			return append(dst, Frame{Line: f.line, Err: err})
		}
		if f.sink != nil {
			f.anyOut, f.gameOut = true, true
			*f.sink = a.appendText(*f.sink)
		} else {
			dst = f.emit(dst, cmd, sq)
		}
		f.pos = a.pos
		if cmd == 'Q' {
			f.endGame()
		}
	case othelloSkipGame:
		if cmd, _, _ := othelloParseCommand(line); cmd == 'Q' {
			f.endGame()
		}
	}
	return dst
}

// badBoard reports a bad board or side line and skips the game to its Q. A bad line
// that is itself a Q is that Q: the game was cut short and is over.
func (f *othelloFramer) badBoard(dst []Frame, line []byte, msg string) []Frame {
	dst = f.fail(dst, f.boardLine, f.line, "%s; skipping the game to its Q", msg)
	f.state = othelloSkipGame
	if cmd, _, _ := othelloParseCommand(line); cmd == 'Q' {
		f.endGame()
	}
	return dst
}

// emit appends the unit for a command on the position in play.
func (f *othelloFramer) emit(dst []Frame, cmd byte, sq int) []Frame {
	u := f.unit[:0]
	if f.anyOut && !f.gameOut {
		u = append(u, '\n')
	}
	f.anyOut, f.gameOut = true, true
	u = f.pos.AppendBoard(u)
	u = append(u, f.pos.Side.Letter(), '\n', cmd)
	if cmd == 'M' {
		u = append(u, byte('1'+sq/8), byte('1'+sq%8))
	}
	u = append(u, '\n')
	f.unit = u
	// The unit's board is the framer's, not the stream's; the one stream line in it is
	// the command, so that is the line the frame names.
	return append(dst, Frame{Unit: u, Line: f.line})
}

func (f *othelloFramer) newGame() {
	f.state, f.row, f.gameOut = othelloWantBoard, 0, false
}

func (f *othelloFramer) endGame() {
	if f.played++; f.played >= f.games {
		f.state = othelloWantCount
		return
	}
	f.newGame()
}

func (f *othelloFramer) End(dst []Frame) []Frame {
	// A game cut short between commands needs no error: every command that arrived
	// was answered. Nor do games a count promised but that never came: the scoreboard
	// was switched off. Only a board cut in the middle lost lines.
	if (f.state == othelloWantBoard && f.row > 0) || f.state == othelloWantSide {
		dst = f.fail(dst, f.boardLine, f.boardLine, "the input ends inside a board, after %d of 8 rows and no side to move", f.row)
	}
	f.Reset()
	return dst
}

func (f *othelloFramer) Reset() int {
	dropped := 0
	switch f.state {
	case othelloWantBoard:
		dropped = f.row
	case othelloWantSide:
		dropped = 8
	}
	*f = othelloFramer{unit: f.unit[:0], sink: f.sink}
	return dropped
}
