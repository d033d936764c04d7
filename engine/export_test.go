package engine

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// ContestLines is the line path the bulk Contest must match byte for byte: a
// LineReader feeding the framer one line at a time and Append answering each unit, as
// the serial side does it. The differential tests and fuzz targets run both.
func ContestLines(p Problem, r io.Reader, w io.Writer, report func(error)) (bad int, err error) {
	lim := p.Limits()
	lr := NewLineReader(r, lim.MaxLine)
	bw := bufio.NewWriterSize(w, 64<<10)
	fr := p.NewFramer()
	var (
		frames []Frame
		out    []byte
		lineNo int
	)
	handle := func(frames []Frame) error {
		for _, f := range frames {
			if f.Err != nil {
				bad++
				report(f.Err)
				continue
			}
			var err error
			out, err = p.Append(out[:0], f.Unit)
			if err != nil {
				bad++
				report(Rebase(err, f.Line))
				continue
			}
			if _, err := bw.Write(out); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		if lr.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return bad, err
			}
		}
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		lineNo++
		if errors.Is(err, ErrLineTooLong) {
			report(Errorf(p.Name(), lineNo, "%v", err))
			line = nil
		} else if err != nil {
			return bad, fmt.Errorf("read line %d: %w", lineNo, err)
		}
		frames = fr.Feed(frames[:0], line)
		if err := handle(frames); err != nil {
			return bad, err
		}
	}
	if err := handle(fr.End(frames[:0])); err != nil {
		return bad, err
	}
	return bad, bw.Flush()
}
