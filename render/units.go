package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/goclub/scoreboard/engine"
)

// MaxInput bounds what Unit reads: far more than any sample or day of a port.
const MaxInput = 64 << 20

// Unit returns the n-th unit (from 1) of problem in r. r is either one unit, as a
// port's dump holds it (the history, a 'nats pub'), or a file of units as a
// scoreboard sends them (the samples: two goscore boards, an Othello game's
// commands), cut as a port reader cuts its stream. Input that cannot be framed counts
// as a unit, as on a port; the n-th being such is an error that names its line.
func Unit(problem string, r io.Reader, n int) ([]byte, error) {
	p, err := engine.Find(problem)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	if n < 1 {
		return nil, fmt.Errorf("unit %d: units are numbered from 1", n)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxInput {
		return nil, fmt.Errorf("more than %d MiB: no file of units is that long", MaxInput>>20)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	// One unit as a dump holds it: an Othello unit is its position and command,
	// without the stream's count of games, which framing it would want.
	if n == 1 && len(data) <= p.Limits().MaxUnit {
		if _, err := p.Solve(data); err == nil {
			return data, nil
		}
	}
	fr := p.NewFramer()
	lr := engine.NewLineReader(bytes.NewReader(data), p.Limits().MaxLine)
	var (
		frames []engine.Frame
		seen   int
	)
	take := func() (unit []byte, done bool, err error) {
		for _, f := range frames {
			seen++
			if seen < n {
				continue
			}
			if f.Err != nil {
				return nil, true, fmt.Errorf("unit %d: %w", n, f.Err)
			}
			return bytes.Clone(f.Unit), true, nil
		}
		frames = frames[:0]
		return nil, false, nil
	}
	for line := 1; ; line++ {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, engine.ErrLineTooLong) {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		// An overlong line reaches the framer as nil, as on a port: never valid.
		frames = fr.Feed(frames, l)
		if u, done, err := take(); done {
			return u, err
		}
	}
	frames = fr.End(frames)
	if u, done, err := take(); done {
		return u, err
	}
	if seen == 0 {
		return nil, fmt.Errorf("no %s unit in the input", problem)
	}
	return nil, fmt.Errorf("no unit %d: the input has %d %s units", n, seen, problem)
}

// Picture is a unit's picture (SVG), or with sgf its game record.
func Picture(problem string, unit []byte, sgf bool) ([]byte, error) {
	if !sgf {
		return SVG(problem, unit)
	}
	if !HasSGF(problem) {
		return nil, NoSGFError(problem)
	}
	return SGF(problem, unit)
}

// NoSGFError says that problem's units have no game record.
func NoSGFError(problem string) error {
	return fmt.Errorf("%s units have no game record: only replay, goscore and territory", problem)
}
