package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/proctest"
)

// TestLeagueNATSServerHubFault: a league whose hub is a real nats-server with
// configs/league-hub.conf, and `scoreboard hub --nats-url` on it: two clubs'
// units come into LEAGUE through a cut of north's line; north's token is refused
// as south; a tool without credentials cannot delete LEAGUE.
func TestLeagueNATSServerHubFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	leafPort := proctest.FreePort(t)
	conf, err := os.ReadFile("../../configs/league-hub.conf")
	if err != nil {
		t.Fatal(err)
	}
	c := strings.Replace(string(conf), "listen: 0.0.0.0:7422", fmt.Sprintf("listen: 127.0.0.1:%d", leafPort), 1)
	c = strings.Replace(c, `store_dir: "/var/lib/nats-league"`, fmt.Sprintf("store_dir: %q", filepath.Join(root, "js")), 1)
	confPath := filepath.Join(root, "league-hub.conf")
	if err := os.WriteFile(confPath, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEAGUE_ADMIN_PASSWORD", "admin-secret")
	t.Setenv("LEAGUE_TOKEN_NORTH", "token-north")
	t.Setenv("LEAGUE_TOKEN_SOUTH", "token-south")
	srv := proctest.StartNATS(t, proctest.NATSOptions{Config: confPath, Name: "league-hub"})

	hubConf := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(hubConf, []byte("[league]\nhttp = \"off\"\n[[club]]\nname = \"north\"\ntoken = \"token-north\"\n[[club]]\nname = \"south\"\ntoken = \"token-south\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", hubConf, "--nats-url", srv.URL(), "--nats-user", "admin", "--nats-password", "admin-secret", "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)

	proxy := newLinkProxy(t, fmt.Sprintf("127.0.0.1:%d", leafPort))
	north := startLeagueClub(t, bin, "north", "nats-leaf://"+proxy.addr, filepath.Join(root, "north"), 0)
	south := startLeagueClub(t, bin, "south", fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort), filepath.Join(root, "south"), 1000)
	// north's token presented as south's: refused.
	impostor := startLeagueClubAs(t, bin, "south", "token-north", fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort), filepath.Join(root, "impostor"), 2000)
	impostor.feed(3)
	impostor.answered(60 * time.Second)

	nc, err := nats.Connect(srv.URL()) // no credentials: the tool user
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	north.feed(10)
	south.feed(10)
	north.answered(60 * time.Second)
	south.answered(60 * time.Second)
	proxy.down()
	north.feed(20)
	north.answered(60 * time.Second)
	proxy.up()
	busWait(t, "both clubs' units in LEAGUE, once each, in order", func() bool {
		dumps, results := leagueUnits(t, nc)
		for club, n := range map[string]int{"north": 30, "south": 10} {
			lost, twice, disorder := tally(dumps[club], []int{n}, true)
			rlost, rtwice, _ := tally(results[club], []int{n}, false)
			if twice+disorder+rtwice > 0 {
				t.Fatalf("%s: twice %d, out of order %d, results twice %d", club, twice, disorder, rtwice)
			}
			if lost+rlost > 0 {
				return false
			}
		}
		return true
	})
	if strings.Contains(impostor.errb.String(), "league hub link up") {
		t.Fatal("north's token was let in as south")
	}
	if !strings.Contains(srv.Output(), `authentication error - User "south"`) {
		t.Fatalf("the hub logged no refusal of the impostor; its log:\n%s", lastLines(srv.Output(), 20))
	}
	if _, err := nc.Request("$JS.league.API.STREAM.DELETE.LEAGUE", nil, 2*time.Second); err == nil {
		t.Fatal("a tool deleted LEAGUE")
	}
	if _, err := nc.Request("$JS.API.STREAM.DELETE.LEAGUE", nil, 2*time.Second); err == nil {
		t.Fatal("a tool deleted LEAGUE")
	}
}
