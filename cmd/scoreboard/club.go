package main

import (
	"flag"
	"fmt"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/league"
)

// addClubFlag binds --club of the tools that read a history, for a league hub.
func addClubFlag(fs *flag.FlagSet) *string {
	return fs.String("club", "", "at a league hub (--nats-url nats://127.0.0.1:4322): read this club's units in LEAGUE")
}

// clubScope points nf and q at a club's units in a hub's LEAGUE: the prefix
// league.<club>, the stream LEAGUE. No club: nothing changes.
func clubScope(club string, nf *natsFlags, q *history.Query) error {
	if club == "" {
		return nil
	}
	if !bus.ValidToken(club) {
		return fmt.Errorf("--club %q: want lowercase letters, digits, '-' and '_', as in the hub's [[club]] name", club)
	}
	nf.prefix = league.SubjectPrefix + "." + club
	q.Stream = league.Stream
	return nil
}
