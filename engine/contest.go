package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// LineReader splits a byte stream into lines ending in "\n" or "\r\n", and drops a
// line longer than its bound without buffering it whole.
type LineReader struct {
	br      *bufio.Reader
	max     int
	long    []byte // the start of an overlong line, kept for the error message
	tooLong bool
}

// NewLineReader reads lines of at most max bytes (without the terminator) from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	size := max + 2 // room for "\r\n"
	if size < 4096 {
		size = 4096
	}
	return &LineReader{br: bufio.NewReaderSize(r, size), max: max}
}

// ErrLineTooLong is returned by Next, wrapped with the line's length, for a line over
// the bound. The line was consumed; reading can go on.
var ErrLineTooLong = errors.New("line too long")

// Next returns the next line without its terminator. It is valid until the next call.
// A final line without "\n" is returned too; then io.EOF. A line longer than the bound
// is read to its end and discarded, and Next returns (nil, error wrapping
// ErrLineTooLong).
func (lr *LineReader) Next() ([]byte, error) {
	line, err := lr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		n := len(line)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = lr.br.ReadSlice('\n')
			n += len(line)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %d bytes or more, limit %d", ErrLineTooLong, n, lr.max)
	}
	if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) > lr.max {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrLineTooLong, len(line), lr.max)
	}
	return line, nil
}

// Buffered reports how many bytes can be read without blocking.
func (lr *LineReader) Buffered() int { return lr.br.Buffered() }

// Contest reads a whole contest input of problem p from r and writes the whole contest
// output to w. Each bad unit is passed to report (an *InputError naming the stream's
// line) and skipped; the units after it are answered where the framing allows.
// Output is flushed whenever the input has nothing more buffered, so an interactive
// user sees each answer as soon as its unit is complete.
// Contest returns the number of bad units, and the first read or write error.
//
// It is the bulk path: it reads large blocks, finds lines in place and answers into
// one output buffer (see contestStream). Its output and errors are byte for byte those
// of a LineReader feeding the problem's Framer and Append, which the serial side uses.
func Contest(p Problem, r io.Reader, w io.Writer, report func(error)) (bad int, err error) {
	s := newContestStream(p, w, report)
	return s.run(r)
}

// Rebase turns an error from Problem.Append or Problem.Solve, whose line numbers count
// from a unit's first line, into one counting from the stream line where that unit
// started.
func Rebase(err error, unitLine int) error {
	var ie *InputError
	if !errors.As(err, &ie) {
		return err
	}
	c := *ie
	if c.Line > 0 && unitLine > 0 {
		c.Line += unitLine - 1
	}
	return &c
}
