package main

import (
	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/league"
)

// addClubFlag binds --club of the tools that read a history, for a league hub. It
// is a tool's option, not a setting: it has no key in a file and no variable.
func addClubFlag(cmd *cobra.Command) *string {
	return cmd.Flags().String("club", "", "at a league hub (--nats-url nats://127.0.0.1:4322): read this club's units in its stream LEAGUE_<CLUB>")
}

// clubScope points c and q at a club's units at a hub: the prefix league.<club>,
// the club's stream LEAGUE_<CLUB>. No club: nothing changes.
func clubScope(club string, c *config.Config, q *history.Query) error {
	if club == "" {
		return nil
	}
	if !bus.ValidToken(club) {
		return usagef("--club %q: want lowercase letters, digits, '-' and '_', as in the hub's [[club]] name", club)
	}
	c.NATS.Prefix = league.SubjectPrefix + "." + club
	q.Stream = league.ClubStream(club)
	return nil
}
