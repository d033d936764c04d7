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
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"time"
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

// HeapPeak writes the process's heap profile to path each time the live heap (as
// the last garbage collection found it) passes its largest yet by a twentieth,
// looking every second until ctx ends: the profile at a burst's peak, which the
// one written at SIGTERM has long let go of. The file is replaced whole, so it is
// always one profile. An empty path writes nothing.
func HeapPeak(ctx context.Context, path string, errw io.Writer) {
	if path == "" {
		return
	}
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			metrics.Read(sample)
			live := sample[0].Value.Uint64()
			if live <= peak+peak/20 {
				continue
			}
			peak = live
			if err := writeHeap(path); err != nil {
				fmt.Fprintf(errw, "SCOREBOARD_HEAPPROFILE_PEAK: %v; no more profiles\n", err)
				return
			}
			fmt.Fprintf(errw, "SCOREBOARD_HEAPPROFILE_PEAK: %s at a live heap of %.1f MiB\n", path, float64(live)/(1<<20))
		}
	}()
}

// writeHeap writes the heap profile to path by a rename, so that a reader never
// finds half of one.
func writeHeap(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if err := errors.Join(pprof.WriteHeapProfile(f), f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
