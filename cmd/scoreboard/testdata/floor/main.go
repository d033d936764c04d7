// Command floor is the part of `scoreboard solve` that no engine can skip, as a
// whole process for BenchmarkSolveFloor: it reads standard input in 1 MiB blocks,
// finds every line (one IndexByte a line, as the bulk path does), and writes as many
// bytes as its argument says (the size of the answers) to standard output in 64 KiB
// writes. It solves nothing.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	size, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := make([]byte, 64<<10)
	buf := make([]byte, 1<<20)
	lines := 0
	for {
		n, err := os.Stdin.Read(buf)
		for b := buf[:n]; len(b) > 0; lines++ {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				break
			}
			b = b[i+1:]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	for size > 0 {
		n := min(size, len(out))
		if _, err := os.Stdout.Write(out[:n]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		size -= n
	}
	if lines < 0 {
		fmt.Println(lines) // keeps the line loop from being optimised away
	}
}
