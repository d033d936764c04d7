package main

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/internal/proctest"
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
// same contest computed in-process), in the same run: with the history off, and on
// (every dump and result stored in the stream, the port's latest in the bucket). boards/s is the figure to
// compare, and cpu-µs/board (the process's CPU time, user and system, which other
// processes on a shared machine change far less); one op is the whole file,
// start-up and shut-down included (with the history, until the stream has stored
// every unit and result).
func BenchmarkPipeline(b *testing.B) {
	const boards = 10000
	in := goscoreBoards(boards)
	var want bytes.Buffer
	if code := runMain(context.Background(), []string{"solve", "goscore"}, stdio{bytes.NewReader(in), &want, io.Discard}); code != 0 {
		b.Fatalf("solve: exit %d", code)
	}
	runArgs := []string{"run", "--nats-listen", "off", "--log-level", "warn", "--port", "-", "--problem", "goscore"}
	for _, c := range []struct {
		name string
		args func(b *testing.B) []string
	}{
		{"solve", func(*testing.B) []string { return []string{"solve", "goscore"} }},
		{"run", func(*testing.B) []string { return append(runArgs, "--history=false") }},
		// A store of its own each time: a daemon that starts on a store rereads the
		// ids of its last two minutes (the deduplication window), which the loop's
		// restarts, not a club's daemon, would pay again and again.
		{"run-history", func(b *testing.B) []string { return append(runArgs, "--state-dir", b.TempDir()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out bytes.Buffer
			cpu := proctest.CPUTime()
			for b.Loop() {
				out.Reset()
				if code := runMain(context.Background(), c.args(b), stdio{bytes.NewReader(in), &out, io.Discard}); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			if !bytes.Equal(out.Bytes(), want.Bytes()) {
				b.Fatal("output differs from solve's")
			}
			b.ReportMetric(float64(boards)*float64(b.N)/b.Elapsed().Seconds(), "boards/s")
			b.ReportMetric(float64(proctest.CPUTime()-cpu)/1e3/float64(boards*b.N), "cpu-µs/board")
		})
	}
	// The floor of run's rows: the same boards' three NATS messages alone (natsHop).
	const origin = "NATSHOPBENCHORIGIN0000"
	hp := newHopPayloads(b, in, daemon.DefaultName("-"), origin)
	b.Run("nats-hop", func(b *testing.B) {
		cpu := proctest.CPUTime()
		for b.Loop() {
			natsHop(b, hp, origin)
		}
		b.ReportMetric(float64(boards)*float64(b.N)/b.Elapsed().Seconds(), "boards/s")
		b.ReportMetric(float64(proctest.CPUTime()-cpu)/1e3/float64(boards*b.N), "cpu-µs/board")
	})
}

// BenchmarkHistoryCost is the history's cost as the issue states its goal: `run
// --port -` with the history on against off, 10,000 goscore boards each, the two
// alternating within every op so that a machine that gets busier slows both alike.
// It reports each one's boards/s and the ratios on/off, by wall time and by CPU
// time (the process's, user and system).
func BenchmarkHistoryCost(b *testing.B) {
	benchAlternating(b, "off", "on", func(on bool) []string {
		if on {
			return []string{"--state-dir", b.TempDir()}
		}
		return []string{"--history=false"}
	})
}

// BenchmarkHistoryHold is what holding each answer until the history has stored its
// result costs (daemon.Stored): `run --port -` with the history on, 10,000 goscore
// boards, the answers held against not held (the code before the hold), the two
// alternating within every op. It reports each one's boards/s and the ratio
// held/not held, by wall time and by CPU time.
func BenchmarkHistoryHold(b *testing.B) {
	defer func() { holdForHistory = true }()
	benchAlternating(b, "not-held", "held", func(hold bool) []string {
		holdForHistory = hold
		return []string{"--state-dir", b.TempDir()}
	})
}

// benchAlternating runs 10,000 goscore boards through `run --port -` twice an op,
// with the flags before(false) gives and then those of before(true), and reports
// each one's boards/s and the ratios second/first by wall and by CPU time, named
// by base and other.
func benchAlternating(b *testing.B, base, other string, before func(second bool) []string) {
	const boards = 10000
	in := goscoreBoards(boards)
	args := []string{"run", "--nats-listen", "off", "--http", "off", "--log-level", "warn", "--port", "-", "--problem", "goscore"}
	var wall, cpu [2]time.Duration
	for b.Loop() {
		for i, second := range []bool{false, true} {
			extra := before(second)
			start, c := time.Now(), proctest.CPUTime()
			if code := runMain(context.Background(), append(args[:len(args):len(args)], extra...), stdio{bytes.NewReader(in), io.Discard, io.Discard}); code != 0 {
				b.Fatalf("%v: exit %d", extra, code)
			}
			wall[i] += time.Since(start)
			cpu[i] += proctest.CPUTime() - c
		}
	}
	n := float64(boards * b.N)
	b.ReportMetric(n/wall[0].Seconds(), base+"-boards/s")
	b.ReportMetric(n/wall[1].Seconds(), other+"-boards/s")
	b.ReportMetric(100*wall[0].Seconds()/wall[1].Seconds(), other+"/"+base+"-wall-%")
	b.ReportMetric(100*cpu[0].Seconds()/cpu[1].Seconds(), other+"/"+base+"-cpu-%")
}
