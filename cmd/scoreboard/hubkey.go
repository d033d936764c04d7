package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/league"
)

// hubKeyCommand is `scoreboard hub key`, registered under hub (hub.go).
func hubKeyCommand(io stdio) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "key NAME --out FILE",
		Short: "makes a club's key: writes its seed file (mode 0600) for the club, prints the [[club]] table for the hub's file",
		Long: "Makes club NAME's key pair (an nkey): writes the seed to --out, mode 0600, for\n" +
			"the club alone (its hub.seed_file; never written over an existing file), and prints\n" +
			"the [[club]] table to paste into the hub's file, which holds the public key only.\n" +
			"Then SIGHUP the hub. docs/league.md, \"On the internet\".",
		Example: "  scoreboard hub key north --out north.seed >> /etc/scoreboard/league-hub.toml",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("want the club's NAME, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out is needed: the seed file to give the club")
			}
			seed, club, err := league.NewClubKey(args[0])
			if err != nil {
				return usagef("%v", err)
			}
			if err := league.WriteSeedFile(out, seed); err != nil {
				return err
			}
			_, err = fmt.Fprint(io.out, club.Table())
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the seed `file` to write (mode 0600), for the club's hub.seed_file")
	return cmd
}
