package serialio_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

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

// normalEnds is the scanner's rule for line ends, written another way, on the whole
// stream at once: from the left, "\r\r\n", "\r\n", "\n\r" (an "\n" that is no
// CRLF's, then "\r"), a lone "\r" and a lone "\n" are one end each.
func normalEnds(in []byte) []byte { return lineEnd.ReplaceAll(in, []byte("\n")) }

var lineEnd = regexp.MustCompile("\r\r\n|\r\n|\n\r|\r|\n")

// The scanner takes "\n", "\r\n", "\r\r\n" and a lone "\r" as one line end each: a
// stream with any mix of them gives the units, lines and errors of the same stream
// with "\n" alone. The read sizes vary, so that a "\r\n" is cut between two reads too.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{
		"a\r\nb\n", "a\rb\r", "a\r\r\nb\n", "\r\n\r\n", "a\rb\nc\r\nd", "\r", "\n\r", "a\r\n\rb\r\n",
		"a\r\r\r\nb\r\r", "\r\r\r", "a\r\rb",
		"a\n\rb\n\r", "a\n\r\n\rb\n\r", "\n\r\r\n", "a\n\r\rb", "a\r\n\rb\n\r\n", // LF CR (review F14)
	} {
		f.Add([]byte(seed), uint8(1))
		f.Add([]byte(seed), uint8(3))
	}
	p, _ := engine.Lookup("sio-pairs")
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		s := serialio.NewScanner(p, nil)
		s.Stats = &serialio.LineStats{}
		s.Reset(iotest.OneByteReader(bytes.NewReader(in)))
		if chunk > 1 {
			s.Reset(&chunkReader{r: bytes.NewReader(in), n: int(chunk)})
		}
		got := scanAll(t, s)
		norm := normalEnds(in)
		lines := bytes.Count(norm, []byte("\n")) + 1
		s2 := serialio.NewScanner(p, nil)
		s2.Reset(bytes.NewReader(norm))
		want := scanAll(t, s2)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: units\n got %q\nwant %q (of %q)", in, got, want, norm)
		}
		for _, u := range got {
			var n int
			if _, err := fmt.Sscanf(u, "%d:", &n); err != nil || n < 1 || n > lines {
				t.Fatalf("unit %q: at a line out of 1 to %d", u, lines)
			}
		}
		if ends := s.Stats.Ends(); ends != int64(bytes.Count(norm, []byte("\n"))) {
			t.Fatalf("%q: %d line ends counted, want %d", in, ends, bytes.Count(norm, []byte("\n")))
		}
		if s.Stats.Bytes() != int64(len(in)) {
			t.Fatalf("%q: %d bytes counted, want %d", in, s.Stats.Bytes(), len(in))
		}
	})
}

// chunkReader reads at most n bytes at a time.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// Line ends: "\r\n" is one end, never two (no empty line after it), and so is
// "\r\r\n" (a CRLF device behind a layer that adds a CR), and "\n\r" (a device that
// ends its lines in LF CR); a lone "\r" is one; mixed in one stream, each is one. A "\r" right after a line ended by "\r" is an empty line.
func TestScannerLineEnds(t *testing.T) {
	p, _ := engine.Lookup("sio-pairs")
	for _, c := range []struct{ in string }{
		{"a\nb\nc\nd\n"}, {"a\r\nb\r\nc\r\nd\r\n"}, {"a\rb\rc\rd\r"}, {"a\rb\r\nc\nd\r"}, {"a\rb\r\nc\nd"},
		{"a\r\r\nb\r\r\nc\r\r\nd\r\r\n"}, {"a\r\r\nb\rc\r\nd"},
		{"a\n\rb\n\rc\n\rd\n\r"}, {"a\n\rb\r\nc\n\rd"}, // LF CR: one end (review F14)
	} {
		s := serialio.NewScanner(p, nil)
		s.Reset(iotest.OneByteReader(strings.NewReader(c.in)))
		if got := fmt.Sprint(scanAll(t, s)); got != fmt.Sprint([]string{"1:a\nb\n", "3:c\nd\n"}) {
			t.Errorf("%q: %q, want two pairs at lines 1 and 3", c.in, got)
		}
	}
}

// A port read for a long time passes 2^31 lines: the line of each unit goes on in 64
// bits, never negative (an int of the armhf build would wrap).
func TestScannerLinePast32Bits(t *testing.T) {
	p, _ := engine.Lookup("sio-pairs")
	s := serialio.NewScanner(p, nil)
	const first int64 = 1<<31 - 3
	s.CountFrom(first)
	s.Reset(strings.NewReader("a\nb\nc\nd\ne\nf\n\n"))
	want := []string{
		fmt.Sprintf("%d:a\nb\n", first+1), fmt.Sprintf("%d:c\nd\n", first+3), fmt.Sprintf("%d:e\nf\n", first+5),
		fmt.Sprintf("%d:!sio-pairs: line %d: broken pair", first+7, first+7),
	}
	if got := fmt.Sprint(scanAll(t, s)); got != fmt.Sprint(want) {
		t.Fatalf("units\n got %q\nwant %q", got, want)
	}
}

// An empty line ended by "\r" after a line ended by "\r" is held until the next byte
// (a "\n" would make it a stray): it comes with the next byte, or at the stream's end.
func TestScannerCREmptyLine(t *testing.T) {
	p, _ := engine.Lookup("sio-pairs")
	s := serialio.NewScanner(p, nil)
	s.Reset(iotest.OneByteReader(strings.NewReader("a\rb\r\rc\rd\r\r")))
	want := []string{"1:a\nb\n", "3:!sio-pairs: line 3: broken pair", "4:c\nd\n", "6:!sio-pairs: line 6: broken pair"}
	if got := fmt.Sprint(scanAll(t, s)); got != fmt.Sprint(want) {
		t.Fatalf("units\n got %q\nwant %q", got, want)
	}
}
