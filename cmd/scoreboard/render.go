package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/render"
)

func init() { register(renderCommand) }

func renderCommand(stdio stdio) *cobra.Command {
	var sgf bool
	cmd := &cobra.Command{
		Use:   "render PROBLEM [FILE]",
		Short: "draws a unit as SVG on stdout (or --sgf: its game record)",
		Long: "Reads one unit of PROBLEM from FILE (or stdin), as the scoreboard dumps it, and\n" +
			"writes its picture (SVG) on stdout: the board, the marks the problem's answer\n" +
			"needs and the answer. With --sgf it writes the game record (SGF FF[4]) of a\n" +
			"replay, goscore or territory unit instead. Problems: " + strings.Join(engine.Names(), ", ") + ".",
		Example:           "  scoreboard render goscore board.txt > board.svg\n  scoreboard render --sgf replay game.txt > game.sgf",
		Args:              problemArgs(1, "PROBLEM and at most one FILE"),
		ValidArgsFunction: completeProblems,
	}
	cmd.Flags().BoolVar(&sgf, "sgf", false, "write the unit's game record (SGF) instead of its picture")
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return render1(args, sgf, stdio) }
	return cmd
}

// render1 draws the unit of args: PROBLEM [FILE].
func render1(args []string, sgf bool, stdio stdio) error {
	problem := args[0]
	p, _ := engine.Lookup(problem)
	in, name := stdio.in, "stdin"
	if len(args) == 2 && args[1] != "-" {
		f, err := openInput(args[1])
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, args[1]
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
	if sgf {
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
