package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/goclub/scoreboard/internal/proctest"
)

// BenchmarkSolveProcess runs `scoreboard solve goscore` on a file of 10,000 boards
// beside a plain C++ BFS solution of the same file (testdata/goscore_bfs.cc, built
// with g++ -O2), whole process against whole process, in the same run. One op is one
// process over the whole file; compare the two ns/op (or boards/s).
func BenchmarkSolveProcess(b *testing.B) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		b.Skip("g++ is not installed")
	}
	dir := b.TempDir()
	cpp := filepath.Join(dir, "goscore_bfs")
	if out, err := exec.Command(gxx, "-O2", "-o", cpp, "testdata/goscore_bfs.cc").CombinedOutput(); err != nil {
		b.Fatalf("g++: %v\n%s", err, out)
	}
	input := filepath.Join(dir, "boards.in")
	const boards = 10000
	if err := os.WriteFile(input, goscoreBoards(boards), 0o644); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, name string, args ...string) []byte {
		in, err := os.Open(input)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command(name, args...)
		cmd.Stdin = in
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		return out
	}
	want := run(b, cpp)
	for _, c := range []struct {
		name string
		cmd  []string
	}{
		{"scoreboard", []string{proctest.Scoreboard(b), "solve", "goscore"}},
		{"cpp-bfs", []string{cpp}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out []byte
			for b.Loop() {
				out = run(b, c.cmd[0], c.cmd[1:]...)
			}
			if !bytes.Equal(out, want) {
				b.Fatal("output differs from the C++ solution's")
			}
			b.ReportMetric(float64(boards)*float64(b.N)/b.Elapsed().Seconds(), "boards/s")
		})
	}
}
