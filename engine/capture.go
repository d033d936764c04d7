package engine

import (
	"strconv"
	"sync"
)

// The capture problem (seed 004, "Captured by Aliens"): a header "S M", then M moves
// "x y" on an S x S board; Black moves first and the colours alternate. The answer is
// the total number of stones captured, suicides included.
//
// S may be anything up to 2^31-1, so the board is never allocated: only the points the
// game plays on exist (see capture_board.go), and every buffer is sized by M.

const (
	captureName = "capture"
	// captureMaxSize is the largest board side accepted: coordinates fit in an int32.
	captureMaxSize = 1<<31 - 1
	// captureMaxMoves is the seed's bound on M; it bounds the unit a framer buffers.
	captureMaxMoves = 25000
	// captureMaxLine is far more than "2147483646 2147483646" plus stray blanks.
	captureMaxLine = 64
	// captureMaxBlanks bounds the blank lines a framer keeps inside one game. They are
	// kept so that error line numbers stay exact; past the bound they are dropped (the
	// answer is unchanged, only later error line numbers of that game shift).
	captureMaxBlanks = captureMaxMoves
)

func init() { Register(captureProblem{}) }

// captureProblem implements Problem for "capture".
type captureProblem struct{}

func (captureProblem) Name() string { return captureName }

func (captureProblem) Limits() Limits {
	return Limits{
		MaxLine: captureMaxLine,
		// The header, M move lines and the blank lines kept, each with its "\n".
		MaxUnit: (1+captureMaxMoves)*(captureMaxLine+1) + captureMaxBlanks,
		// No more stones are captured than were played.
		MaxAnswer: len(strconv.Itoa(captureMaxMoves)) + 1,
	}
}

func (captureProblem) NewFramer() Framer { return &captureFramer{} }

// Append answers one unit. The scratch comes from a pool, so concurrent calls are safe
// and a steady stream of units allocates nothing.
func (captureProblem) Append(dst, unit []byte) ([]byte, error) {
	sc := captureScratchPool.Get().(*captureScratch)
	defer captureScratchPool.Put(sc)
	size, err := captureParseUnit(unit, &sc.moves)
	if err != nil {
		return dst, err
	}
	n, err := sc.board.play(size, sc.moves)
	if err != nil {
		return dst, err
	}
	return CaptureAnswer{Captured: n}.AppendText(dst), nil
}

// Solve answers one unit with its structured answer.
func (p captureProblem) Solve(unit []byte) (Answer, error) {
	g, err := CaptureParse(unit)
	if err != nil {
		return nil, err
	}
	return g.Play()
}

// CaptureAnswer is the structured answer to one capture game.
type CaptureAnswer struct {
	Captured int `json:"captured"` // stones removed, suicides included
	Moves    int `json:"moves"`    // M
	Size     int `json:"size"`     // S
}

// AppendText appends the contest output: the count on one line.
func (a CaptureAnswer) AppendText(dst []byte) []byte {
	dst = strconv.AppendInt(dst, int64(a.Captured), 10)
	return append(dst, '\n')
}

// CaptureMove is one move of a game. Line is the unit line it came from (1 is the
// header), for error messages; 0 when the move was not parsed from text.
type CaptureMove struct {
	X, Y int
	Line int
}

// CaptureGame is one parsed game: the board side and the moves, Black's first.
type CaptureGame struct {
	Size  int
	Moves []CaptureMove
}

// CaptureParse parses one unit: the header "S M" and exactly M move lines, blank lines
// anywhere ignored. Errors are *InputError naming the unit line.
func CaptureParse(unit []byte) (*CaptureGame, error) {
	var moves []captureMove
	size, err := captureParseUnit(unit, &moves)
	if err != nil {
		return nil, err
	}
	g := &CaptureGame{Size: size, Moves: make([]CaptureMove, len(moves))}
	for i, m := range moves {
		g.Moves[i] = CaptureMove{X: int(m.x), Y: int(m.y), Line: int(m.line)}
	}
	return g, nil
}

// Play plays the game and counts the captured stones. A move off the board or on an
// occupied point is an *InputError naming its line.
func (g *CaptureGame) Play() (CaptureAnswer, error) {
	if g.Size < 1 || g.Size > captureMaxSize {
		return CaptureAnswer{}, Errorf(captureName, 0, "board size %d is out of range 1..%d", g.Size, captureMaxSize)
	}
	sc := captureScratchPool.Get().(*captureScratch)
	defer captureScratchPool.Put(sc)
	moves := sc.moves[:0]
	for i, m := range g.Moves {
		for _, c := range [2]struct {
			name string
			v    int
		}{{"x", m.X}, {"y", m.Y}} {
			if c.v < 0 || c.v >= g.Size {
				return CaptureAnswer{}, Errorf(captureName, m.Line, "move %d: %s=%d is off a %dx%d board", i+1, c.name, c.v, g.Size, g.Size)
			}
		}
		moves = append(moves, captureMove{x: int32(m.X), y: int32(m.Y), line: int32(m.Line)})
	}
	sc.moves = moves
	n, err := sc.board.play(g.Size, moves)
	if err != nil {
		return CaptureAnswer{}, err
	}
	return CaptureAnswer{Captured: n, Moves: len(g.Moves), Size: g.Size}, nil
}

// captureMove is a move as the board plays it.
type captureMove struct {
	x, y int32
	line int32 // unit line, for errors
}

// captureScratch is what one Append needs, kept between units.
type captureScratch struct {
	moves []captureMove
	board captureBoard
}

var captureScratchPool = sync.Pool{New: func() any { return new(captureScratch) }}

// captureParseUnit parses a unit into *moves (reusing its array) and returns S.
func captureParseUnit(unit []byte, moves *[]captureMove) (int, error) {
	ms := (*moves)[:0]
	defer func() { *moves = ms }()
	size, want, lineNo := 0, -1, 0
	for len(unit) > 0 {
		var line []byte
		line, unit = captureCutLine(unit)
		lineNo++
		if textBlank(line) {
			continue
		}
		if want < 0 {
			s, m, msg := captureParseHeader(line)
			if msg != "" {
				return 0, Errorf(captureName, lineNo, "%s", msg)
			}
			size, want = s, m
			if cap(ms) < want {
				ms = make([]captureMove, 0, want)
			}
			continue
		}
		if len(ms) == want {
			return 0, Errorf(captureName, lineNo, "unexpected line %q after the %d moves of the game", captureQuote(line), want)
		}
		x, y, msg := captureParseMove(line, size, len(ms)+1)
		if msg != "" {
			return 0, Errorf(captureName, lineNo, "%s", msg)
		}
		ms = append(ms, captureMove{x: int32(x), y: int32(y), line: int32(lineNo)})
	}
	if want < 0 {
		return 0, Errorf(captureName, 0, "no header: want a line \"S M\"")
	}
	if len(ms) < want {
		return 0, Errorf(captureName, 1, "game cut short: the header says %d moves, the unit has %d", want, len(ms))
	}
	return size, nil
}

// captureCutLine splits off the first line of text, without "\n" or "\r\n".
func captureCutLine(text []byte) (line, rest []byte) {
	for i, c := range text {
		if c == '\n' {
			line, rest = text[:i], text[i+1:]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, rest
		}
	}
	return text, nil
}

// captureFields returns the first two whitespace-separated fields of line and whether
// there were exactly two.
func captureFields(line []byte) (a, b []byte, ok bool) {
	var f [2][]byte
	n := 0
	for i := 0; i < len(line); {
		if textSpace(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && !textSpace(line[j]) {
			j++
		}
		if n == 2 {
			return nil, nil, false
		}
		f[n] = line[i:j]
		n++
		i = j
	}
	return f[0], f[1], n == 2
}

// captureAtoi parses a decimal number of digits only. It saturates past max, so that
// any length of digits gives an answer; ok is false for anything but digits.
func captureAtoi(b []byte, max int) (v int, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v <= max {
			v = v*10 + int(c-'0')
		}
	}
	return v, true
}

// captureParseHeader validates a header line "S M". The framer and the parser share
// it, so a unit the framer emits always has a header the parser takes. msg is empty
// when the header is good.
func captureParseHeader(line []byte) (size, moves int, msg string) {
	a, b, ok := captureFields(line)
	s, ok1 := captureAtoi(a, captureMaxSize)
	m, ok2 := captureAtoi(b, captureMaxMoves)
	switch {
	case !ok || !ok1 || !ok2:
		return 0, 0, "header: want two integers \"S M\" (board size, moves), got " + strconv.Quote(captureQuote(line))
	case s < 1 || s > captureMaxSize:
		return 0, 0, "header: board size " + captureQuote(a) + " is out of range 1.." + strconv.Itoa(captureMaxSize)
	case m < 1 || m > captureMaxMoves:
		return 0, 0, "header: move count " + captureQuote(b) + " is out of range 1.." + strconv.Itoa(captureMaxMoves)
	}
	return s, m, ""
}

// captureParseMove parses move number n, "x y", on a size x size board.
func captureParseMove(line []byte, size, n int) (x, y int, msg string) {
	a, b, ok := captureFields(line)
	x, ok1 := captureAtoi(a, size)
	y, ok2 := captureAtoi(b, size)
	switch {
	case !ok || !ok1 || !ok2:
		return 0, 0, "move " + strconv.Itoa(n) + ": want two integers \"x y\", got " + strconv.Quote(captureQuote(line))
	case x >= size:
		return 0, 0, "move " + strconv.Itoa(n) + ": x=" + captureQuote(a) + " is off a " + strconv.Itoa(size) + "x" + strconv.Itoa(size) + " board"
	case y >= size:
		return 0, 0, "move " + strconv.Itoa(n) + ": y=" + captureQuote(b) + " is off a " + strconv.Itoa(size) + "x" + strconv.Itoa(size) + " board"
	}
	return x, y, ""
}

// captureQuote shortens untrusted text for an error message.
func captureQuote(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// captureFramer cuts a stream into games: a header line, then exactly M move lines.
//
// Headers and moves look alike ("5 3" is both), so the framer cannot tell a header
// from a move: after a bad header it takes the next line as a header, and if the bad
// header was a real game's, that game's moves are read as headers until one of them
// happens to frame. Only counting keeps a good stream aligned, which is why the
// framer never drops a move line of a game: a dropped (nil) line still counts as a
// move and spoils only its own game.
type captureFramer struct {
	line    int    // stream lines seen
	unit    []byte // the game being read: header, move and blank lines
	start   int    // stream line of its header; 0 between games
	want    int    // its M
	got     int    // move lines read so far
	blanks  int    // blank lines kept in unit
	dropped int    // stream line of its first dropped line, or 0
	dropNo  int    // that line's move number

	// With an answer sink the game's moves are parsed as their lines arrive, with the
	// parser Append uses, instead of being kept as text, and played at its end.
	sink  *[]byte
	size  int
	moves []captureMove
	err   error // the game's first bad move, its line counted from the header
	board captureBoard
}

func (f *captureFramer) answerInto(out *[]byte) { f.sink = out }

func (f *captureFramer) Feed(dst []Frame, line []byte) []Frame {
	f.line++
	if line != nil && len(line) > captureMaxLine {
		line = nil // a caller that skipped the LineReader: never buffer past the bound
	}
	if textBlank(line) {
		if f.start > 0 && f.blanks < captureMaxBlanks {
			f.blanks++
			f.unit = append(f.unit, '\n') // keeps the unit's line numbers the stream's
		}
		return dst
	}
	if f.start == 0 {
		if line == nil {
			return append(dst, Frame{Line: f.line, Err: Errorf(captureName, f.line, "header line dropped (too long or unreadable)")})
		}
		s, m, msg := captureParseHeader(line)
		if msg != "" {
			return append(dst, Frame{Line: f.line, Err: Errorf(captureName, f.line, "%s", msg)})
		}
		if f.sink != nil {
			f.size, f.moves, f.err = s, f.moves[:0], nil
		} else {
			f.unit = append(append(f.unit[:0], line...), '\n')
		}
		f.start, f.want, f.got, f.blanks, f.dropped, f.dropNo = f.line, m, 0, 0, 0, 0
		return dst
	}
	f.got++
	switch {
	case line == nil:
		if f.dropped == 0 {
			f.dropped, f.dropNo = f.line, f.got
		}
	case f.dropped != 0:
	case f.sink == nil:
		f.unit = append(append(f.unit, line...), '\n')
	case f.err == nil:
		// Append sees this line in the unit's text, where captureCutLine strips one more
		// "\r" than the stream's reader did ("0\r\r\n" is "0" there): parse what it parses.
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		x, y, msg := captureParseMove(line, f.size, f.got)
		// The unit's line: the header, the moves so far and the blank lines kept.
		ln := 1 + f.got + f.blanks
		if msg != "" {
			f.err = Errorf(captureName, ln, "%s", msg)
		} else {
			f.moves = append(f.moves, captureMove{x: int32(x), y: int32(y), line: int32(ln)})
		}
	}
	if f.got < f.want {
		return dst
	}
	start := f.start
	f.start = 0
	switch {
	case f.dropped != 0:
		return append(dst, Frame{Line: start, Err: Errorf(captureName, f.dropped,
			"move %d of the game from line %d was dropped (too long or unreadable)", f.dropNo, start)})
	case f.sink == nil:
		return append(dst, Frame{Unit: f.unit, Line: start})
	case f.err != nil:
		return append(dst, Frame{Line: start, Err: Rebase(f.err, start)})
	}
	n, err := f.board.play(f.size, f.moves)
	if err != nil {
		return append(dst, Frame{Line: start, Err: Rebase(err, start)})
	}
	*f.sink = CaptureAnswer{Captured: n}.AppendText(*f.sink)
	return dst
}

func (f *captureFramer) End(dst []Frame) []Frame {
	if f.start == 0 {
		return dst
	}
	start, want, got := f.start, f.want, f.got
	f.start = 0
	return append(dst, Frame{Line: start, Err: Errorf(captureName, start,
		"game cut short at the end of the stream: the header says %d moves, the stream has %d", want, got)})
}

func (f *captureFramer) Reset() int {
	n := 0
	if f.start > 0 {
		n = f.line - f.start + 1
	}
	*f = captureFramer{unit: f.unit[:0], sink: f.sink, moves: f.moves[:0], board: f.board}
	return n
}
