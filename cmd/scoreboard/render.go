package main

import (
	"context"
	"fmt"
	"io"
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
	about := "Reads one unit of PROBLEM from FILE (or stdin), as the scoreboard dumps it, and\n" +
		"writes its picture (SVG) on stdout: the board, the marks the problem's answer\n" +
		"needs and the answer. With --sgf it writes the game record (SGF FF[4]) of a\n" +
		"replay, goscore or territory unit instead. Problems: " + strings.Join(engine.Names(), ", ") + "."
	fs := newFlagSet("render", "PROBLEM [FILE]", about, stdio)
	sgf := fs.Bool("sgf", false, "write the unit's game record (SGF) instead of its picture")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return usageErr(fs, "want PROBLEM and at most one FILE, got %d arguments (problems: %s)", fs.NArg(), strings.Join(engine.Names(), ", "))
	}
	problem := fs.Arg(0)
	p, err := lookupProblem(problem)
	if err != nil {
		return err
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
	unit, err := io.ReadAll(io.LimitReader(in, int64(p.Limits().MaxUnit)+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if len(unit) > p.Limits().MaxUnit {
		return fmt.Errorf("%s: more than a %s unit holds (%d bytes)", name, problem, p.Limits().MaxUnit)
	}
	if len(unit) > 0 && unit[len(unit)-1] != '\n' {
		unit = append(unit, '\n')
	}
	var out []byte
	if *sgf {
		if !render.HasSGF(problem) {
			return fmt.Errorf("%s units have no game record: only replay, goscore and territory", problem)
		}
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
