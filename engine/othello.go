package engine

// Othello (seed 003, 1992 ACM finals): a count of games; per game 8 board rows, the
// side to move, then commands L (list the legal moves), Mrc (move) and Q (print the
// board, end the game).
//
// The daemon answers each command as soon as its line arrives, and any worker may
// serve it, so a unit is one command together with the position it applies to: the
// framer keeps the position, applying each move with the same code Append uses.

func init() { Register(othelloProblem{}) }

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
	var a othelloAnswer
	if err := othelloAnswerUnit(unit, &a); err != nil {
		return dst, err
	}
	return a.appendText(dst), nil
}

func (othelloProblem) Solve(unit []byte) (Answer, error) {
	var a othelloAnswer
	if err := othelloAnswerUnit(unit, &a); err != nil {
		return nil, err
	}
	return a, nil
}

// othelloAnswerUnit parses a unit and runs its command into *a: all that Append and
// Solve share. The answer goes through a pointer, as the framer's does (runInto), so
// that Append copies nothing on its hot path.
func othelloAnswerUnit(unit []byte, a *othelloAnswer) error {
	var u othelloUnit
	if err := u.parse(unit); err != nil {
		return err
	}
	return u.runInto(a)
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
		if textBlank(line) {
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
			if textBlank(line) {
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
