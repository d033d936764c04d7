package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/render"
)

func init() {
	register(command{
		name:    "render",
		summary: "draws a unit as SVG on stdout (or --sgf: its game record)",
		run:     runRender,
	})
}

func runRender(ctx context.Context, args []string, stdio stdio) error {
	about := "Reads a unit of PROBLEM from FILE (or stdin), as the scoreboard dumps it (the\n" +
		"first of a file of several, or --unit N), and\n" +
		"writes its picture (SVG) on stdout: the board, the marks the problem's answer\n" +
		"needs and the answer. With --sgf it writes the game record (SGF FF[4]) of a\n" +
		"replay, goscore or territory unit instead. Problems: " + strings.Join(engine.Names(), ", ") + "."
	fs := newFlagSet("render", "PROBLEM [FILE]", about, stdio)
	sgf := fs.Bool("sgf", false, "write the unit's game record (SGF) instead of its picture")
	unitN := fs.Int("unit", 1, "which unit of the input to draw, `N` from 1, as a port numbers them")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return usageErr(fs, "want PROBLEM and at most one FILE, got %d arguments (problems: %s)", fs.NArg(), strings.Join(engine.Names(), ", "))
	}
	problem := fs.Arg(0)
	if _, err := lookupProblem(problem); err != nil {
		return err
	}
	if *sgf && !render.HasSGF(problem) {
		return fmt.Errorf("%s units have no game record: only replay, goscore and territory", problem)
	}
	in, name := stdio.in, "stdin"
	if fs.NArg() == 2 && fs.Arg(1) != "-" {
		f, err := openInput(fs.Arg(1))
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, fs.Arg(1)
	}
	// A file of several units (the samples) draws its first, or --unit's.
	unit, err := render.Unit(problem, in, *unitN)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var out []byte
	if *sgf {
		out, err = render.SGF(problem, unit)
	} else {
		out, err = render.SVG(problem, unit)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	_, err = stdio.out.Write(out)
	return err
}
