package main

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"
)

// goscoreBoards makes n random goscore boards, each with its spacer line.
func goscoreBoards(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for range n {
		b.WriteByte('\n')
		for range 19 {
			for range 19 {
				b.WriteByte(' ')
				b.WriteByte("+++@O"[r.IntN(5)])
			}
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// BenchmarkPipeline runs 10,000 goscore boards through `run --port -` (every board a
// dump through the embedded NATS, a worker and the display writer) beside `solve` (the
// same contest computed in-process), in the same run. boards/s is the figure to
// compare; one op is the whole file, start-up and shut-down included.
func BenchmarkPipeline(b *testing.B) {
	const boards = 10000
	in := goscoreBoards(boards)
	var want bytes.Buffer
	if code := runMain(context.Background(), []string{"solve", "goscore"}, stdio{bytes.NewReader(in), &want, io.Discard}); code != 0 {
		b.Fatalf("solve: exit %d", code)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"solve", []string{"solve", "goscore"}},
		{"run", []string{"run", "--nats-listen", "off", "--log-level", "warn", "--port", "-", "--problem", "goscore"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if code := runMain(context.Background(), c.args, stdio{bytes.NewReader(in), &out, io.Discard}); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			if !bytes.Equal(out.Bytes(), want.Bytes()) {
				b.Fatal("output differs from solve's")
			}
			b.ReportMetric(float64(boards)*float64(b.N)/b.Elapsed().Seconds(), "boards/s")
		})
	}
}
