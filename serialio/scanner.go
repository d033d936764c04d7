package serialio

import (
	"errors"
	"fmt"
	"io"

	"github.com/goclub/scoreboard/engine"
)

// Unit is one unit cut from a port's stream, or an error for input that was skipped.
type Unit struct {
	// Data is the unit's contest input text; only valid until the next call to Next.
	Data []byte
	// Line is the stream line the unit (or the skipped input) starts on. 64 bits on
	// every platform: a port read for months passes 2^31 lines.
	Line int64
	// Err is an *engine.InputError when the input from Line on was skipped.
	Err error
}

// Scanner cuts a byte stream into the units of one problem: lines end in "\n",
// "\r\n" or a lone "\r" (lineEnds); a line over the problem's bound is dropped
// without being buffered whole (the framer then sees a nil line and resynchronises
// at the next unit boundary).
type Scanner struct {
	p      engine.Problem
	lr     *engine.LineReader
	fr     engine.Framer
	frames []engine.Frame
	next   int // index in frames of the next one to return
	// lines counts the stream lines read since the last Reset, from first (0 but
	// in a test). The framer counts them too, in an int: 32 bits on armhf, where it
	// wraps after 2^31 lines; the unit's line is taken from lines (unitLine).
	lines, first int64
	ended        bool
	warn         func(error)

	// Stats, when set, counts the stream's bytes and line ends (reset by Reset).
	Stats *LineStats

	// Trace, when set, is told of each line read, for diagnosing a scoreboard's
	// framing; it must not keep line.
	Trace func(lineNo int64, line []byte)
}

// NewScanner returns a scanner of p's units. warn is told of each line dropped for
// being too long (an *engine.InputError naming the line); the unit it broke is then
// reported by Next as an error unit.
func NewScanner(p engine.Problem, warn func(error)) *Scanner {
	if warn == nil {
		warn = func(error) {}
	}
	return &Scanner{p: p, fr: p.NewFramer(), warn: warn}
}

// Reset starts a new stream read from r (a device that was reopened, say), forgetting
// any partial unit of the old one. It returns how many lines of a partial unit it
// dropped. Reset(nil) forgets the old stream and reads nothing until the next Reset.
func (s *Scanner) Reset(r io.Reader) int {
	dropped := s.fr.Reset()
	s.lr = nil
	s.Stats.reset()
	if r != nil {
		s.lr = engine.NewLineReader(&lineEnds{r: r, stats: s.Stats}, s.p.Limits().MaxLine)
	}
	s.frames, s.next, s.lines, s.ended = s.frames[:0], 0, s.first, false
	return dropped
}

// CountFrom makes the lines of the streams Reset gives count from n+1 (0 by
// default): a test starts a port's count near a bound without reading 2^31 lines.
func (s *Scanner) CountFrom(n int64) { s.first = n }

// unitLine is the stream line of a frame: the framer's count of it, an int that may
// have wrapped, made a 64-bit count again from the scanner's. The frame's line is
// never far behind the line being read, so the difference of the two counts, taken
// in the framer's own width, is right whatever wrapped.
func (s *Scanner) unitLine(framed int) int64 {
	behind := int(s.lines-s.first) - framed
	return s.lines - int64(behind)
}

// Next returns the next unit or error unit. At the end of the stream (io.EOF from the
// reader) it returns the error unit of a unit cut short, if any, and then io.EOF. A
// read error other than io.EOF is returned as is, and the partial unit stays in the
// framer until Reset.
func (s *Scanner) Next() (Unit, error) {
	for s.next >= len(s.frames) {
		if s.ended {
			return Unit{}, io.EOF
		}
		if s.lr == nil {
			return Unit{}, errors.New("scanner: no stream (call Reset)")
		}
		s.frames, s.next = s.frames[:0], 0
		line, err := s.lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			s.ended = true
			s.frames = s.fr.End(s.frames)
			continue
		case errors.Is(err, engine.ErrLineTooLong):
			s.lines++
			s.warn(lineError(s.p.Name(), s.lines, err.Error()))
			line = nil
		case err != nil:
			return Unit{}, fmt.Errorf("read line %d: %w", s.lines+1, err)
		default:
			s.lines++
		}
		if s.Trace != nil {
			s.Trace(s.lines, line)
		}
		s.frames = s.fr.Feed(s.frames, line)
	}
	f := s.frames[s.next]
	s.next++
	return Unit{Data: f.Unit, Line: s.unitLine(f.Line), Err: s.rebase(f.Err)}, nil
}

// rebase gives a framer's *engine.InputError the scanner's count of its line.
func (s *Scanner) rebase(err error) error {
	var ie *engine.InputError
	if !errors.As(err, &ie) || ie.Line == 0 { // negative: a count that wrapped
		return err
	}
	line := s.unitLine(ie.Line)
	if int64(int(line)) == line && int(line) == ie.Line {
		return err
	}
	return lineError(ie.Problem, line, ie.Msg)
}

// lineError is an *engine.InputError at a stream line, which on a 32-bit platform
// may be past an int: then the line is in the message, which reads the same.
func lineError(problem string, line int64, msg string) *engine.InputError {
	if int64(int(line)) == line {
		return &engine.InputError{Problem: problem, Line: int(line), Msg: msg}
	}
	return &engine.InputError{Problem: problem, Msg: fmt.Sprintf("line %d: %s", line, msg)}
}
