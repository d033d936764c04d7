package render_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/render"
)

// gnugo finds GNU Go (Debian's package installs it in /usr/games).
func gnugo(t *testing.T) string {
	for _, p := range []string{"gnugo", "/usr/games/gnugo"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("gnugo is not installed (apt-get install gnugo): CI must load the game records with it")
	}
	t.Skip("gnugo is not installed (apt-get install gnugo)")
	return ""
}

// gtpVertex names point (row, col) as GTP does: columns A-T without I, rows counted
// from the bottom.
func gtpVertex(size, row, col int) string {
	letter := byte('A' + col)
	if letter >= 'I' {
		letter++
	}
	return fmt.Sprintf("%c%d", letter, size-row)
}

// TestSGFLoadsInGNUGo: GNU Go loads every sample's game record and finds the same
// stones on the board as the engine's final position: the replay's moves replayed
// with GNU Go's own captures, the setups as placed.
func TestSGFLoadsInGNUGo(t *testing.T) {
	bin := gnugo(t)
	dir := t.TempDir()
	loaded, stones := 0, 0
	for _, c := range []struct{ problem, file string }{
		{"replay", "replay.in"}, {"goscore", "goscore.in"}, {"territory", "territory.in"},
	} {
		for k, unit := range samples.Units(t, c.problem, c.file) {
			name := fmt.Sprintf("%s unit %d", c.file, k+1)
			sgf, err := render.SGF(c.problem, unit)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.sgf", c.problem, k+1))
			if err := os.WriteFile(path, sgf, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "--mode", "gtp")
			cmd.Stdin = strings.NewReader("loadsgf " + path + " 10000\nlist_stones black\nlist_stones white\nquit\n")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: gnugo: %v\n%s", name, err, out)
			}
			// Each GTP answer is "= ..." (or "? error") and a blank line.
			var answers []string
			for _, block := range strings.Split(strings.TrimSpace(string(out)), "\n\n") {
				answers = append(answers, strings.TrimSpace(block))
			}
			if len(answers) < 3 || !strings.HasPrefix(answers[0], "=") {
				t.Fatalf("%s: gnugo did not load the record: %q\n%s", name, out, sgf)
			}
			ans, _ := render.Solve(c.problem, unit)
			pos := ans.(interface{ Position() engine.GoPosition }).Position()
			for i, colour := range []uint8{engine.PointBlack, engine.PointWhite} {
				var want []string
				for p, s := range pos.Stones {
					if s == colour {
						want = append(want, gtpVertex(pos.Size, p/pos.Size, p%pos.Size))
					}
				}
				got := strings.Fields(strings.TrimPrefix(answers[1+i], "="))
				stones += len(got)
				sort.Strings(want)
				sort.Strings(got)
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s: GNU Go has %s stones %v, the engine %v", name, map[uint8]string{1: "black", 2: "white"}[colour], got, want)
				}
			}
			loaded++
		}
	}
	t.Logf("GNU Go loaded %d game records, %d stones", loaded, stones)
	if loaded == 0 || stones == 0 {
		t.Errorf("GNU Go loaded %d records with %d stones: nothing was checked", loaded, stones)
	}
}
