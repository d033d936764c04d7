package engine

import (
	"bytes"
	"fmt"
	"io"
)

// The bulk path of Contest. A LineReader hands out one line per call, with an error
// value to test on each; for a contest file of millions of short lines that loop, and
// the copies the framers make of each line, cost more than the solving. Here the
// input is read in large blocks, the lines of a block are found in place, the framer
// sees them one after the other without a call per line back into a reader, and the
// answers go into one output buffer, written out when it is full and whenever the
// input has nothing more buffered (before a read that may block).
//
// Framers stay the one place a problem's framing is defined; a framer may offer two
// unexported shortcuts that the bulk path uses and the serial side does not:
//
//   - blockFeeder: it takes the block's whole lines at once, to recognise a unit of
//     fixed layout in place and answer it without copying its lines (goscore);
//   - answerer: instead of emitting a unit as text for Append to parse again, it
//     answers the unit itself from what it parsed while framing (territory, othello,
//     replay, capture), with the same parsing and scoring code Append runs.
//
// The differential tests and FuzzContestBulk hold both to the line path's bytes.

const (
	// contestBlock is the largest read. The buffer starts at contestFirstBlock and
	// doubles while reads fill it, so a short input (a test, a fuzz input, a pipe fed
	// a line at a time) does not pay for a large buffer.
	contestBlock      = 1 << 20
	contestFirstBlock = 64 << 10
	// contestFlush is the output written at once when input keeps coming.
	contestFlush = 64 << 10
)

// blockFeeder is a Framer that can take many whole lines at once.
type blockFeeder interface {
	// feedBlock frames text, whole lines each ending in "\\n", as s.feedLine would
	// one line at a time.
	feedBlock(s *contestStream, text []byte)
}

// answerer is a Framer that can answer the units it frames itself.
type answerer interface {
	// answerInto makes the framer append each good unit's contest output to *out
	// instead of emitting the unit; errors still come as frames.
	answerInto(out *[]byte)
}

// contestStream runs one contest stream through a problem's framer.
type contestStream struct {
	p       Problem
	fr      Framer
	blocks  blockFeeder // fr, if it takes blocks
	maxLine int
	// lrSize is the buffer a LineReader would have: a line longer than it is
	// reported as "N bytes or more", as the LineReader reports it.
	lrSize int
	line   int // stream lines so far
	frames []Frame
	out    []byte
	w      io.Writer
	werr   error
	bad    int
	report func(error)
}

func newContestStream(p Problem, w io.Writer, report func(error)) *contestStream {
	lim := p.Limits()
	s := &contestStream{
		p:       p,
		fr:      p.NewFramer(),
		maxLine: lim.MaxLine,
		lrSize:  max(lim.MaxLine+2, 4096),
		out:     make([]byte, 0, 4096),
		w:       w,
		report:  report,
	}
	if a, ok := s.fr.(answerer); ok {
		a.answerInto(&s.out)
	}
	s.blocks, _ = s.fr.(blockFeeder)
	return s
}

// run reads r to its end.
func (s *contestStream) run(r io.Reader) (int, error) {
	buf := make([]byte, max(contestFirstBlock, 2*s.lrSize))
	start, end := 0, 0
	filled := false // the last read filled the buffer
	// An overlong line is dropped as it streams in: skipped counts its bytes so far,
	// and lastCR says whether the last of them was '\r'.
	skipping, skipped, lastCR := false, 0, false
	var rerr error // the read error (io.EOF at the end) that came with the last data
	for {
		data := buf[start:end]
		if skipping {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				skipped += len(data)
				lastCR = len(data) > 0 && data[len(data)-1] == '\r' || len(data) == 0 && lastCR
				start = end
			} else {
				cr := i > 0 && data[i-1] == '\r' || i == 0 && lastCR
				s.dropLine(skipped+i+1, skipped+i-b2i(cr), 1)
				skipping, start = false, start+i+1
				data = buf[start:end]
			}
		}
		if !skipping {
			if last := bytes.LastIndexByte(data, '\n'); last >= 0 {
				s.feedText(data[:last+1])
				start += last + 1
			}
			if rest := end - start; rest > s.maxLine+1 {
				// No "\n" yet and already too long even with a "\r": drop it.
				skipping, skipped, lastCR = true, rest, buf[end-1] == '\r'
				start = end
			}
		}
		if s.werr != nil {
			return s.bad, s.werr
		}
		// Nothing complete is left: the next read may block, so the answers go out.
		if s.flush(); s.werr != nil {
			return s.bad, s.werr
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return s.bad, fmt.Errorf("read line %d: %w", s.line+1, rerr)
		}
		if filled && len(buf) < contestBlock {
			grown := make([]byte, min(2*len(buf), contestBlock))
			end = copy(grown, buf[start:end])
			start, buf = 0, grown
		} else if start == end {
			start, end = 0, 0
		} else if end == len(buf) {
			end = copy(buf, buf[start:end])
			start = 0
		}
		// The lines that came with an error are framed before it counts.
		var n int
		n, rerr = r.Read(buf[end:])
		filled = end+n == len(buf)
		end += n
	}
	// What is left is a last line without "\n".
	switch data := buf[start:end]; {
	case skipping:
		s.dropLine(skipped+len(data), skipped+len(data)-b2i(len(data) > 0 && data[len(data)-1] == '\r' || len(data) == 0 && lastCR), 0)
	case len(data) > 0:
		s.feedLine(data, 0)
	}
	s.handle(s.fr.End(s.frames[:0]))
	s.flush()
	return s.bad, s.werr
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// feedText frames whole lines, each ending in "\n".
func (s *contestStream) feedText(text []byte) {
	if s.blocks != nil {
		s.blocks.feedBlock(s, text)
		return
	}
	s.feedLines(text)
}

// feedLines feeds whole lines to the framer one at a time.
func (s *contestStream) feedLines(text []byte) {
	for len(text) > 0 && s.werr == nil {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			i = len(text)
		}
		s.feedLine(text[:i], 1)
		text = text[min(i+1, len(text)):]
	}
}

// feedLine feeds one line, without its "\n"; nl is 1 if it had one, 0 for a last
// line without.
func (s *contestStream) feedLine(line []byte, nl int) {
	raw := len(line) + nl
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > s.maxLine {
		s.dropLine(raw, len(line), nl)
		return
	}
	s.line++
	s.frames = s.fr.Feed(s.frames[:0], line)
	s.handle(s.frames)
}

// dropLine reports a line over the bound, as the LineReader words it, and feeds the
// framer the nil line that stands for it. raw counts the line's bytes with its
// terminator, n without; nl is 0 for a last line without "\n", which fills the
// LineReader's buffer one byte earlier.
func (s *contestStream) dropLine(raw, n, nl int) {
	s.line++
	if raw+1-nl > s.lrSize {
		s.report(Errorf(s.p.Name(), s.line, "%v: %d bytes or more, limit %d", ErrLineTooLong, raw, s.maxLine))
	} else {
		s.report(Errorf(s.p.Name(), s.line, "%v: %d bytes, limit %d", ErrLineTooLong, n, s.maxLine))
	}
	s.frames = s.fr.Feed(s.frames[:0], nil)
	s.handle(s.frames)
}

// handle answers the frames the framer gave.
func (s *contestStream) handle(frames []Frame) {
	for _, f := range frames {
		if f.Err != nil {
			s.fail(f.Err)
			continue
		}
		out, err := s.p.Append(s.out, f.Unit)
		if err != nil {
			s.fail(Rebase(err, f.Line))
			continue
		}
		s.out = out
	}
	if len(s.out) >= contestFlush {
		s.flush()
	}
}

func (s *contestStream) fail(err error) {
	s.bad++
	s.report(err)
}

// flush writes the answers out.
func (s *contestStream) flush() {
	if len(s.out) == 0 || s.werr != nil {
		return
	}
	_, s.werr = s.w.Write(s.out)
	s.out = s.out[:0]
}
