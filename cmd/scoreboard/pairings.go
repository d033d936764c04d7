package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/pairing"
)

func init() { register(pairingsCommand) }

func pairingsCommand(stdio stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pairings",
		Short: "loads a tournament round's pairings: the players on each board",
		Long: "Pairings name the players on each board: the page, the history and the game\n" +
			"records show them. docs/pairings.md says how.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(pairingsLoadCommand(stdio))
	return cmd
}

func pairingsLoadCommand(stdio stdio) *cobra.Command {
	var (
		round   int
		hub     bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "load FILE",
		Short: "loads a round from an OpenGotha tournament file or a CSV into the daemon (or the hub)",
		Long: "Reads FILE, an OpenGotha tournament file (.xml) or a CSV (round,table,black,black\n" +
			"rank,white,white rank[,handicap[,result]]), takes its latest round (or --round),\n" +
			"and has the daemon on --nats-url give each [[port]] whose table is paired its game;\n" +
			"every other port shows no players. With --league, the league hub on --nats-url maps\n" +
			"the tables to club.port by its file's [tables]. Loading again replaces the round.\n" +
			"A file with anything wrong in it changes nothing: each error names its line.",
		Example: "  scoreboard pairings load tournament.xml\n  scoreboard pairings load --round 3 round.csv\n" +
			"  scoreboard pairings load --league --nats-url nats://127.0.0.1:4322 league.xml",
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().IntVar(&round, "round", 0, "the round `N` to load; 0: the latest round with games")
	cmd.Flags().BoolVar(&hub, "league", false, "load at a league hub (its --league-listen), for every club's tables")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the daemon's answer")
	load := addSettings(cmd, config.NATSClientKeys...)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if round < 0 || round > pairing.MaxRound {
			return usagef("--round %d: want 1 to %d, or 0 for the latest", round, pairing.MaxRound)
		}
		if err := checkPositive("timeout", timeout, "30s"); err != nil {
			return err
		}
		c, err := load("")
		if err != nil {
			return err
		}
		in, err := stdio.input(args, 0)
		if err != nil {
			return err
		}
		defer in.Close()
		r, err := pairing.Parse(args[0], in, round)
		if err != nil {
			return err
		}
		nc, err := c.Connect("scoreboard pairings load", quietLogger(stdio.err))
		if err != nil {
			return err
		}
		defer nc.Close()
		subject := pairing.LoadSubject(c.NATS.Prefix)
		if hub {
			subject = pairing.LoadSubject(pairing.HubPrefix)
		}
		rep, err := pairing.Request(cmd.Context(), nc, subject, pairing.Load{File: args[0], Round: r}, timeout)
		if err != nil {
			return err
		}
		rep.Print(stdio.out, r)
		return nil
	}
	return cmd
}
