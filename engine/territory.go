package engine

import "strconv"

// territory: territory scoring of a final position (seed 002, Go, Stanford 2007). A
// case is "n b w", b black "r c" pairs and w white ones, read as tokens wherever the
// line breaks fall; the answer is who wins on territory (empty points) and by how much.

const (
	territoryName = "territory"
	// territoryMaxLine is long enough for the contest's one-line form (every case
	// of an input on one line): about twenty full 19x19 cases fit in 64 KiB.
	territoryMaxLine = 64 << 10
	// territoryMaxUnit bounds a canonical unit: a header and 361 pairs "19 19".
	territoryMaxUnit = 4 << 10
)

func init() { Register(territoryProblem{}) }

type territoryProblem struct{}

func (territoryProblem) Name() string { return territoryName }

func (territoryProblem) Limits() Limits {
	return Limits{
		MaxLine: territoryMaxLine, MaxUnit: territoryMaxUnit,
		MaxAnswer: len("White wins by \n") + len(strconv.Itoa(19*19)),
	}
}

func (territoryProblem) NewFramer() Framer { return &territoryFramer{} }

func (territoryProblem) Append(dst, unit []byte) ([]byte, error) {
	var p territoryParser
	if err := p.parseUnit(unit); err != nil {
		return dst, err
	}
	return p.score().AppendText(dst), nil
}

func (territoryProblem) Solve(unit []byte) (Answer, error) {
	var p territoryParser
	if err := p.parseUnit(unit); err != nil {
		return nil, err
	}
	return TerritoryAnswer{TerritoryScore: p.score(), n: p.n, black: p.black, white: p.white}, nil
}

// TerritoryScore is the answer of territory: each colour's territory and the result.
type TerritoryScore struct {
	Black  int    `json:"black"`
	White  int    `json:"white"`
	Winner string `json:"winner"` // "black", "white" or "draw"
	Margin int    `json:"margin"`
}

// TerritoryResult scores a territory count.
func TerritoryResult(black, white int) TerritoryScore {
	s := TerritoryScore{Black: black, White: white, Winner: "draw"}
	switch {
	case black > white:
		s.Winner, s.Margin = "black", black-white
	case white > black:
		s.Winner, s.Margin = "white", white-black
	}
	return s
}

// AppendText appends "Black wins by N\n", "White wins by N\n" or "Draw\n".
func (s TerritoryScore) AppendText(dst []byte) []byte {
	switch s.Winner {
	case "black":
		dst = append(dst, "Black wins by "...)
	case "white":
		dst = append(dst, "White wins by "...)
	default:
		return append(dst, "Draw\n"...)
	}
	dst = strconv.AppendInt(dst, int64(s.Margin), 10)
	return append(dst, '\n')
}

// What territoryParser.token reports.
const (
	territoryMore    = iota // the case needs more tokens
	territoryDone           // the case is complete; err says whether it is valid
	territoryGarbage        // the header is unusable (err); resynchronise
	territoryEnd            // the lone 0 that ends an input
)

// territoryParser reads a case token by token, so line breaks can fall anywhere. The
// framer and Append share it: the framer feeds the stream's tokens, Append a unit's.
// Once the header's counts are known the case is read to its last token even when
// something is wrong, so a bad case does not spoil the next one.
type territoryParser struct {
	got          int         // tokens of the current case so far; 0 between cases
	start        int         // line of the case's first token
	n, b, w      int         // the header
	row          int         // the row of a half-read pair
	err          *InputError // the case's first problem
	black, white boardRows
}

// total is the number of tokens of the case, once the header is read.
func (p *territoryParser) total() int { return 3 + 2*(p.b+p.w) }

func (p *territoryParser) fail(ln int, format string, args ...any) {
	if p.err == nil {
		p.err = Errorf(territoryName, ln, format, args...)
	}
}

// token takes the case's next token, read on line ln.
func (p *territoryParser) token(tok []byte, ln int) int {
	v, isInt := boardAtoi(tok)
	switch p.got {
	case 0:
		*p = territoryParser{start: ln}
		if !isInt {
			p.err = Errorf(territoryName, ln, "%s is not a board size", boardQuote(tok))
			return territoryGarbage
		}
		if v == 0 {
			return territoryEnd
		}
		p.n, p.got = v, 1
		if v < 1 || v > boardMax {
			p.fail(ln, "board size %d: want 1 to 19", v)
		}
		return territoryMore
	case 1, 2:
		if !isInt || v < 0 {
			p.got = 0
			p.err = Errorf(territoryName, ln, "%s is not a stone count", boardQuote(tok))
			return territoryGarbage
		}
		p.got++
		if p.got == 2 {
			p.b = v
			return territoryMore
		}
		p.w = v
		switch stones := p.b + p.w; {
		case stones > boardMax*boardMax:
			p.got = 0
			p.err = Errorf(territoryName, ln, "%d stones: no board holds more than 361", stones)
			return territoryGarbage
		case stones == 0:
			p.fail(ln, "no stones: a case has at least one")
			p.got = 0
			return territoryDone
		case stones > p.n*p.n:
			p.fail(ln, "%d stones do not fit a %dx%d board", stones, p.n, p.n)
		}
		return territoryMore
	}
	return p.coord(v, isInt, tok, ln)
}

// coord takes a coordinate token: its value if isInt, else the token itself.
func (p *territoryParser) coord(v int, isInt bool, tok []byte, ln int) int {
	k := p.got - 3 // index of the coordinate
	p.got++
	// Once the case is known bad its tokens are only counted.
	if p.err == nil {
		switch {
		case !isInt || v < 1 || v > p.n:
			p.badCoord(v, isInt, tok, ln)
		case k&1 == 0:
			p.row = v
		default:
			r, bit := p.row-1, uint32(1)<<uint(v-1)
			switch {
			case (p.black[r]|p.white[r])&bit != 0:
				p.fail(ln, "two stones on %d %d", p.row, v)
			case k>>1 < p.b:
				p.black[r] |= bit
			default:
				p.white[r] |= bit
			}
		}
	}
	if p.got == 3+2*(p.b+p.w) {
		p.got = 0
		return territoryDone
	}
	return territoryMore
}

func (p *territoryParser) badCoord(v int, isInt bool, tok []byte, ln int) {
	if !isInt {
		p.fail(ln, "%s is not a coordinate", boardQuote(tok))
	} else {
		p.fail(ln, "coordinate %d is off the %dx%d board", v, p.n, p.n)
	}
}

// territorySep marks the bytes that end a token.
var territorySep = [256]bool{' ': true, '\t': true, '\r': true, '\v': true, '\f': true, '\n': true}

// territoryCoordAt reads the usual coordinate at text[i], one or two digits followed
// by a separator or the end, without the general parser; ok is false for anything
// else, which the general parser then reads.
func territoryCoordAt(text []byte, i int) (v, next int, ok bool) {
	d := text[i] - '0'
	if d > 9 {
		return 0, i, false
	}
	v, j := int(d), i+1
	if j < len(text) {
		// Branch-free: one digit or two are equally likely.
		d1, two := int(text[j]-'0'), 0
		if d1 <= 9 {
			two = 1
		}
		v += two * (9*v + d1)
		j += two
	}
	if j < len(text) && !territorySep[text[j]] {
		return 0, i, false
	}
	return v, j, true
}

// parseUnit reads a unit holding exactly one case. Lines count from 1.
func (p *territoryParser) parseUnit(unit []byte) error {
	// One pass over the bytes rather than lines then tokens: this is the hot path.
	ln, last, done := 1, 0, false
	for i := 0; i < len(unit); {
		if c := unit[i]; c == '\n' || textSpace(c) {
			if c == '\n' {
				ln++
			}
			i++
			continue
		}
		if p.got >= 3 {
			if v, j, ok := territoryCoordAt(unit, i); ok {
				if done {
					return Errorf(territoryName, ln, "%s after the end of the case", boardQuote(unit[i:j]))
				}
				i, last = j, ln
				if p.coord(v, true, nil, ln) == territoryDone {
					if p.err != nil {
						return p.err
					}
					done = true
				}
				continue
			}
		}
		j := i + 1
		for j < len(unit) && !territorySep[unit[j]] {
			j++
		}
		tok := unit[i:j]
		i, last = j, ln
		if done {
			return Errorf(territoryName, ln, "%s after the end of the case", boardQuote(tok))
		}
		switch p.token(tok, ln) {
		case territoryDone:
			if p.err != nil {
				return p.err
			}
			done = true
		case territoryGarbage:
			return p.err
		case territoryEnd:
			return Errorf(territoryName, ln, "a lone 0 ends the input: no case to score")
		}
	}
	ln = last
	switch {
	case done:
		return nil
	case p.got == 0:
		return Errorf(territoryName, 0, "empty unit: want \"n b w\" and the stones")
	case p.got < 3:
		return Errorf(territoryName, ln, "the case ends inside its header \"n b w\"")
	default:
		return Errorf(territoryName, ln, "the case ends after %d of its %d coordinates", p.got-3, p.total()-3)
	}
}

func (p *territoryParser) score() TerritoryScore {
	b, w := boardOwned(&p.black, &p.white, p.n)
	return TerritoryResult(b, w)
}

// appendUnit appends the canonical text of the valid case just read: the header, the
// black pairs and the white pairs on three lines, each colour's in board order.
func (p *territoryParser) appendUnit(dst []byte) []byte {
	dst = strconv.AppendInt(dst, int64(p.n), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(p.b), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(p.w), 10)
	dst = append(dst, '\n')
	for _, s := range [2]*boardRows{&p.black, &p.white} {
		sep := false
		for r := 0; r < p.n; r++ {
			for c := 0; c < p.n; c++ {
				if s[r]>>uint(c)&1 == 0 {
					continue
				}
				if sep {
					dst = append(dst, ' ')
				}
				sep = true
				dst = strconv.AppendInt(dst, int64(r+1), 10)
				dst = append(dst, ' ')
				dst = strconv.AppendInt(dst, int64(c+1), 10)
			}
		}
		dst = append(dst, '\n')
	}
	return dst
}

// territoryFramer cuts a token stream into cases, each emitted as canonical text.
type territoryFramer struct {
	line int // stream lines fed so far
	p    territoryParser
	out  []byte  // the units framed by the current call
	sink *[]byte // answers go here instead of units (see answerer)
}

func (f *territoryFramer) answerInto(out *[]byte) { f.sink = out }

func (f *territoryFramer) Feed(dst []Frame, line []byte) []Frame {
	f.line++
	f.out = f.out[:0]
	if line == nil {
		if f.p.got != 0 {
			dst = append(dst, Frame{Line: f.p.start, Err: Errorf(territoryName, f.line,
				"the case at line %d lost this line (too long or unreadable)", f.p.start)})
			f.p.got = 0
		}
		return dst
	}
	for i := 0; ; {
		i = boardSkipSpace(line, i)
		if i == len(line) {
			return dst
		}
		var r int
		if v, j, ok := territoryCoordAt(line, i); ok && f.p.got >= 3 {
			i, r = j, f.p.coord(v, true, nil, f.line)
		} else {
			j := i + 1
			for j < len(line) && !textSpace(line[j]) {
				j++
			}
			r = f.p.token(line[i:j], f.line)
			i = j
		}
		switch r {
		case territoryDone:
			if f.p.err != nil {
				dst = append(dst, Frame{Line: f.p.start, Err: f.p.err})
				continue
			}
			if f.sink != nil {
				// The case was parsed once, here: it is scored as Append would score
				// its canonical text, without writing and reading that text.
				*f.sink = f.p.score().AppendText(*f.sink)
				continue
			}
			start := len(f.out)
			f.out = f.p.appendUnit(f.out)
			dst = append(dst, Frame{Line: f.p.start, Unit: f.out[start:len(f.out):len(f.out)]})
		case territoryGarbage:
			f.p.err.Msg += "; skipping the rest of the line"
			return append(dst, Frame{Line: f.p.start, Err: f.p.err})
		}
	}
}

func (f *territoryFramer) End(dst []Frame) []Frame {
	if f.p.got != 0 {
		msg := "the input ended inside the header \"n b w\""
		if f.p.got >= 3 {
			msg = "the input ended after " + strconv.Itoa(f.p.got-3) + " of the case's " +
				strconv.Itoa(f.p.total()-3) + " coordinates"
		}
		dst = append(dst, Frame{Line: f.p.start, Err: Errorf(territoryName, f.p.start, "%s", msg)})
	}
	f.p = territoryParser{}
	return dst
}

func (f *territoryFramer) Reset() int {
	n := 0
	if f.p.got != 0 {
		n = f.line - f.p.start + 1
	}
	*f = territoryFramer{out: f.out[:0], sink: f.sink}
	return n
}
