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
	// Line is the stream line the unit (or the skipped input) starts on.
	Line int
	// Err is an *engine.InputError when the input from Line on was skipped.
	Err error
}

// Scanner cuts a byte stream into the units of one problem: lines end in "\n" or
// "\r\n"; a line over the problem's bound is dropped without being buffered whole
// (the framer then sees a nil line and resynchronises at the next unit boundary).
type Scanner struct {
	p      engine.Problem
	lr     *engine.LineReader
	fr     engine.Framer
	frames []engine.Frame
	next   int // index in frames of the next one to return
	lines  int // stream lines read since the last Reset
	ended  bool
	warn   func(error)

	// Trace, when set, is told of each line read, for diagnosing a scoreboard's
	// framing; it must not keep line.
	Trace func(lineNo int, line []byte)
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
	if r != nil {
		s.lr = engine.NewLineReader(r, s.p.Limits().MaxLine)
	}
	s.frames, s.next, s.lines, s.ended = s.frames[:0], 0, 0, false
	return dropped
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
			s.warn(engine.Errorf(s.p.Name(), s.lines, "%v", err))
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
	return Unit{Data: f.Unit, Line: f.Line, Err: f.Err}, nil
}
