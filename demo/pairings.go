package demo

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/pairing"
)

// Round is the demo's round of pairings: table 1 on hall, table 2 on lobby (an
// Othello board: its tile names its players too), names in several scripts.
func Round() pairing.Round {
	return pairing.Round{
		Info: pairing.Info{Tournament: "Demo Open", Round: 1, Date: time.Now().Format(time.DateOnly), Place: "the demo"},
		Games: []pairing.Game{
			{Table: 1, Handicap: 0,
				Black: pairing.Player{Name: "Lefèvre", FirstName: "Zoé", Rank: "2d", Country: "FR"},
				White: pairing.Player{Name: "王", FirstName: "小明", Rank: "1d", Country: "CN"}},
			{Table: 2,
				Black: pairing.Player{Name: "Øster", FirstName: "Åse", Rank: "5k", Country: "NO"},
				White: pairing.Player{Name: "O'Brien", FirstName: "Seán", Rank: "3k", Country: "IE"}},
		},
	}
}

// LoadPairings has the demo's daemon at natsURL load Round, as `scoreboard
// pairings load` would, as the organiser (the password the daemon keeps in
// stateDir), trying again until it answers or ctx ends: the daemon makes the
// password at its start.
func LoadPairings(ctx context.Context, natsURL, stateDir string) error {
	for {
		if pw, err := bus.ReadStateOrganiserFile(filepath.Join(stateDir, bus.OrganiserFile), os.Geteuid()); err == nil && loadAs(ctx, natsURL, pw) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// loadAs loads Round at natsURL as the organiser with password pw.
func loadAs(ctx context.Context, natsURL, pw string) error {
	nc, err := nats.Connect(natsURL, nats.UserInfo(bus.RoleOrganiser, pw))
	if err != nil {
		return err
	}
	defer nc.Close()
	_, err = pairing.Request(ctx, nc, pairing.LoadSubject(bus.DefaultPrefix), pairing.Load{File: "demo", Round: Round()}, 2*time.Second)
	return err
}
