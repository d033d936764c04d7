package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/goclub/scoreboard/engine"
)

func init() {
	register(command{
		name:    "solve",
		summary: "contest filter: contest input on stdin, contest output on stdout",
		run:     runSolve,
	})
}

func runSolve(ctx context.Context, args []string, io stdio) error {
	about := "Reads a whole contest input of PROBLEM on stdin and writes the contest output\n" +
		"on stdout, computed in-process. A unit that cannot be parsed is reported on\n" +
		"stderr with its line, and the units after it are still answered; the exit\n" +
		"status is 1 if any unit failed.\n\n" +
		"problems: " + strings.Join(engine.Names(), ", ")
	fs := newFlagSet("solve", "PROBLEM", about, io)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	p, ok := engine.Lookup(fs.Arg(0))
	if !ok {
		return fmt.Errorf("unknown problem %q (problems: %s)", fs.Arg(0), strings.Join(engine.Names(), ", "))
	}
	bad, err := engine.Contest(p, io.in, io.out, func(err error) {
		fmt.Fprintln(io.err, "scoreboard solve:", err)
	})
	if err != nil {
		return err
	}
	if bad > 0 {
		fmt.Fprintf(io.err, "scoreboard solve: %d bad unit(s)\n", bad)
		return errExitQuiet
	}
	return nil
}
