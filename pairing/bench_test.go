package pairing_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/result"
)

// bigTournament is an OpenGotha file of players players and games games in its
// last round (and as many in each of the rounds before), names accented.
func bigTournament(players, games, rounds int) []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\r\n<Tournament dataVersion=\"201\">\r\n<Players>\r\n")
	for i := range players {
		fmt.Fprintf(&b, `<Player agaExpirationDate="" agaId="" club="Cl%02d" country="FR" egfPin="%08d" ffgLicence="" ffgLicenceStatus="" firstName="Zoé%d" grade="2D" name="Lefèvre%d" participating="11111111111111111111" rank="%dK" rating="2100" ratingOrigin="INI" registeringStatus="FIN" smmsCorrection="0"/>`+"\r\n",
			i%100, 10000000+i, i, i, 1+i%30)
	}
	b.WriteString("</Players>\r\n<Games>\r\n")
	for r := 1; r <= rounds; r++ {
		for t := range games {
			fmt.Fprintf(&b, `<Game blackPlayer="LEFÈVRE%dZOÉ%d" handicap="0" knownColor="true" result="RESULT_UNKNOWN" roundNumber="%d" tableNumber="%d" whitePlayer="LEFÈVRE%dZOÉ%d"/>`+"\r\n",
				2*t, 2*t, r, t+1, 2*t+1, 2*t+1)
		}
	}
	b.WriteString("</Games>\r\n<TournamentParameterSet>\r\n<GeneralParameterSet beginDate=\"2026-11-28\" location=\"Évry\" name=\"Grand Open\"/>\r\n</TournamentParameterSet>\r\n</Tournament>\r\n")
	return b.Bytes()
}

// BenchmarkLoad1000Players500Games reads an OpenGotha file of 1,000 players and
// 500 games a round (5 rounds), picks the latest, and writes its 500 games to a
// real bucket on disk, one port each: what a club's or a hub's load does.
func BenchmarkLoad1000Players500Games(b *testing.B) {
	data := bigTournament(1000, 500, 5)
	bb := bustest.Start(b, bustest.Options{Off: true, JetStream: true})
	js, err := jetstream.New(bb.Daemon())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	kv, err := pairing.Setup(ctx, js, "scoreboard", 1)
	if err != nil {
		b.Fatal(err)
	}
	tables := map[int]string{}
	for t := 1; t <= 500; t++ {
		tables[t] = fmt.Sprintf("t%d", t)
	}
	b.ReportMetric(float64(len(data)), "file_bytes")
	for b.Loop() {
		r, err := pairing.Parse("big.xml", bytes.NewReader(data), 0)
		if err != nil || len(r.Games) != 500 {
			b.Fatalf("%d games, %v", len(r.Games), err)
		}
		if _, err := pairing.Apply(ctx, kv, r, tables, nil, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlayersBytes: a unit's players, with long names in scripts of several bytes
// a character, are a small part of the 1 KB an event with players may take:
// what result.Record's players field adds to a record, counted.
func TestPlayersBytes(t *testing.T) {
	c := pairing.Current{
		Info: pairing.Info{Tournament: "Championnat de France des clubs, 2e division", Round: 12, Date: "2026-11-28", Place: "Salle des fêtes"},
		Game: pairing.Game{Table: 120, Handicap: 9, Result: "B+F",
			Black: pairing.Player{Name: "Müller-Lüdenscheidt", FirstName: "Hans-Jürgen Maximilian", Rank: "12k"},
			White: pairing.Player{Name: "欧阳", FirstName: "娜娜娜娜娜", Rank: "1p"}},
	}
	r := result.Record{Players: c.Players()}
	withPlayers := len(r.AppendJSON(nil))
	r.Players = nil
	added := withPlayers - len(r.AppendJSON(nil))
	t.Logf("players add %d bytes to a record", added)
	if added > 400 {
		t.Fatalf("players add %d bytes to a record, over 400 of an event's 1,024", added)
	}
}
