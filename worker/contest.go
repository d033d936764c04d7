package worker

import (
	"bytes"

	"github.com/goclub/scoreboard/engine"
)

// contest answers a whole contest input held in memory, as engine.Contest does for a
// stream, but reuses its framer and buffers across requests.
type contest struct {
	p      engine.Problem
	fr     engine.Framer
	frames []engine.Frame
	out    []byte

	bad   int   // errors: bad units and overlong lines
	first error // the first of them, an *engine.InputError naming the input's line
}

// run answers in into c.out, counting the bad units. Its error is not about the
// input: only a solver that panicked returns one.
func (c *contest) run(in []byte) (err error) {
	c.out, c.bad, c.first = c.out[:0], 0, nil
	defer c.fr.Reset()
	defer func() {
		if v := recover(); v != nil {
			err = engine.Errorf(c.p.Name(), 0, "internal error: %v", v)
		}
	}()
	maxLine := c.p.Limits().MaxLine
	lineNo := 0
	for len(in) > 0 {
		line := in
		if i := bytes.IndexByte(in, '\n'); i >= 0 {
			line, in = in[:i], in[i+1:]
		} else {
			in = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		lineNo++
		if len(line) > maxLine {
			c.fail(engine.Errorf(c.p.Name(), lineNo, "%v: %d bytes, limit %d", engine.ErrLineTooLong, len(line), maxLine))
			line = nil // the framer's sign for a dropped line
		}
		c.frames = c.fr.Feed(c.frames[:0], line)
		c.answer()
	}
	c.frames = c.fr.End(c.frames[:0])
	c.answer()
	return nil
}

func (c *contest) answer() {
	for _, f := range c.frames {
		if f.Err != nil {
			c.fail(f.Err)
			continue
		}
		var err error
		n := len(c.out)
		if c.out, err = c.p.Append(c.out, f.Unit); err != nil {
			c.out = c.out[:n]
			c.fail(engine.Rebase(err, f.Line))
		}
	}
}

func (c *contest) fail(err error) {
	if c.bad == 0 {
		c.first = err
	}
	c.bad++
}
