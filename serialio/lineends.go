package serialio

import (
	"io"
	"sync/atomic"
	"time"
)

// lineEnds takes "\r", "\n" and "\r\n" each as one line end, handing "\n" on: old
// serial devices end their lines in a lone "\r", which a reader of "\n" would wait
// on for ever. No problem's input has a "\r" inside a line (their texts are
// printable ASCII), so a "\r" is always an end. A "\r" is turned into "\n" at once,
// not when the next byte shows whether a "\n" follows: a device that sends a line
// and waits for its answer sends no next byte. The "\n" of a "\r\n" is dropped when
// it comes.
//
// It keeps the port's LineStats: bytes read, line ends, and the bytes since the last
// line end, so that a device sending no line end at all can be told of.
type lineEnds struct {
	r     io.Reader
	cr    bool // the last byte read was "\r"
	stats *LineStats
}

func (l *lineEnds) Read(p []byte) (int, error) {
	for {
		n, err := l.r.Read(p)
		j, ends, sinceEnd := 0, 0, -1
		for i := range n {
			b := p[i]
			if b == '\n' && l.cr {
				l.cr = false
				continue // the "\n" of a "\r\n": its line has ended
			}
			l.cr = b == '\r'
			if l.cr {
				b = '\n'
			}
			if b == '\n' {
				ends++
				sinceEnd = n - 1 - i
			}
			p[j] = b
			j++
		}
		l.stats.add(n, ends, sinceEnd)
		// A read that was all the "\n" of a "\r\n" reads again: a reader given
		// (0, nil) too often gives up (bufio's io.ErrNoProgress).
		if j > 0 || err != nil || n == 0 {
			return j, err
		}
	}
}

// LineStats are what a port's stream had of line ends since its device was
// (re)opened. Written by the port's reader, read by anyone: every field is atomic.
type LineStats struct {
	bytes, ends atomic.Int64
	// pending is how many bytes came since the last line end; since is when the
	// first of them came (UnixNano), 0 when none is pending.
	pending, since atomic.Int64
}

// add counts a read of n bytes with ends line ends, the last one followed by
// sinceEnd bytes (-1: none in the read).
func (s *LineStats) add(n, ends, sinceEnd int) {
	if s == nil || n == 0 {
		return
	}
	s.bytes.Add(int64(n))
	if ends > 0 {
		s.ends.Add(int64(ends))
		s.pending.Store(int64(sinceEnd))
		if sinceEnd > 0 {
			s.since.Store(time.Now().UnixNano())
		} else {
			s.since.Store(0)
		}
		return
	}
	if s.pending.Add(int64(n)) == int64(n) {
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
