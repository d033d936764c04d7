package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// The seed corpora live in testdata/fuzz/FuzzCapture*/: the sample, hostile headers
// (2^31-1, 2^31, M over 25000, digits without end), broken lines and long games.

// FuzzCaptureContest: any stream gives answers and errors naming its lines, never a
// panic.
func FuzzCaptureContest(f *testing.F) {
	f.Add([]byte("2 6\n0 1\n0 0\n1 0\n0 0\n0 0\n1 1\n"))
	f.Fuzz(func(t *testing.T, in []byte) { fuzzContest(t, "capture", in) })
}

// FuzzCaptureUnit: Append and Solve agree on any unit; on a small board the answer is
// the reference's.
func FuzzCaptureUnit(f *testing.F) {
	f.Add([]byte("2 6\n0 1\n0 0\n1 0\n0 0\n0 0\n1 1\n"))
	f.Fuzz(func(t *testing.T, unit []byte) {
		fuzzUnit(t, "capture", unit)
		g, err := engine.CaptureParse(unit)
		if err != nil || g.Size > 64 {
			return
		}
		moves := make([]capturePt, len(g.Moves))
		for i, m := range g.Moves {
			moves[i] = capturePt{m.X, m.Y}
		}
		want, bad := captureSimpleCount(g.Size, moves)
		ans, err := g.Play()
		if bad >= 0 {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("move %d:", bad+1)) {
				t.Fatalf("the reference finds move %d on an occupied point; Play: %+v, %v", bad+1, ans, err)
			}
			return
		}
		if err != nil || ans.Captured != want {
			t.Fatalf("Play: %+v, %v; the reference counts %d", ans, err, want)
		}
	})
}

// FuzzCaptureGame turns bytes into a game that is always well formed (a move on an
// occupied point goes to the next free one), so the fuzzer spends its time in the
// play, and checks the engine against the reference. Games stop at 300 moves to keep
// the fuzzer quick; the differential tests play longer ones. Nearly every input here
// finds new coverage, and minimising each one takes the default 60 s, so fuzz it with
// a bounded minimisation:
//
//	go test -run='^$' -fuzz='^FuzzCaptureGame$' -fuzztime=30s -fuzzminimizetime=200x ./engine/
func FuzzCaptureGame(f *testing.F) {
	f.Add(byte(2), []byte{0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1})
	f.Add(byte(1), []byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, side byte, moves []byte) {
		size := 1 + int(side)%12
		s := newCaptureSimple(size)
		g := &captureGame{size: size, byRef: true, bad: -1}
		for i := 0; i+1 < len(moves) && len(g.moves) < 300; i += 2 {
			k := (int(moves[i])%size*size + int(moves[i+1])%size)
			for j := 0; j < size*size && s.at(capturePt{k % size, k / size}) != 0; j++ {
				k = (k + 1) % (size * size)
			}
			p := capturePt{k % size, k / size}
			if s.at(p) != 0 {
				break
			}
			s.play(p)
			g.moves = append(g.moves, p)
		}
		if len(g.moves) == 0 {
			return
		}
		g.want = s.captured
		captureDiff(t, g)
	})
}

// FuzzCaptureFramer feeds lines (a line "~" stands for a dropped one) and checks what
// the framer promises: units within the limits, whose header and move count the
// parser agrees with; errors naming lines that were fed; Reset's count.
func FuzzCaptureFramer(f *testing.F) {
	f.Add([]byte("2 6\n0 1\n0 0\n1 0\n\n0 0\n0 0\n1 1\n"), uint8(0))
	f.Add([]byte("3 3\n0 0\n~\n1 1\n3 1\n0 0\n"), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, resetAt uint8) {
		p := mustProblem(t, "capture")
		lim := p.Limits()
		fr := p.NewFramer()
		lines := bytes.Split(in, []byte("\n"))
		fed := 0
		check := func(frames []engine.Frame) {
			for _, f := range frames {
				if f.Line < 1 || f.Line > fed {
					t.Fatalf("frame names line %d after %d lines", f.Line, fed)
				}
				if f.Err != nil {
					var ie *engine.InputError
					if !errors.As(f.Err, &ie) || ie.Line < f.Line || ie.Line > fed {
						t.Fatalf("frame from line %d after %d lines: %v", f.Line, fed, f.Err)
					}
					continue
				}
				if len(f.Unit) > lim.MaxUnit || len(f.Unit) == 0 || f.Unit[len(f.Unit)-1] != '\n' {
					t.Fatalf("unit of %d bytes (limit %d): %q", len(f.Unit), lim.MaxUnit, f.Unit)
				}
				// The framer does not check the moves, but the header and the count
				// are right: the parser fails on a move line, if at all.
				_, err := p.Append(nil, f.Unit)
				var ie *engine.InputError
				if err != nil && (!errors.As(err, &ie) || ie.Line < 2 || strings.Contains(ie.Msg, "header") || strings.Contains(ie.Msg, "cut short")) {
					t.Fatalf("framed unit %q: %v", f.Unit, err)
				}
			}
		}
		for i, l := range lines {
			if bytes.Equal(l, []byte("~")) {
				l = nil
			}
			if i == int(resetAt) {
				if n := fr.Reset(); n < 0 || n > fed {
					t.Fatalf("Reset dropped %d lines of %d", n, fed)
				}
				fed = 0
			}
			fed++
			check(fr.Feed(nil, l))
		}
		check(fr.End(nil))
	})
}
