package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// TestLeaguePageBrowser: the hub's page, in Chromium, shows the boards of two
// clubs, each tile named <club>.<port> and drawn from the unit the club answered,
// the clubs' tiles side by side (the tiles are in the keys' order).
func TestLeaguePageBrowser(t *testing.T) {
	b := browsertest.New(t)
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hubPort, leafPort, httpPort := proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(
		"[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\n"+
			"[[club]]\nname = \"north\"\ntoken = \"token-north\"\n[[club]]\nname = \"south\"\ntoken = \"token-south\"\n",
		hubPort, leafPort, httpPort, filepath.Join(root, "hub"))), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	leaf := fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)
	north := startLeagueClub(t, bin, "north", leaf, filepath.Join(root, "north"), 100)
	south := startLeagueClub(t, bin, "south", leaf, filepath.Join(root, "south"), 200)
	north.feed(3)
	south.feed(2)
	north.answered(60 * time.Second)
	south.answered(60 * time.Second)
	b.Do(t, 30*time.Second, chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/", httpPort)))
	for _, c := range []struct {
		club string
		seq  uint64
		k    int
	}{{"north", 3, 102}, {"south", 2, 201}} {
		_, answer := faulttest.GoscoreBoard(c.k)
		b.WaitTile(t, c.club+".stdio", 60*time.Second, fmt.Sprintf("%s's last board", c.club), func(v browsertest.Tile) bool {
			return v.Seq == c.seq && strings.TrimSpace(v.Answer) == strings.TrimSpace(answer) && v.Stones > 0
		})
	}
	order := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('[data-port]')].map(e => e.dataset.port)`)
	if strings.Join(order, " ") != "north.stdio south.stdio" {
		t.Fatalf("tiles %v, want north's then south's", order)
	}
	// Each tile shows its club's link: north's goes down when north stops.
	for _, club := range []string{"north", "south"} {
		b.WaitTile(t, club+".stdio", 30*time.Second, club+"'s link up", func(v browsertest.Tile) bool {
			return strings.HasPrefix(v.State, "linked since")
		})
	}
	north.stop()
	b.WaitTile(t, "north.stdio", 30*time.Second, "north's link down", func(v browsertest.Tile) bool {
		return strings.HasPrefix(v.State, "link down since")
	})
	if v := b.ReadTile(t, "south.stdio"); !strings.HasPrefix(v.State, "linked since") {
		t.Fatalf("south's tile shows %q, want its link up", v.State)
	}
}
