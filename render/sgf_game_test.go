package render_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/render"
	"github.com/goclub/scoreboard/result"
)

var update = flag.Bool("update", false, "write the golden game records again")

// gameInfo is a game's players with every character SGF escapes: a ']' and a
// '\' in names, accents, Chinese, right to left, the file's result.
var gameInfo = render.Game{
	Players: &result.Players{
		Tournament: `Open d'Évry [2026] \ A`, Round: 3, Table: 12, Date: "2026-11-28", Place: "Évry",
		Black: `Zoé "Z]" Lefèvre\`, BlackRank: "2d", White: "王小明", WhiteRank: "1d", Handicap: 2, Result: "W+R",
	},
	Club: "north",
	Date: time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC),
}

// TestSGFGameInfoGolden: a goscore unit's record with its game info, byte for
// byte (testdata/goscore-players.sgf; go test -run TestSGFGameInfoGolden -update
// writes it again); without players, the record is as it was.
func TestSGFGameInfoGolden(t *testing.T) {
	unit := samples.Units(t, "goscore", "goscore.in")[0]
	got, err := render.SGFGame("goscore", unit, gameInfo)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "goscore-players.sgf")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("game record\n got %s\nwant %s", got, want)
	}
	for _, p := range []string{`EV[Open d'Évry [2026\] \\ A]`, "RO[3]", "DT[2026-11-29]", "PC[north]", `PB[Zoé "Z\]" Lefèvre\\]`,
		"BR[2d]", "PW[王小明]", "WR[1d]", "HA[2]", "RE[W+R]"} {
		if !strings.Contains(string(got), p) {
			t.Errorf("no %s in %s", p, got)
		}
	}
	plain, _ := render.SGF("goscore", unit)
	none, _ := render.SGFGame("goscore", unit, render.Game{})
	if string(plain) != string(none) || strings.Contains(string(plain), "PB[") {
		t.Fatalf("a record without players changed: %s", none)
	}
}

// TestSGFGameInfoLoadsInGNUGo: GNU Go loads the record with its game info, as it
// loads the others: the escapes do not break it.
func TestSGFGameInfoLoadsInGNUGo(t *testing.T) {
	bin := gnugo(t)
	unit := samples.Units(t, "goscore", "goscore.in")[0]
	sgf, err := render.SGFGame("goscore", unit, gameInfo)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "game.sgf")
	if err := os.WriteFile(path, sgf, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--mode", "gtp")
	cmd.Stdin = strings.NewReader("loadsgf " + path + "\nlist_stones black\nquit\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "= ") || strings.Contains(string(out), "?") {
		t.Fatalf("gnugo: %v\n%s\n%s", err, out, sgf)
	}
}
