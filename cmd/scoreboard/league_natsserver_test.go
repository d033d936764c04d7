package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
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
	bustest.Wait(t, "both clubs' units in LEAGUE, once each, in order", func() (bool, string) {
		dumps, results := leagueUnits(t, nc)
		for club, n := range map[string]int{"north": 30, "south": 10} {
			lost, twice, disorder := tally(dumps[club], []int{n}, true)
			rlost, rtwice, _ := tally(results[club], []int{n}, false)
			if twice+disorder+rtwice > 0 {
				t.Fatalf("%s: twice %d, out of order %d, results twice %d", club, twice, disorder, rtwice)
			}
			if lost+rlost > 0 {
				return false, fmt.Sprintf("%s: %d of %d dumps lost, %d results lost", club, lost, n, rlost)
			}
		}
		return true, ""
	})
	if strings.Contains(impostor.errb.String(), "league hub link up") {
		t.Fatal("north's token was let in as south")
	}
	if !strings.Contains(srv.Output(), `authentication error - User "south"`) {
		t.Fatalf("the hub logged no refusal of the impostor; its log:\n%s", lastLines(srv.Output(), 20))
	}
	if _, err := nc.Request("$JS.league.API.STREAM.DELETE."+league.ClubStream("north"), nil, 2*time.Second); err == nil {
		t.Fatal("a tool deleted north's stream")
	}
	if _, err := nc.Request("$JS.API.STREAM.DELETE."+league.ClubStream("north"), nil, 2*time.Second); err == nil {
		t.Fatal("a tool deleted north's stream")
	}
}

// TestLeagueNATSServerClusterHubFault: a league whose hub is a cluster of three real
// nats-servers, each with configs/league-hub-cluster.conf (which includes
// league-hub.conf), and `scoreboard hub --nats-url` on all three with LEAGUE
// replicated three times. north joins node 1 through a line that is cut while it
// plays; south lists every node's leaf listener, and the node it joined is killed
// with kill -9 and started again. Every unit of both is in LEAGUE once, in order.
func TestLeagueNATSServerClusterHubFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hubConf, err := os.ReadFile("../../configs/league-hub.conf")
	if err != nil {
		t.Fatal(err)
	}
	clusterConf, err := os.ReadFile("../../configs/league-hub-cluster.conf")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEAGUE_ADMIN_PASSWORD", "admin-secret")
	t.Setenv("LEAGUE_TOKEN_NORTH", "token-north")
	t.Setenv("LEAGUE_TOKEN_SOUTH", "token-south")
	const n = 3
	var leafPorts, routePorts [n]int
	var routes []string
	for i := range n {
		leafPorts[i], routePorts[i] = proctest.FreePort(t), proctest.FreePort(t)
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", routePorts[i]))
	}
	nodes := make([]*proctest.NATSServer, n)
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("hub%d", i+1))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		// The shipped files, with this machine's loopback ports and directories.
		c := strings.Replace(string(hubConf), "listen: 0.0.0.0:7422", fmt.Sprintf("listen: 127.0.0.1:%d", leafPorts[i]), 1)
		c = strings.Replace(c, `store_dir: "/var/lib/nats-league"`, fmt.Sprintf("store_dir: %q", filepath.Join(dir, "js")), 1)
		cc := strings.Replace(string(clusterConf), "server_name: hub1", fmt.Sprintf("server_name: hub%d", i+1), 1)
		cc = strings.Replace(cc, "listen: 0.0.0.0:6222", fmt.Sprintf("listen: 127.0.0.1:%d", routePorts[i]), 1)
		for j := range n {
			cc = strings.Replace(cc, fmt.Sprintf("nats-route://hub%d:6222", j+1), routes[j], 1)
		}
		for name, data := range map[string]string{"league-hub.conf": c, "league-hub-cluster.conf": cc} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		nodes[i] = proctest.StartNATS(t, proctest.NATSOptions{Config: filepath.Join(dir, "league-hub-cluster.conf"), Name: fmt.Sprintf("hub%d", i+1)})
	}
	var urls []string
	for _, node := range nodes {
		urls = append(urls, node.URL())
	}
	nc := waitLeagueJetStream(t, urls)

	conf := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(conf, []byte("[league]\nhttp = \"off\"\nreplicas = 3\n[[club]]\nname = \"north\"\ntoken = \"token-north\"\n[[club]]\nname = \"south\"\ntoken = \"token-south\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--nats-url", strings.Join(urls, ","), "--nats-user", "admin", "--nats-password", "admin-secret", "--log-format", "json")
	hub.WaitOutput("league hub running", 60*time.Second)

	proxy := newLinkProxy(t, fmt.Sprintf("127.0.0.1:%d", leafPorts[0]))
	north := startLeagueClub(t, bin, "north", "nats-leaf://"+proxy.addr, filepath.Join(root, "north"), 0)
	// south's first URL is node 3's: the node killed below.
	southURLs := fmt.Sprintf("nats-leaf://127.0.0.1:%d,nats-leaf://127.0.0.1:%d,nats-leaf://127.0.0.1:%d", leafPorts[2], leafPorts[1], leafPorts[0])
	south := startLeagueClub(t, bin, "south", southURLs, filepath.Join(root, "south"), 1000)

	want := map[string]int{}
	play := func(c *leagueClub, k int) {
		c.feed(k)
		c.answered(90 * time.Second)
		want[c.name] += k
	}
	complete := func(what string) {
		t.Helper()
		t0 := time.Now()
		bustest.Wait(t, what+": both clubs' units in LEAGUE, once each, in order", func() (bool, string) {
			dumps, results := leagueUnits(t, nc)
			for club, n := range want {
				lost, twice, disorder := tally(dumps[club], []int{n}, true)
				rlost, rtwice, _ := tally(results[club], []int{n}, false)
				if twice+disorder+rtwice > 0 {
					t.Fatalf("%s, %s: twice %d, out of order %d, results twice %d", what, club, twice, disorder, rtwice)
				}
				if lost+rlost > 0 {
					return false, fmt.Sprintf("%s: %d of %d dumps lost, %d results lost", club, lost, n, rlost)
				}
			}
			return true, ""
		})
		t.Logf("%s: lost 0, twice 0, out of order 0 (north %d, south %d units), complete %v after", what, want["north"], want["south"], time.Since(t0).Round(time.Millisecond))
	}
	play(north, 10)
	play(south, 10)
	complete("linked")

	var info struct {
		Config struct {
			Replicas int `json:"num_replicas"`
		} `json:"config"`
		Cluster struct {
			Replicas []struct{ Name string } `json:"replicas"`
		} `json:"cluster"`
	}
	m, err := nc.Request("$JS.league.API.STREAM.INFO."+league.ClubStream("north"), nil, 5*time.Second)
	if err != nil || json.Unmarshal(m.Data, &info) != nil || info.Config.Replicas != 3 {
		t.Fatalf("%s's info: %v, %s", league.ClubStream("north"), err, m.Data)
	}

	proxy.down()
	play(north, 20)
	proxy.up()
	complete("north's line cut and back")

	nodes[2].Kill()
	play(south, 20)
	play(north, 5)
	complete("node 3, south's, killed")
	nodes[2].Start()
	play(south, 5)
	complete("node 3 back")
}

// waitLeagueJetStream waits until the hub's servers at urls (a nats-server hub or its
// cluster) answer JetStream in the league's domain, and returns the connection it
// waited on, a tool's, closed when the test ends.
func waitLeagueJetStream(t *testing.T, urls []string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1)) // the tool user
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	bustest.Wait(t, "the cluster's JetStream up", func() (bool, string) {
		m, err := nc.Request("$JS.league.API.INFO", nil, 2*time.Second)
		if err != nil {
			return false, fmt.Sprintf("request: %v", err)
		}
		return !strings.Contains(string(m.Data), `"error"`), "answer " + string(m.Data)
	})
	return nc
}
