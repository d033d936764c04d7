package engine_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// FuzzOthelloContest: any stream gives output and line-naming errors, and every unit
// the framer emits is well formed: Append answers it, Solve agrees, and it fits the
// limit.
func FuzzOthelloContest(f *testing.F) {
	f.Add([]byte("2\n" + othelloGame(othelloOpening, "W", "L", "M35", "L", "Q") +
		othelloGame(othelloBlackStuck, "B", "L", "M25", "L", "Q")))
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzContest(t, "othello", in)
		p := mustProblem(t, "othello")
		lim := p.Limits()
		lr := engine.NewLineReader(bytes.NewReader(in), lim.MaxLine)
		fr := p.NewFramer()
		check := func(frames []engine.Frame) {
			for _, fm := range frames {
				if fm.Err != nil {
					continue
				}
				if len(fm.Unit) > lim.MaxUnit {
					t.Fatalf("unit of %d bytes, limit %d: %q", len(fm.Unit), lim.MaxUnit, fm.Unit)
				}
				text, err := p.Append(nil, fm.Unit)
				if err != nil {
					t.Fatalf("the framer's unit %q fails: %v", fm.Unit, err)
				}
				ans, err := p.Solve(fm.Unit)
				if err != nil || !bytes.Equal(ans.AppendText(nil), text) {
					t.Fatalf("unit %q: Solve %v, text differs from Append's %q", fm.Unit, err, text)
				}
			}
		}
		for {
			line, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				line = nil
			}
			check(fr.Feed(nil, line))
		}
		check(fr.End(nil))
	})
}

// FuzzOthelloUnit: any unit gives an answer or an *InputError, and Append and Solve
// agree.
func FuzzOthelloUnit(f *testing.F) {
	f.Add([]byte(othelloGame(othelloOpening, "W", "L")))
	f.Fuzz(func(t *testing.T, unit []byte) {
		fuzzUnit(t, "othello", unit)
	})
}
