package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/pairing"
)

// TestPairingsLeague: a real hub process and a real club daemon linked to it.
// The club's own load reaches the hub's LEAGUE_PAIRINGS over its link; the
// organiser's load at the hub (pairings load --league) maps the hub file's [tables]
// to club.port and replaces it, listing the table without one; a hub restarted on
// its state dir still has the organiser's round, the club's older one not put
// over it.
func TestPairingsLeague(t *testing.T) {
	proctest.SkipShort(t, "a hub process and a club daemon process")
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	tools, leaf := proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	err := os.WriteFile(conf, fmt.Appendf(nil, `[league]
listen = "127.0.0.1:%d"
leaf_listen = "127.0.0.1:%d"
http = "off"
state_dir = %q
[[club]]
name = "north"
token = "token-north"
[tables]
1 = "north.stdio"
2 = "north.other"
`, tools, leaf, filepath.Join(root, "hub")), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	startHub := func() *proctest.Process {
		hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
		hub.WaitOutput("league hub running", 30*time.Second)
		return hub
	}
	hub := startHub()
	hubURL := fmt.Sprintf("nats://127.0.0.1:%d", tools)
	clubAddr := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	north := startLeagueClub(t, bin, "north", fmt.Sprintf("nats-leaf://127.0.0.1:%d", leaf), filepath.Join(root, "north"), 1,
		"--nats-listen", clubAddr, "--port-table", "5")
	csv := filepath.Join(root, "round.csv")
	os.WriteFile(csv, []byte("round,table,black,black rank,white,white rank\r\n4,5,Ana Club,1d,Bo Club,2k\r\n4,1,Cy Org,3d,Di Org,4k\r\n4,2,Ed Org,5k,Fa Org,6k\r\n4,3,Gu Org,7k,Ho Org,8k\r\n"), 0o600)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var code int
	var out string
	bustest.Wait(t, "the club's load", func() (bool, string) {
		code, out = pairingsLoad(t, bin, "--nats-url", "nats://"+clubAddr, "--daemon-state-dir", filepath.Join(root, "north"), csv)
		return code == 0, out
	})
	if !strings.Contains(out, "table 5 on stdio: Ana Club (1d) - Bo Club (2k)") {
		t.Fatalf("the club's load: %s", out)
	}
	game := func() string {
		nc, err := nats.Connect(hubURL)
		if err != nil {
			return err.Error()
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		kv, err := js.KeyValue(ctx, league.PairingsBucket)
		if err != nil {
			return err.Error()
		}
		c, ok, err := pairing.ForPort(ctx, kv, "north.stdio")
		if err != nil || !ok {
			return fmt.Sprint("none ", err)
		}
		return fmt.Sprintf("%d %s", c.Table, c.Black.Name)
	}
	bustest.Wait(t, "the club's round at the hub", func() (bool, string) {
		g := game()
		return g == "5 Ana Club", g
	})

	// The club's port has shown a board at the hub; north.other, which [tables]
	// names, is no port of the club: the load says so, and applies it all the same.
	north.feed(1)
	north.answered(time.Minute)
	bustest.Wait(t, "north.stdio's board at the hub", func() (bool, string) {
		nc, err := nats.Connect(hubURL)
		if err != nil {
			return false, err.Error()
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		kv, err := js.KeyValue(ctx, league.Bucket)
		if err != nil {
			return false, err.Error()
		}
		_, err = kv.Get(ctx, "north.stdio")
		return err == nil, fmt.Sprint(err)
	})
	code, out = pairingsLoad(t, bin, "--league", "--nats-url", hubURL, csv)
	if code != 0 || !strings.Contains(out, "table 1 on north.stdio: Cy Org (3d) - Di Org (4k)") || !strings.Contains(out, "table 2 on north.other") ||
		!strings.Contains(out, "tables without a port (not shown; give a [[port]] its table, or at a hub map it in [tables]): 3, 5") ||
		!strings.Contains(out, "ports that have shown no board here yet (their game shows once they send one; if one is a typo, fix [tables] and SIGHUP, then load again): north.other\n") {
		t.Fatalf("the organiser's load: exit %d: %s", code, out)
	}
	if g := game(); g != "1 Cy Org" {
		t.Fatalf("north.stdio after the organiser's load: %s", g)
	}
	if err := hub.Stop(); err != nil {
		t.Fatalf("hub stop: %v", err)
	}
	startHub()
	bustest.Wait(t, "the organiser's round after the hub's restart", func() (bool, string) {
		g := game()
		return g == "1 Cy Org", g
	})
}
