// Package profile writes a process's CPU and heap profiles for `go tool pprof`, as
// $SCOREBOARD_CPUPROFILE and $SCOREBOARD_HEAPPROFILE ask: how the league's
// benchmarks see where a hub's time and memory go (BENCHMARKS.md).
package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// CPU writes the process's CPU profile to path from now until the returned func
// is called (at exit after SIGTERM or SIGINT). An empty path, or one that cannot
// be created, profiles nothing; the latter is told on errw.
func CPU(path string, errw io.Writer) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(errw, "SCOREBOARD_CPUPROFILE: %v; no profile\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(errw, "SCOREBOARD_CPUPROFILE: %v; no profile\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// Heap writes the process's heap profile to path when ctx ends (SIGTERM or
// SIGINT), before the process lets go of what it holds: the heap as the last
// garbage collection found it, running. An empty path writes nothing.
func Heap(ctx context.Context, path string, errw io.Writer) {
	if path == "" {
		return
	}
	go func() {
		<-ctx.Done()
		f, err := os.Create(path)
		if err == nil {
			err = errors.Join(pprof.WriteHeapProfile(f), f.Close())
		}
		if err != nil {
			fmt.Fprintf(errw, "SCOREBOARD_HEAPPROFILE: %v\n", err)
		}
	}()
}
