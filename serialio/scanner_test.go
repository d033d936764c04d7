package serialio_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/serialio"
)

// pairs is a problem made for these tests: a unit is two non-empty lines; an empty
// or dropped line breaks the unit it falls in, and framing starts over after it.
type pairs struct{}

func (pairs) Name() string             { return "sio-pairs" }
func (pairs) Limits() engine.Limits    { return engine.Limits{MaxLine: 16, MaxUnit: 40} }
func (pairs) NewFramer() engine.Framer { return &pairFramer{} }
func (pairs) Append(dst, unit []byte) ([]byte, error) {
	return append(dst, fmt.Sprintf("%d\n", len(unit))...), nil
}
func (pairs) Solve([]byte) (engine.Answer, error) { return nil, errors.New("unused") }

func init() { engine.Register(pairs{}) }

type pairFramer struct {
	buf   []byte
	n     int // lines in buf
	line  int // stream lines fed
	start int
}

func (f *pairFramer) Feed(dst []engine.Frame, line []byte) []engine.Frame {
	f.line++
	if len(line) == 0 {
		start := f.line
		if f.n > 0 {
			start = f.start
		}
		f.buf, f.n = f.buf[:0], 0
		return append(dst, engine.Frame{Line: start, Err: engine.Errorf("sio-pairs", start, "broken pair")})
	}
	if f.n == 0 {
		f.start = f.line
	}
	f.buf = append(append(f.buf, line...), '\n')
	f.n++
	if f.n < 2 {
		return dst
	}
	f.n = 0
	dst = append(dst, engine.Frame{Unit: f.buf, Line: f.start})
	f.buf = f.buf[len(f.buf):]
	return dst
}

func (f *pairFramer) End(dst []engine.Frame) []engine.Frame {
	if f.n > 0 {
		f.n = 0
		return append(dst, engine.Frame{Line: f.start, Err: engine.Errorf("sio-pairs", f.start, "cut short")})
	}
	return dst
}

func (f *pairFramer) Reset() int {
	n := f.n
	*f = pairFramer{}
	return n
}

// scanAll reads every unit of in, rendering each as "line:text" or "line:!error".
func scanAll(t *testing.T, s *serialio.Scanner) []string {
	t.Helper()
	var got []string
	for {
		u, err := s.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if u.Err != nil {
			got = append(got, fmt.Sprintf("%d:!%v", u.Line, u.Err))
		} else {
			got = append(got, fmt.Sprintf("%d:%s", u.Line, u.Data))
		}
	}
}

func TestScanner(t *testing.T) {
	p, _ := engine.Lookup("sio-pairs")
	var warned []string
	s := serialio.NewScanner(p, func(err error) { warned = append(warned, err.Error()) })
	in := "a\r\nb\n" + // CRLF and LF
		"c\n" + strings.Repeat("x", 100000) + "\n" + // a 100 KB line breaks a unit
		"d\x00\ne\n" + // NUL is just a byte to the scanner
		"f\n\n" + // an empty line breaks another
		"g\nh" // the last line needs no terminator
	s.Reset(strings.NewReader(in))
	got := scanAll(t, s)
	want := []string{
		"1:a\nb\n",
		"3:!sio-pairs: line 3: broken pair",
		"5:d\x00\ne\n",
		"7:!sio-pairs: line 7: broken pair",
		"9:g\nh\n",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("units\n got %q\nwant %q", got, want)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "line 4: line too long") {
		t.Fatalf("warnings %q, want one for line 4", warned)
	}

	// A unit cut short by the end of the stream is an error unit, then io.EOF.
	s.Reset(strings.NewReader("a\nb\nc\n"))
	if got := fmt.Sprint(scanAll(t, s)); got != fmt.Sprint([]string{"1:a\nb\n", "3:!sio-pairs: line 3: cut short"}) {
		t.Fatalf("cut short: %q", got)
	}
}

// failingReader gives its text and then a read error, as an unplugged device does.
type failingReader struct{ r io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, serialio.ErrLost
	}
	return n, err
}

func TestScannerResetDropsPartialUnit(t *testing.T) {
	p, _ := engine.Lookup("sio-pairs")
	s := serialio.NewScanner(p, nil)
	s.Reset(failingReader{strings.NewReader("a\nb\nc\nhalf a li")})
	if u, err := s.Next(); err != nil || string(u.Data) != "a\nb\n" {
		t.Fatalf("first unit %q %v", u.Data, err)
	}
	if _, err := s.Next(); !errors.Is(err, serialio.ErrLost) {
		t.Fatalf("read error %v, want ErrLost", err)
	}
	// "c" was a partial unit; the partial line "half a li" never reached the framer.
	if n := s.Reset(strings.NewReader("d\ne\n")); n != 1 {
		t.Fatalf("Reset dropped %d lines, want 1", n)
	}
	if got := fmt.Sprint(scanAll(t, s)); got != fmt.Sprint([]string{"1:d\ne\n"}) {
		t.Fatalf("after Reset: %q", got)
	}
}

func FuzzScanner(f *testing.F) {
	p, _ := engine.Lookup("sio-pairs")
	f.Fuzz(func(t *testing.T, in []byte) {
		s := serialio.NewScanner(p, nil)
		s.Reset(strings.NewReader(string(in)))
		lines := strings.Count(string(in), "\n") + 1
		for {
			u, err := s.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.Line < 1 || u.Line > lines {
				t.Fatalf("unit at line %d of %d", u.Line, lines)
			}
			if len(u.Data) > p.Limits().MaxUnit {
				t.Fatalf("unit of %d bytes over the limit", len(u.Data))
			}
		}
	})
}
