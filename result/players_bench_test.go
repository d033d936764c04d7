package result_test

import (
	"testing"

	"github.com/goclub/scoreboard/result"
)

// keptValue is a board's bucket value as the page decodes it, with players or not.
func keptValue(players *result.Players) []byte {
	r := result.Record{Problem: "goscore", Port: "t1", Seq: 41, Answer: "184 177\n", SolveMicros: 3.2,
		Origin: "9f86d081884c7d65", UnitDigest: "0123456789abcdef0123456789abcdef", Worker: "w1", Players: players}
	b := r.AppendJSON(nil)
	return append(b[:len(b)-1], `,"unit":"19\n...................\n","time":"2026-11-28T09:00:00Z"}`...)
}

var benchPlayers = &result.Players{Tournament: "Open d'Évry 2026", Round: 3, Table: 12, Date: "2026-11-28", Place: "Évry",
	Black: "Zoé Lefèvre", BlackRank: "2d", White: "王小明", WhiteRank: "1d", Handicap: 2}

// BenchmarkDecodeKeptPlayers: what the page and the hub pay to read a board, without and
// with its players (accented and Chinese names).
func BenchmarkDecodeKeptPlayers(b *testing.B) {
	for _, c := range []struct {
		name string
		p    *result.Players
	}{{"none", nil}, {"players", benchPlayers}} {
		data := keptValue(c.p)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				k, err := result.DecodeKept(data)
				if err != nil || (c.p != nil) != (k.Players != nil) {
					b.Fatal(err)
				}
			}
		})
	}
}
