package daemon_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/serialio"
)

// Every seed sample through stdin and stdout: the daemon returns at the end of input,
// every unit answered, byte-exact.
func TestStdioSamples(t *testing.T) {
	_, nc := startBus(t, true)
	for _, c := range samples.Cases {
		t.Run(c.File, func(t *testing.T) {
			var out bytes.Buffer
			d := startDaemon(t, nc, daemon.Config{
				Ports:  []daemon.PortConfig{{Device: "-", Problem: c.Problem}},
				Stdin:  bytes.NewReader(sample(t, c.File+".in")),
				Stdout: &out,
			})
			select {
			case err := <-d.done:
				d.done <- err
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(long):
				t.Fatalf("the daemon did not end with its input; logs:\n%s", d.logs.String())
			}
			if want := sample(t, c.File+".out"); !bytes.Equal(out.Bytes(), want) {
				t.Errorf("output\n got %q\nwant %q", out.Bytes(), want)
			}
		})
	}
}

// Every seed sample through a pseudo-terminal, byte-exact.
func TestPTYSamples(t *testing.T) {
	_, nc := startBus(t, true)
	for _, c := range samples.Cases {
		t.Run(c.File, func(t *testing.T) {
			pt := newPTY(t)
			d := startDaemon(t, nc, daemon.Config{
				Ports: []daemon.PortConfig{{Device: pt.Path, Problem: c.Problem, Line: serialio.LineSettings{Baud: 115200}}},
			})
			waitOpened(t, pt)
			if _, err := pt.Master.Write(sample(t, c.File+".in")); err != nil {
				t.Fatal(err)
			}
			want := sample(t, c.File+".out")
			if got := readN(t, pt.Master, len(want)); !bytes.Equal(got, want) {
				t.Errorf("output\n got %q\nwant %q", got, want)
			}
			d.stop(t)
		})
	}
}

// Garbage lines, NUL bytes, a 100 KB line and a board that breaks off, mixed between
// valid boards: every valid board is answered, in order; each bad unit has an error
// result; and with ErrorLine the port gets a line for each.
func TestGarbageBetweenBoards(t *testing.T) {
	for _, errorLine := range []bool{false, true} {
		name := "silent"
		if errorLine {
			name = "error-line"
		}
		t.Run(name, func(t *testing.T) {
			_, nc := startBus(t, true)
			res := results(t, nc)
			pt := newPTY(t)
			d := startDaemon(t, nc, daemon.Config{
				Ports: []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", Name: "club", ErrorLine: errorLine}},
			})
			waitOpened(t, pt)

			broken := strings.Join(strings.SplitAfter(board(3), "\n")[:8], "")
			garbage := []string{
				"hello scoreboard\r\n",
				"\x00\x00\x00\x00\n",
				strings.Repeat("@", 100<<10) + "\n",
				broken, // a spacer and 7 rows, then the next board's spacer
				"\xff\xfe garbage\n\n\n",
			}
			var in, want strings.Builder
			for i := 0; i < 6; i++ {
				b := board(i + 1)
				in.WriteString(b)
				want.WriteString(goscoreAnswer(t, b))
				if i < len(garbage) {
					in.WriteString(garbage[i])
				}
			}
			if _, err := pt.Master.Write([]byte(in.String())); err != nil {
				t.Fatal(err)
			}
			if !errorLine {
				got := readN(t, pt.Master, want.Len())
				if string(got) != want.String() {
					t.Fatalf("answers\n got %q\nwant %q", got, want.String())
				}
			}
			// Six answers and the error results, each seq once, in a single sequence.
			seen := map[uint64]bool{}
			var answers, errs int
			for answers < 6 {
				select {
				case r := <-res:
					if r.Port != "club" || r.Problem != "goscore" {
						t.Fatalf("result of port %q problem %q", r.Port, r.Problem)
					}
					if seen[r.Seq] {
						t.Fatalf("seq %d twice", r.Seq)
					}
					seen[r.Seq] = true
					if r.Error != "" {
						errs++
						if r.Worker != "reader" && !strings.Contains(r.Error, "line") {
							t.Errorf("error result without a line: %+v", r)
						}
					} else {
						answers++
					}
				case <-time.After(long):
					t.Fatalf("%d answers and %d errors; logs:\n%s", answers, errs, d.logs.String())
				}
			}
			if errs < len(garbage)-1 {
				t.Errorf("%d error results for %d pieces of garbage", errs, len(garbage))
			}
			if d.logs.count(map[string]any{"level": "warn", "message": "line dropped"}) != 1 {
				t.Errorf("want one warning for the 100 KB line; logs:\n%s", d.logs.String())
			}
			if errorLine {
				// The answers, with an error line wherever a bad unit was, in order.
				var got strings.Builder
				lines := 0
				for lines < 6+errs {
					b := readN(t, pt.Master, 1)
					got.Write(b)
					if b[0] == '\n' {
						lines++
					}
				}
				var answersOnly strings.Builder
				for _, l := range strings.SplitAfter(got.String(), "\n") {
					if strings.HasPrefix(l, "error: goscore: line ") {
						continue
					}
					answersOnly.WriteString(l)
				}
				t.Logf("port output with error lines:\n%s", got.String())
				if answersOnly.String() != want.String() {
					t.Fatalf("port output %q: answers %q, want %q", got.String(), answersOnly.String(), want.String())
				}
			}
			d.stop(t)
		})
	}
}

// Othello answers each command as soon as its line arrives: the scoreboard sends a
// line, and reads its answer before it sends the next.
func TestOthelloAnswersEachCommand(t *testing.T) {
	_, nc := startBus(t, true)
	pt := newPTY(t)
	d := startDaemon(t, nc, daemon.Config{Ports: []daemon.PortConfig{{Device: pt.Path, Problem: "othello"}}})
	waitOpened(t, pt)
	p, _ := engine.Lookup("othello")
	lines := strings.SplitAfter(string(sample(t, "othello.in")), "\n")
	answered := 0 // bytes of the contest output of the lines sent so far
	commands := 0
	for k := range lines {
		if _, err := pt.Master.Write([]byte(lines[k])); err != nil {
			t.Fatal(err)
		}
		// What the contest outputs for the input so far is what the port must have
		// written by now; the difference comes for this line.
		var out bytes.Buffer
		if _, err := engine.Contest(p, strings.NewReader(strings.Join(lines[:k+1], "")), &out, func(error) {}); err != nil {
			t.Fatal(err)
		}
		if n := out.Len() - answered; n > 0 {
			commands++
			if got := readN(t, pt.Master, n); string(got) != out.String()[answered:] {
				t.Fatalf("after line %d %q: answer %q, want %q", k+1, lines[k], got, out.String()[answered:])
			}
			answered = out.Len()
		}
	}
	if want := sample(t, "othello.out"); answered != len(want) || commands < 4 {
		t.Fatalf("%d bytes answered over %d commands; want %d bytes", answered, commands, len(want))
	}
	d.stop(t)
}
