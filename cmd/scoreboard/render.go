package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/history"
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
			"At a league hub, --club NAME --port PORT draws a unit of that club's port read from\n" +
			"the club's stream at the hub, LEAGUE_<CLUB>, instead (--seq N, or its last one);\n" +
			"PROBLEM is then optional, the unit's own. Problems: " + strings.Join(engine.Names(), ", ") + ".",
		Example: "  scoreboard render goscore board.txt > board.svg\n  scoreboard render --unit 2 othello testdata/samples/othello.in > second.svg\n  scoreboard render --sgf replay game.txt > game.sgf\n" +
			"  scoreboard render --nats-url nats://127.0.0.1:4322 --club north --port table1 --seq 12 > n12.svg",
		Args:              problemArgs(1, "PROBLEM and at most one FILE"),
		ValidArgsFunction: completeProblems,
	}
	cmd.Flags().BoolVar(&sgf, "sgf", false, "write the unit's game record (SGF) instead of its picture")
	cmd.Flags().IntVar(&unit, "unit", 1, "which unit of the input to draw, `N` from 1, as a port numbers them")
	club := cmd.Flags().String("club", "", "at a league hub (--nats-url): draw a unit of this club's, read from its stream at the hub (LEAGUE_<CLUB>), instead of a FILE")
	port := cmd.Flags().String("port", "", "with --club: the club's port (its `name`)")
	seq := cmd.Flags().Uint64("seq", 0, "with --club: the port's unit of this sequence number `N` (the latest such); 0: the port's last unit kept")
	load := addSettings(cmd, config.NATSClientKeys...)
	// With --club the PROBLEM is optional (the unit's own), and there is no FILE.
	fileArgs := cmd.Args
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("club") {
			if len(args) > 1 {
				return usagef("with --club, at most a PROBLEM (the unit comes from LEAGUE), got %d arguments", len(args))
			}
			if len(args) == 1 {
				_, err := lookupProblem(args[0])
				return err
			}
			return nil
		}
		return fileArgs(cmd, args)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if *club == "" {
			if *port != "" || *seq != 0 {
				return usagef("--port and --seq go with --club (a unit at a league hub)")
			}
			if unit < 1 {
				return usagef("--unit %d: units are numbered from 1", unit)
			}
			return render1(args, sgf, unit, stdio)
		}
		if *port == "" {
			return usagef("--club %s: give the club's --port too", *club)
		}
		if !bus.ValidToken(*port) {
			return usagef("--port %q: want lowercase letters, digits, '-' and '_'", *port)
		}
		c, err := load("")
		if err != nil {
			return err
		}
		q := history.Query{Port: *port}
		if len(args) == 1 {
			q.Problem = args[0]
		}
		if err := clubScope(*club, &c, &q); err != nil {
			return err
		}
		problem, text, err := clubUnit(cmd.Context(), &c, q, *seq, stdio)
		if err != nil {
			return fmt.Errorf("render --club %s --port %s: %w", *club, *port, err)
		}
		return drawUnit(problem, text, sgf, fmt.Sprintf("LEAGUE %s.%s", *club, *port), stdio)
	}
	return cmd
}

// clubUnit reads a unit of a club's port in its stream at a hub (q, scoped by
// clubScope): history.FindUnit's.
func clubUnit(ctx context.Context, c *config.Config, q history.Query, seq uint64, stdio stdio) (string, []byte, error) {
	nc, err := c.Connect("scoreboard render", quietLogger(stdio.err))
	if err != nil {
		return "", nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return "", nil, fmt.Errorf("jetstream: %w", err)
	}
	return history.FindUnit(ctx, js, c.NATS.Prefix, q, seq)
}

// drawUnit writes a unit's picture, or its game record, on stdout; name says where
// it came from in errors.
func drawUnit(problem string, unit []byte, sgf bool, name string, stdio stdio) error {
	if sgf && !render.HasSGF(problem) {
		return render.NoSGFError(problem)
	}
	out, err := render.Picture(problem, unit, sgf)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	_, err = stdio.out.Write(out)
	return err
}

// render1 draws unit n of args: PROBLEM [FILE].
func render1(args []string, sgf bool, n int, stdio stdio) error {
	problem := args[0]
	if sgf && !render.HasSGF(problem) {
		return render.NoSGFError(problem)
	}
	in, err := stdio.input(args, 1)
	if err != nil {
		return err
	}
	defer in.Close()
	name := "stdin"
	if len(args) == 2 && args[1] != "-" {
		name = args[1]
	}
	// A file of several units (the samples) draws its first, or --unit's.
	unit, err := render.Unit(problem, in, n)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return drawUnit(problem, unit, sgf, name, stdio)
}
