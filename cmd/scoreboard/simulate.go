package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/demo"
)

func init() { register(simulateCommand) }

func simulateCommand(io stdio) *cobra.Command {
	var (
		baud       int
		link       string
		idle, wait time.Duration
	)
	cmd := &cobra.Command{
		Use:   "simulate [FILE]",
		Short: "plays the scoreboard on a pseudo-terminal: sends units, prints answers",
		Long: "Opens a pseudo-terminal pair and plays the scoreboard on it: prints the device\n" +
			"path (on stderr) to give to 'scoreboard run --port-device', waits until the\n" +
			"daemon opens it, sends FILE (or stdin) line by line at the given baud rate, and\n" +
			"copies what comes back to stdout. It exits once everything is sent and no answer\n" +
			"has come for --idle.",
		Example: "  scoreboard simulate --baud 115200 --link /tmp/board ../shared/samples/othello.in\n" +
			"  scoreboard run --port-device /tmp/board --port-problem othello --nats-listen off   # in another terminal",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("want at most one FILE, got %d arguments", len(args))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&baud, "baud", 9600, "line speed to pace the sending at (10 bits a byte); 0 sends at once")
	cmd.Flags().StringVar(&link, "link", "", "also make `PATH` a symbolic link to the device, for a stable --port-device")
	cmd.Flags().DurationVar(&idle, "idle", 3*time.Second, "exit when everything is sent and nothing came back for this long")
	cmd.Flags().DurationVar(&wait, "wait", 0, "give up if no daemon opens the device within this long (0: wait forever)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if baud < 0 {
			return usagef("--baud %d: want a line speed, or 0 to send at once", baud)
		}
		return simulate(cmd.Context(), args, baud, link, idle, wait, io)
	}
	return cmd
}

func simulate(ctx context.Context, args []string, baud int, link string, idle, wait time.Duration, io stdio) error {
	input, err := io.input(args, 0)
	if err != nil {
		return err
	}
	defer input.Close()
	return demo.Simulate{Input: input, Out: io.out, Log: io.err, Baud: baud, Link: link, Idle: idle, Wait: wait}.Run(ctx)
}
