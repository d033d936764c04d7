package engine_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
)

// The bulk path (engine.Contest) against the line path (engine.ContestLines: a
// LineReader, the framer line by line, Append per unit, as the serial side runs it):
// the same output bytes, the same bad-unit count and the same error messages, on every
// test input there is.

// contestRun is what one path made of an input.
type contestRun struct {
	out  string
	bad  int
	errs []string
}

func runPath(t testing.TB, path func(engine.Problem, io.Reader, io.Writer, func(error)) (int, error), p engine.Problem, r io.Reader) contestRun {
	t.Helper()
	var out bytes.Buffer
	var run contestRun
	bad, err := path(p, r, &out, func(err error) { run.errs = append(run.errs, err.Error()) })
	if err != nil {
		t.Fatalf("%s: %v", p.Name(), err)
	}
	run.out, run.bad = out.String(), bad
	return run
}

// chunkReader hands out its input in random pieces, so that lines and units straddle
// the bulk path's reads.
type chunkReader struct {
	b   []byte
	rng *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.b), 1+c.rng.IntN(2000))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// bulkDiff checks one input on both paths, read at once, in random pieces and a byte
// at a time (short inputs only: that one is slow).
func bulkDiff(t *testing.T, p engine.Problem, name string, in []byte) {
	t.Helper()
	want := runPath(t, engine.ContestLines, p, bytes.NewReader(in))
	readers := map[string]io.Reader{
		"whole":  bytes.NewReader(in),
		"chunks": &chunkReader{b: in, rng: rand.New(rand.NewPCG(uint64(len(in)), 1))},
		// The last data comes with io.EOF, in the same call.
		"data+EOF": iotest.DataErrReader(&chunkReader{b: in, rng: rand.New(rand.NewPCG(uint64(len(in)), 2))}),
	}
	if len(in) < 20000 {
		readers["bytes"] = iotest.OneByteReader(bytes.NewReader(in))
	}
	for how, r := range readers {
		got := runPath(t, engine.Contest, p, r)
		if got.out != want.out {
			t.Fatalf("%s %s (%s): output differs\nbulk: %q\nline: %q", p.Name(), name, how, clip(got.out), clip(want.out))
		}
		if got.bad != want.bad || strings.Join(got.errs, "\n") != strings.Join(want.errs, "\n") {
			t.Fatalf("%s %s (%s): bulk bad=%d errors\n%s\nline bad=%d errors\n%s", p.Name(), name, how,
				got.bad, clip(strings.Join(got.errs, "\n")), want.bad, clip(strings.Join(want.errs, "\n")))
		}
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// fuzzSeeds reads the byte strings of a committed fuzz corpus.
func fuzzSeeds(t *testing.T, target string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(text), "\n") {
			if !strings.HasPrefix(line, "[]byte(") {
				continue
			}
			s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			seeds[filepath.Base(f)] = []byte(s)
		}
	}
	return seeds
}

// corrupt breaks a stream the ways a scoreboard does: lines lost, doubled, cut, made
// too long, given a CR, garbage put in.
func corrupt(rng *rand.Rand, in []byte, maxLine int) []byte {
	lines := bytes.SplitAfter(in, []byte("\n"))
	var out []byte
	for _, l := range lines {
		switch rng.IntN(60) {
		case 0:
			continue
		case 1:
			out = append(out, l...)
		case 2:
			l = l[:rng.IntN(len(l)+1)]
		case 3:
			out = append(out, bytes.Repeat([]byte("7 "), maxLine/2+1+rng.IntN(3))...)
			out = append(out, '\n')
		case 4:
			if n := len(l); n > 0 && l[n-1] == '\n' {
				l = append(append(append([]byte{}, l[:n-1]...), '\r'), '\n')
			}
		case 5:
			out = append(out, "garbage x\n"...)
		case 6:
			out = append(out, '\n')
		}
		out = append(out, l...)
	}
	return out
}

// generated returns a stream of each problem from the package's generators.
func generated(rng *rand.Rand, problem string) []byte {
	var b []byte
	switch problem {
	case "goscore":
		for i := range 300 {
			b = append(b, goscoreText(rng, boardGenPosition(rng, 19), i%2 == 0)...)
		}
	case "replay":
		for range 100 {
			n := 3 + 2*rng.IntN(9)
			moves, _ := boardGenGame(rng, n, rng.IntN(2*n*n+1))
			b = append(b, replayText(rng, n, moves)...)
		}
		b = append(b, "0 0\n"...)
	case "territory":
		for range 300 {
			b = append(b, territoryLayout(rng, territoryGenCase(rng))...)
		}
		b = append(b, "0\n"...)
	case "othello":
		b = othelloGenContest(rng, 20, true)
	case "capture":
		for range 10 {
			b = append(b, captureRandomGame(rng, 3+rng.IntN(20), 1+rng.IntN(400), 0.02).text()...)
		}
	}
	return b
}

func TestContestBulkMatchesLines(t *testing.T) {
	for _, name := range engine.Names() {
		t.Run(name, func(t *testing.T) {
			p := mustProblem(t, name)
			for _, c := range samples.Cases {
				if c.Problem == name {
					in, _ := samples.Pair(t, c)
					bulkDiff(t, p, c.File, in)
				}
			}
			target := "Fuzz" + strings.ToUpper(name[:1]) + name[1:] + "Contest"
			for f, in := range fuzzSeeds(t, target) {
				bulkDiff(t, p, target+"/"+f, in)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			for i := range 4 {
				in := generated(rng, name)
				bulkDiff(t, p, fmt.Sprintf("generated %d", i), in)
				bulkDiff(t, p, fmt.Sprintf("generated %d, corrupted", i), corrupt(rng, in, p.Limits().MaxLine))
			}
		})
	}
}

// TestContestBulkStrayCR: a line may end in more than one "\r" (a line "0\r" sent with
// "\r\n"). The line path strips one "\r" in the LineReader and, for the problems whose
// Append cuts the unit into lines again, one more there; the bulk path must quote and
// accept the same line. FuzzContestBulk found the capture move line "0\r\r\n" (its seed
// capture-stray-cr).
func TestContestBulkStrayCR(t *testing.T) {
	for _, name := range engine.Names() {
		p := mustProblem(t, name)
		for _, c := range samples.Cases {
			if c.Problem != name {
				continue
			}
			in, _ := samples.Pair(t, c)
			for _, end := range []string{"\r\r\n", "\r\r\r\n", " \r\r\n", "\r \r\n"} {
				every := bytes.ReplaceAll(in, []byte("\n"), []byte(end))
				bulkDiff(t, p, fmt.Sprintf("%s, every line ending %q", c.File, end), every)
				// One line at a time, so each is the first bad line of its unit.
				lines := bytes.SplitAfter(in, []byte("\n"))
				for i := range lines {
					if !bytes.HasSuffix(lines[i], []byte("\n")) {
						continue
					}
					one := bytes.Join(lines[:i], nil)
					one = append(one, lines[i][:len(lines[i])-1]...)
					one = append(one, end...)
					one = append(one, bytes.Join(lines[i+1:], nil)...)
					bulkDiff(t, p, fmt.Sprintf("%s, line %d ending %q", c.File, i+1, end), one)
					// The same line made bad, so that its error quotes it.
					one = bytes.Join(lines[:i], nil)
					one = append(one, "0"+end...)
					one = append(one, bytes.Join(lines[i+1:], nil)...)
					bulkDiff(t, p, fmt.Sprintf("%s, line %d \"0\" ending %q", c.File, i+1, end), one)
				}
			}
		}
	}
}

// TestContestBulkLongLines: lines over the bound, at every size around the LineReader's
// buffer, in the middle of a stream and at its end, without and with "\r".
func TestContestBulkLongLines(t *testing.T) {
	for _, name := range engine.Names() {
		p := mustProblem(t, name)
		max := p.Limits().MaxLine
		for _, n := range []int{max + 1, max + 2, max + 3, 4094, 4095, 4096, 4097, max + 4096, 3 << 20} {
			if n <= max {
				continue
			}
			long := bytes.Repeat([]byte("1"), n)
			for _, end := range []string{"\n", "\r\n", "\r", ""} {
				in := append(append([]byte("1\n"), long...), end...)
				bulkDiff(t, p, fmt.Sprintf("a %d-byte line ending %q", n, end), in)
				in = append(in, "\n2 2\n"...)
				bulkDiff(t, p, fmt.Sprintf("a %d-byte line ending %q, then more", n, end), in)
			}
		}
	}
}

// FuzzContestBulk: on any input, the bulk path and the line path agree byte for byte.
// The first byte picks the problem.
func FuzzContestBulk(f *testing.F) {
	names := engine.Names()
	for i, name := range names {
		for _, c := range samples.Cases {
			if c.Problem == name {
				in, _ := samples.Pair(f, c)
				f.Add(append([]byte{byte(i)}, in...))
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		p := mustProblem(t, names[int(in[0])%len(names)])
		bulkDiff(t, p, "fuzz input", in[1:])
	})
}

// BenchmarkContestBulk: the bulk path beside the line path on about 2 MB of each
// problem's generated input, in memory, in the same run; floor is what just finding
// the lines of that input costs (one IndexByte per line), the least any framing
// could spend.
func BenchmarkContestBulk(b *testing.B) {
	for _, name := range engine.Names() {
		p := mustProblem(b, name)
		rng := rand.New(rand.NewPCG(21, uint64(len(name))))
		var in []byte
		for len(in) < 2<<20 {
			in = append(in, generated(rng, name)...)
		}
		for _, c := range []struct {
			name string
			path func(engine.Problem, io.Reader, io.Writer, func(error)) (int, error)
		}{{"bulk", engine.Contest}, {"lines", engine.ContestLines}} {
			b.Run(name+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					c.path(p, bytes.NewReader(in), io.Discard, func(error) {})
				}
			})
		}
		b.Run(name+"/floor", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				for rest := in; len(rest) > 0; {
					i := bytes.IndexByte(rest, '\n')
					if i < 0 {
						break
					}
					rest = rest[i+1:]
				}
			}
		})
	}
}

// TestContestAnswersAtOnce: interactive use. The input comes through a pipe a line at
// a time, and each answer must come out as soon as the line that completes its unit
// is in, before the next line is written, on every sample (goscore's in-place boards
// and the answering framers included).
func TestContestAnswersAtOnce(t *testing.T) {
	for _, c := range samples.Cases {
		t.Run(c.File, func(t *testing.T) {
			p := mustProblem(t, c.Problem)
			in, want := samples.Pair(t, c)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				_, err := engine.Contest(p, inR, outW, func(error) {})
				outW.CloseWithError(err)
				done <- err
			}()
			lines := bytes.SplitAfter(in, []byte("\n"))
			answered, got := 0, 0
			for k, line := range lines {
				if _, err := inW.Write(line); err != nil {
					t.Fatal(err)
				}
				// The output of the input so far, by the line path, is what must be
				// out by now.
				var out bytes.Buffer
				if _, err := engine.ContestLines(p, bytes.NewReader(bytes.Join(lines[:k+1], nil)), &out, func(error) {}); err != nil {
					t.Fatal(err)
				}
				if n := out.Len() - answered; n > 0 {
					buf := make([]byte, n)
					read := make(chan error, 1)
					go func() { _, err := io.ReadFull(outR, buf); read <- err }()
					select {
					case err := <-read:
						if err != nil {
							t.Fatalf("after line %d: reading %d bytes of answer: %v", k+1, n, err)
						}
					case <-time.After(30 * time.Second):
						t.Fatalf("after line %d: %d bytes of answer due, none came in 30s (held in a buffer?)", k+1, n)
					}
					if !bytes.Equal(buf, out.Bytes()[answered:]) {
						t.Fatalf("after line %d: answer %q, want %q", k+1, buf, out.Bytes()[answered:])
					}
					answered = out.Len()
					got++
				}
			}
			inW.Close()
			if rest, err := io.ReadAll(outR); err != nil || len(rest) != 0 {
				t.Fatalf("after the end of input: %q, %v", rest, err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if answered != len(want) || got == 0 {
				t.Fatalf("%d bytes answered in %d pieces, want the %d bytes of the sample output", answered, got, len(want))
			}
		})
	}
}
