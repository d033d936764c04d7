package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/render"
)

func init() { register(renderCommand) }

func renderCommand(stdio stdio) *cobra.Command {
	var (
		sgf  bool
		unit int
	)
	cmd := &cobra.Command{
		Use:   "render PROBLEM [FILE]",
		Short: "draws a unit as SVG on stdout (or --sgf: its game record)",
		Long: "Reads a unit of PROBLEM from FILE (or stdin), as the scoreboard dumps it (the\n" +
			"first of a file of several, or --unit N), and writes its picture (SVG) on stdout:\n" +
			"the board, the marks the problem's answer needs and the answer. With --sgf it\n" +
			"writes the game record (SGF FF[4]) of a replay, goscore or territory unit instead.\n" +
			"Problems: " + strings.Join(engine.Names(), ", ") + ".",
		Example:           "  scoreboard render goscore board.txt > board.svg\n  scoreboard render --unit 2 othello testdata/samples/othello.in > second.svg\n  scoreboard render --sgf replay game.txt > game.sgf",
		Args:              problemArgs(1, "PROBLEM and at most one FILE"),
		ValidArgsFunction: completeProblems,
	}
	cmd.Flags().BoolVar(&sgf, "sgf", false, "write the unit's game record (SGF) instead of its picture")
	cmd.Flags().IntVar(&unit, "unit", 1, "which unit of the input to draw, `N` from 1, as a port numbers them")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if unit < 1 {
			return usagef("--unit %d: units are numbered from 1", unit)
		}
		return render1(args, sgf, unit, stdio)
	}
	return cmd
}

// render1 draws unit n of args: PROBLEM [FILE].
func render1(args []string, sgf bool, n int, stdio stdio) error {
	problem := args[0]
	if sgf && !render.HasSGF(problem) {
		return fmt.Errorf("%s units have no game record: only replay, goscore and territory", problem)
	}
	in, name := stdio.in, "stdin"
	if len(args) == 2 && args[1] != "-" {
		f, err := openInput(args[1])
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, args[1]
	}
	// A file of several units (the samples) draws its first, or --unit's.
	unit, err := render.Unit(problem, in, n)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var out []byte
	if sgf {
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
