package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
)

// solveMaxRSS is the bound on `scoreboard solve`'s peak resident memory, on any input.
const solveMaxRSS = 32 << 20

// solveCase is one large input and the plain C++ solution it is measured against.
type solveCase struct {
	name, problem string
	peer          string // testdata/<peer>.cc
	gen           func() []byte
}

var solveCases = []solveCase{
	{"goscore", "goscore", "goscore_bfs", func() []byte { return goscoreBoards(10000) }},
	{"replay", "replay", "replay_plain", func() []byte { return genReplay(8 << 20) }},
	{"territory", "territory", "territory_plain", func() []byte { return genTerritory(8 << 20) }},
	{"othello", "othello", "othello_plain", func() []byte { return genOthello(8 << 20) }},
	{"capture", "capture", "capture_plain", func() []byte { return genCapture(8 << 20) }},
	{"capture-worst", "capture", "capture_plain", genCaptureWorst},
}

// solveInput writes the case's input into dir, once, and returns its path.
func solveInput(tb testing.TB, dir string, c solveCase) string {
	tb.Helper()
	path := filepath.Join(dir, c.name+".in")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := os.WriteFile(path, c.gen(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// procRun is one whole process over an input file.
type procRun struct {
	out    []byte
	wall   time.Duration
	cpu    time.Duration // user + system
	maxRSS int64         // bytes
}

// runProc runs args with input on stdin, through testdata/maxrss.cc (built as
// maxrss): the process's own peak RSS, not the test binary's (see maxrss.cc).
func runProc(tb testing.TB, maxrss, input string, args ...string) procRun {
	tb.Helper()
	in, err := os.Open(input)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	var out, errb bytes.Buffer
	cmd := exec.Command(maxrss, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%v: %v\n%s", args, err, errb.Bytes())
	}
	r := procRun{out: out.Bytes(), wall: time.Since(start)}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var kib int64
	if _, err := fmt.Sscanf(string(errb.Bytes()[bytes.LastIndex(errb.Bytes(), []byte("maxrss ")):]), "maxrss %d", &kib); err != nil {
		tb.Fatalf("%v: no peak RSS in %q", args, errb.Bytes())
	}
	r.maxRSS = kib << 10
	return r
}

// buildPeer compiles testdata/<name>.cc with g++ -O2, or skips without g++.
func buildPeer(tb testing.TB, dir, name string) string {
	tb.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		tb.Skip("g++ is not installed")
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if out, err := exec.Command(gxx, "-O2", "-o", bin, filepath.Join("testdata", name+".cc")).CombinedOutput(); err != nil {
		tb.Fatalf("g++ %s: %v\n%s", name, err, out)
	}
	return bin
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkSolveProcess runs `scoreboard solve PROBLEM` beside a plain C++ solution of
// the problem (testdata/*.cc, g++ -O2) on the same generated input of 7-9 MB (the
// worst case of capture: one 25,000-move game), whole process against whole process,
// in pairs whose order alternates. Per problem it reports each side's median wall time,
// the median of the pairs' wall ratios (x-wall: how many times faster the scoreboard
// is) and of their CPU ratios (x-cpu: user+system, steadier on a busy machine), and the
// scoreboard's peak RSS. Outputs are compared on every run.
//
// SOLVE_NAIVE=1 adds capture's naive peer (testdata/capture_naive.cc, about a minute a
// run) on the worst case; run it with -benchtime 1x.
func BenchmarkSolveProcess(b *testing.B) {
	dir := b.TempDir()
	sb := proctest.Scoreboard(b)
	maxrss := buildPeer(b, dir, "maxrss")
	cases := slices.Clone(solveCases)
	if os.Getenv("SOLVE_NAIVE") != "" {
		cases = append(cases, solveCase{"capture-worst-naive", "capture", "capture_naive", genCaptureWorst})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			peer := buildPeer(b, dir, c.peer)
			input := solveInput(b, dir, c)
			want := runProc(b, maxrss, input, peer).out
			var wallRatio, cpuRatio, sbMs, peerMs []float64
			var maxRSS int64
			i := 0
			for b.Loop() {
				var s, p procRun
				if i%2 == 0 {
					s, p = runProc(b, maxrss, input, sb, "solve", c.problem), runProc(b, maxrss, input, peer)
				} else {
					p, s = runProc(b, maxrss, input, peer), runProc(b, maxrss, input, sb, "solve", c.problem)
				}
				i++
				if !bytes.Equal(s.out, want) || !bytes.Equal(p.out, want) {
					b.Fatalf("the outputs differ (scoreboard %d bytes, peer %d bytes, first peer run %d bytes)", len(s.out), len(p.out), len(want))
				}
				wallRatio = append(wallRatio, float64(p.wall)/float64(s.wall))
				cpuRatio = append(cpuRatio, float64(p.cpu)/float64(max(s.cpu, time.Millisecond)))
				sbMs = append(sbMs, float64(s.wall)/1e6)
				peerMs = append(peerMs, float64(p.wall)/1e6)
				maxRSS = max(maxRSS, s.maxRSS)
			}
			if maxRSS > solveMaxRSS {
				b.Errorf("scoreboard solve %s: peak RSS %d bytes, over %d", c.problem, maxRSS, solveMaxRSS)
			}
			b.ReportMetric(median(sbMs), "sb-ms")
			b.ReportMetric(median(peerMs), "peer-ms")
			b.ReportMetric(median(wallRatio), "x-wall")
			b.ReportMetric(median(cpuRatio), "x-cpu")
			b.ReportMetric(float64(maxRSS)/(1<<20), "sb-maxrss-MB")
		})
	}
}

// TestSolvePeakRSS: `scoreboard solve` stays under 32 MB of resident memory on each
// large input, and on the samples.
func TestSolvePeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 40 MB of input")
	}
	sb := proctest.Scoreboard(t)
	dir := t.TempDir()
	maxrss := buildPeer(t, dir, "maxrss")
	for _, c := range solveCases {
		input := solveInput(t, dir, c)
		r := runProc(t, maxrss, input, sb, "solve", c.problem)
		if r.maxRSS > solveMaxRSS || r.maxRSS == 0 {
			t.Errorf("%s: peak RSS %d bytes, want 0 < it <= %d", c.name, r.maxRSS, solveMaxRSS)
		}
		t.Logf("%s: peak RSS %.1f MB", c.name, float64(r.maxRSS)/(1<<20))
	}
}

// BenchmarkSolveInProcess runs `solve` in-process on the inputs of
// BenchmarkSolveProcess: the process's time without its start-up, and the figure the
// floors in docs/scaling.md are read from.
func BenchmarkSolveInProcess(b *testing.B) {
	dir := b.TempDir()
	for _, c := range solveCases {
		b.Run(c.name, func(b *testing.B) {
			in, err := os.ReadFile(solveInput(b, dir, c))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if code := runMain(context.Background(), []string{"solve", c.problem}, stdio{bytes.NewReader(in), io.Discard, io.Discard}); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}

// BenchmarkSolveFloor measures, per problem, what bounds the ratio of
// BenchmarkSolveProcess: in rounds whose order rotates, the peer, `scoreboard solve`,
// the same on an empty input (its start-up: the runtime, the linked packages' init,
// the page faults of the binary), and testdata/floor (a Go process that reads the
// input in 1 MiB blocks, finds every line and writes as many bytes as the answers,
// solving nothing) on the input and on an empty one. Reported as median CPU
// milliseconds (user + system): peer, sb, sb-start, and io (floor on the input minus
// floor on nothing: reading, finding the lines, writing the answers). A scoreboard that
// solved in no time would still cost sb-start + io, so x-max = peer / (sb-start + io)
// is the most any engine could reach; x-cpu = peer / sb is what this one reaches.
func BenchmarkSolveFloor(b *testing.B) {
	dir := b.TempDir()
	sb := proctest.Scoreboard(b)
	maxrss := buildPeer(b, dir, "maxrss")
	floor := filepath.Join(dir, "floor")
	if out, err := exec.Command("go", "build", "-o", floor, "./testdata/floor").CombinedOutput(); err != nil {
		b.Fatalf("go build ./testdata/floor: %v\n%s", err, out)
	}
	empty := filepath.Join(dir, "empty.in")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	for _, c := range solveCases {
		b.Run(c.name, func(b *testing.B) {
			peer := buildPeer(b, dir, c.peer)
			input := solveInput(b, dir, c)
			size := strconv.Itoa(len(runProc(b, maxrss, input, peer).out))
			runs := []func() procRun{
				func() procRun { return runProc(b, maxrss, input, peer) },
				func() procRun { return runProc(b, maxrss, input, sb, "solve", c.problem) },
				func() procRun { return runProc(b, maxrss, empty, sb, "solve", c.problem) },
				func() procRun { return runProc(b, maxrss, input, floor, size) },
				func() procRun { return runProc(b, maxrss, empty, floor, "0") },
			}
			cpu := make([][]float64, len(runs))
			i := 0
			for b.Loop() {
				for k := range runs {
					j := (i + k) % len(runs)
					cpu[j] = append(cpu[j], ms(runs[j]().cpu))
				}
				i++
			}
			peerMs, sbMs, startMs := median(cpu[0]), median(cpu[1]), median(cpu[2])
			ioMs := max(median(cpu[3])-median(cpu[4]), 0)
			b.ReportMetric(peerMs, "peer-cpu-ms")
			b.ReportMetric(sbMs, "sb-cpu-ms")
			b.ReportMetric(startMs, "sb-start-ms")
			b.ReportMetric(ioMs, "io-ms")
			b.ReportMetric(peerMs/sbMs, "x-cpu")
			b.ReportMetric(peerMs/(startMs+ioMs), "x-max")
		})
	}
}

// BenchmarkSolveReadFloor is the in-process side of the floors: on each input of
// BenchmarkSolveProcess, in the same run, finding the lines alone (one IndexByte a
// line: lines), reading every byte as a contest parser must (digits accumulated into
// numbers, anything else ending one: numbers; the least a scalar parser of these
// inputs does, without signs or checks), and the whole of `solve` (solve).
func BenchmarkSolveReadFloor(b *testing.B) {
	dir := b.TempDir()
	for _, c := range solveCases {
		in, err := os.ReadFile(solveInput(b, dir, c))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/lines", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			lines := 0
			for b.Loop() {
				for rest := in; ; lines++ {
					i := bytes.IndexByte(rest, '\n')
					if i < 0 {
						break
					}
					rest = rest[i+1:]
				}
			}
			b.ReportMetric(float64(lines)/float64(b.N), "lines/op")
		})
		b.Run(c.name+"/numbers", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			var count, sum int
			for b.Loop() {
				v, inNum := 0, false
				for _, ch := range in {
					if d := ch - '0'; d <= 9 {
						v, inNum = v*10+int(d), true
					} else if inNum {
						sum += v
						count++
						v, inNum = 0, false
					}
				}
			}
			b.ReportMetric(float64(count)/float64(b.N), "numbers/op")
			if sum < 0 {
				b.Log(sum)
			}
		})
		b.Run(c.name+"/solve", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if code := runMain(context.Background(), []string{"solve", c.problem}, stdio{bytes.NewReader(in), io.Discard, io.Discard}); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
