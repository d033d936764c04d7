package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The league benchmark's named mode (LEAGUE_BENCH_PAIRINGS=1, BENCHMARKS.md): every
// stand-in club's every port plays a game of two named players, which the organiser
// loads at the hub before the clubs play, as at a tournament: the hub file's
// [tables] maps table N to club.port, and `scoreboard pairings load --league` sends
// the round's CSV to the hub. Every board event the viewers get then has its
// players, said in the port's first event and again only when they change (the
// page's events at a league with pairings, docs/page.md); the measuring viewer
// keeps each port's as a page does, and the benchmark fails a run where one of
// its events has none (benchViewer.known).

// benchGivenNames and benchFamilyNames make the Latin-script players: accents,
// hyphens, particles, apostrophes, as tournament files spell them.
var (
	benchGivenNames = []string{"Jürgen", "François", "Zoë", "Łukasz", "Søren", "José", "Mária", "Ana",
		"Dmitrij", "Eoin", "Ólafur", "Chloé", "Thandiwe", "Bartholomäus", "Ines", "Wojciech", "Laura", "Ágnes", "Ramón", "Tuomas"}
	benchFamilyNames = []string{"Müller-Straße", "Kowalczyk", "Szőke", "Nováková", "Ångström", "Gonçalves", "Petrović", "O'Connor",
		"van der Berg", "Østergaard", "Lefèvre", "Rodríguez", "Björklund", "Ndlovu", "Grünwald", "Dąbrowski", "Smith", "Øye", "Castañeda", "Hämäläinen"}
	// benchEastAsianNames are whole names, family name first and no space, as the
	// file writes them and the page shows them: 4 to 6 characters, 12 to 18 bytes.
	benchEastAsianNames = []string{"欧阳明轩", "佐藤健太郎", "高橋美奈子", "司马相如", "남궁민수", "長谷川由紀子", "上官婉儿", "諸葛孔明",
		"黄甫思远", "渡辺真理子", "선우예진", "夏侯子豪", "小田切竜之介", "独孤晓峰"}
	benchRanks = []string{"12k", "8k", "5k", "3k", "1k", "1d", "2d", "3d", "4d", "5d", "6d"}
)

// benchPlayer is the k-th player of the round: one in four East Asian, the others
// a given and a family name of 10 to 25 characters.
func benchPlayer(k int) string {
	if k%4 == 3 {
		return benchEastAsianNames[(k/4)%len(benchEastAsianNames)]
	}
	for i := k; ; i++ {
		g, f := benchGivenNames[i%len(benchGivenNames)], benchFamilyNames[(i/len(benchGivenNames)+i*7)%len(benchFamilyNames)]
		name := g + " " + f
		if n := utf8.RuneCountInString(name); n >= 10 && n <= 25 {
			return name
		}
	}
}

// benchTable is the table played on club i's port p (0-based), of ports a club.
func benchTable(i, p, ports int) int { return i*ports + p + 1 }

// benchHubTables is the hub file's [tables] for the clubs names, ports each: table
// N is club.pP (the ports benchClub.unit publishes).
func benchHubTables(names []string, ports int) string {
	var b strings.Builder
	b.WriteString("[tables]\n")
	for i, name := range names {
		for p := range ports {
			fmt.Fprintf(&b, "\"%d\" = \"%s.p%d\"\n", benchTable(i, p, ports), name, p)
		}
	}
	return b.String()
}

// benchRoundCSV is round 1 with a game at every table of benchHubTables, in the
// plain CSV `pairings load` reads.
func benchRoundCSV(clubs, ports int) []byte {
	var b bytes.Buffer
	b.WriteString("round,table,black,black rank,white,white rank,handicap\r\n")
	for i := range clubs {
		for p := range ports {
			t := benchTable(i, p, ports)
			handicap := ""
			if t%5 == 0 {
				handicap = "2"
			}
			fmt.Fprintf(&b, "1,%d,%s,%s,%s,%s,%s\r\n", t, benchPlayer(2*t), benchRanks[t%len(benchRanks)],
				benchPlayer(2*t+1), benchRanks[(t+3)%len(benchRanks)], handicap)
		}
	}
	return b.Bytes()
}

// loadBenchPairings loads the round of every club's every port at the hub h as the
// organiser does (the hub's file has benchHubTables): `scoreboard pairings load
// --league` on the hub's tools' URL, which must put every table on its port.
func loadBenchPairings(t *testing.T, bin, root string, h *benchHub, clubs, ports int) {
	t.Helper()
	file := filepath.Join(root, "round.csv")
	if err := os.WriteFile(file, benchRoundCSV(clubs, ports), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := pairingsLoad(t, bin, "--league", "--nats-url", h.tools, file)
	want := fmt.Sprintf("%d games, %d on a port", clubs*ports, clubs*ports)
	if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "without") {
		t.Fatalf("the organiser's load at the hub: exit %d, not %q on every port: %s", code, want, lastLines(out, 10))
	}
	t.Logf("pairings: %d games loaded at the hub, one on each club's each port: %s", clubs*ports, strings.SplitN(out, "\n", 3)[1])
}

// gameMark is how a board event with its players starts its game (web's
// appendGame): a viewer counts the events that carry one.
var gameMark = []byte(`"game":{"round":`)

// checkBenchPlayers says what is wrong with the events of the measured time: the
// measuring viewer's events, known of them whose players its stream had said
// (an event says them only when they change, docs/page.md), and carried, the
// viewers' events that carried players: in the named mode the measuring viewer
// knows every board's players, in the other no event carries any.
func checkBenchPlayers(t *testing.T, named bool, events, known, carried int64) {
	t.Helper()
	switch {
	case events == 0:
		t.Errorf("the measuring viewer got no events in the measured time")
	case named && known != events:
		t.Errorf("LEAGUE_BENCH_PAIRINGS: the measuring viewer knew the players of %d of its %d events, not all", known, events)
	case !named && (carried != 0 || known != 0):
		t.Errorf("without LEAGUE_BENCH_PAIRINGS: the viewers' events carried players %d times (the measuring one knew %d)", carried, known)
	}
}
