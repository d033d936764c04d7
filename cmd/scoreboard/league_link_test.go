package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/promtest"
)

// TestLeagueClubStartsWithoutHubFault: a club whose hub is not there at start-up
// answers its port all the same; /metrics and the log say the link is down, then
// up once the hub starts, and the hub then has every unit the club answered.
func TestLeagueClubStartsWithoutHubFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hubPort, leafPort, httpPort := proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)
	leaf := fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)
	club := startLeagueClub(t, bin, "north", leaf, filepath.Join(root, "north"), 0, "--http-listen", fmt.Sprintf("127.0.0.1:%d", httpPort))
	club.feed(15)
	club.answered(60 * time.Second)
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort)
	linkUp := func(want float64) func(map[string]*dto.MetricFamily) bool {
		return func(f map[string]*dto.MetricFamily) bool {
			v, ok := promtest.Value(f, "scoreboard_hub_link_up", map[string]string{})
			return ok && v == want
		}
	}
	scrapeUntil(t, metricsURL, linkUp(0))

	conf := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"off\"\nstate_dir = %q\n[[club]]\nname = \"north\"\ntoken = \"token-north\"\n",
		hubPort, leafPort, filepath.Join(root, "hub"))), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	scrapeUntil(t, metricsURL, linkUp(1))
	bustest.Wait(t, "the club's log saying the link is up", func() (bool, string) {
		l := club.errb.String()
		return strings.Contains(l, "league hub link up"), "club log:\n" + l
	})
	nc := busConnect(t, fmt.Sprintf("nats://127.0.0.1:%d", hubPort))
	bustest.Wait(t, "the 15 units answered before the hub was there, in LEAGUE", func() (bool, string) {
		dumps, results := leagueUnits(t, nc)
		lost, twice, disorder := tally(dumps["north"], []int{15}, true)
		rlost, rtwice, _ := tally(results["north"], []int{15}, false)
		return lost+twice+disorder+rlost+rtwice == 0, fmt.Sprintf("dumps lost %d twice %d out of order %d, results lost %d twice %d", lost, twice, disorder, rlost, rtwice)
	})
	hub.Stop()
	scrapeUntil(t, metricsURL, linkUp(0))
	bustest.Wait(t, "the club's log saying the link is down", func() (bool, string) {
		l := club.errb.String()
		return strings.Contains(l, "league hub link down"), "club log:\n" + l
	})
	club.feed(5)
	club.answered(60 * time.Second)
}
