package serialio

import (
	"bytes"
	"io"
	"sync/atomic"
	"time"
)

// lineEnds takes "\n", "\r\n" and a lone "\r" each as one line end, handing "\n" on:
// old serial devices end their lines in a lone "\r", which a reader of "\n" would
// wait on for ever. No problem's input has a "\r" inside a line (their texts are
// printable ASCII), so a "\r" is an end. A "\r" is turned into "\n" at once, not
// when the next byte shows whether a "\n" follows: a device that sends a line and
// waits for its answer sends no next byte. The "\n" of a "\r\n" is dropped when it
// comes.
//
// "\r\r\n" is one end too: a device that ends its lines in "\r\n" behind a layer
// that turns its "\n" into "\r\n" again (ONLCR) sends it, and the contest's reader
// took it as one line (its one stray "\r" dropped by the problems). So a "\r" right
// after a "\r" that ended a line is held until the next byte: a "\n" makes it a
// stray, anything else (or the stream's end) an empty line's end, which completes
// no unit of any problem, so holding it delays no answer.
//
// "\n\r" is one end too (review F14): some terminals and old boards end their lines
// in LF CR. The "\n" ends the line at once, and a "\r" right after it is dropped when
// it comes. Only an "\n" that ended a line by itself takes a "\r" after it: after a
// "\r\n", a "\r" ends an empty line, as after any line a "\r" does.
//
// It keeps the port's LineStats: bytes read, line ends, and the bytes since the last
// line end, so that a device sending no line end at all can be told of.
type lineEnds struct {
	r     io.Reader
	cr    bool // the last byte ended a line with "\r"
	lf    bool // the last byte ended a line with "\n", no "\r\n"'s
	held  bool // and a second "\r" came after it: an empty line, or a stray before "\n"
	stats *LineStats
	buf   [4096]byte
	out   []byte // turned, not yet read
	obuf  []byte
	err   error // the reader's, once out is read
}

func (l *lineEnds) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if l.err != nil {
			err := l.err
			l.err = nil
			return 0, err
		}
		n, err := l.r.Read(l.buf[:min(len(p), len(l.buf))])
		out := l.turn(l.obuf[:0], l.buf[:n])
		if err != nil && l.held {
			out = append(out, '\n') // the stream ended: the held "\r" was an empty line's
			l.held = false
		}
		l.stats.add(n, out)
		l.obuf, l.out, l.err = out, out, err
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// turn appends in, its line ends made "\n", to dst.
func (l *lineEnds) turn(dst, in []byte) []byte {
	for _, b := range in {
		if l.held {
			l.held = false
			if b == '\n' {
				l.cr = false
				continue // "\r\r\n": one end, made by the first "\r"
			}
			dst = append(dst, '\n') // an empty line ended by "\r"
		}
		switch {
		case b == '\n' && l.cr:
			l.cr = false // the "\n" of a "\r\n": its line has ended
		case b == '\r' && l.lf:
			l.lf = false // the "\r" of an "\n\r": its line has ended
		case b == '\r' && l.cr:
			l.held = true
		case b == '\r':
			l.cr = true
			dst = append(dst, '\n')
		default:
			l.cr = false
			l.lf = b == '\n'
			dst = append(dst, b)
		}
	}
	return dst
}

// LineStats are what a port's stream had of line ends since its device was
// (re)opened. Written by the port's reader, read by anyone: every field is atomic.
type LineStats struct {
	bytes, ends atomic.Int64
	// pending is how many bytes came since the last line end; since is when the
	// first of them came (UnixNano), 0 when none is pending.
	pending, since atomic.Int64
}

// add counts a read of n bytes, turned into out.
func (s *LineStats) add(n int, out []byte) {
	if s == nil || n == 0 && len(out) == 0 {
		return
	}
	s.bytes.Add(int64(n))
	if last := bytes.LastIndexByte(out, '\n'); last >= 0 {
		s.ends.Add(int64(bytes.Count(out, []byte{'\n'})))
		after := len(out) - 1 - last
		s.pending.Store(int64(after))
		if after > 0 {
			s.since.Store(time.Now().UnixNano())
		} else {
			s.since.Store(0)
		}
		return
	}
	if len(out) > 0 && s.pending.Add(int64(len(out))) == int64(len(out)) {
		s.since.Store(time.Now().UnixNano())
	}
}

func (s *LineStats) reset() {
	if s == nil {
		return
	}
	s.bytes.Store(0)
	s.ends.Store(0)
	s.pending.Store(0)
	s.since.Store(0)
}

// Bytes and Ends are the bytes and the line ends read since the device was opened.
func (s *LineStats) Bytes() int64 { return s.bytes.Load() }
func (s *LineStats) Ends() int64  { return s.ends.Load() }

// Unended reports the bytes read since the last line end (or the open), and how
// long the first of them has waited for one.
func (s *LineStats) Unended(now time.Time) (int64, time.Duration) {
	n := s.pending.Load()
	since := s.since.Load()
	if n == 0 || since == 0 {
		return n, 0
	}
	return n, now.Sub(time.Unix(0, since))
}

// NoLineEnds says whether the stream is bytes without line ends: more bytes since the
// last line end than the longest line can have (maxLine and a "\r\n"), or some that
// have waited longer than wait for one. Either way the device is sending something
// that cannot be cut into lines: another line end than "\r" or "\n", or none, or
// the wrong line settings (a baud rate that makes noise).
func (s *LineStats) NoLineEnds(now time.Time, maxLine int, wait time.Duration) bool {
	if s == nil {
		return false
	}
	n, waited := s.Unended(now)
	return n > int64(maxLine)+2 || (n > 0 && waited >= wait)
}
