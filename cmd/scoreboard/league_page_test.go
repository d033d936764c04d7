package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// TestLeaguePageBrowser: the hub's page, in Chromium, shows the boards of two
// clubs, each tile keyed <club>.<port> and drawn from the unit the club answered,
// under a heading per club with its link's state and its latest board's age. A
// board that came over a line cut while the club played shows the club's time of
// its result, not the time of the catch-up. A tile's own page lists the port's
// earlier units from LEAGUE, each with its picture.
func TestLeaguePageBrowser(t *testing.T) {
	b := browsertest.New(t)
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hub := startHubProcess(t, bin, root, "north", "south")
	leafPort := hub.leafPort
	leaf := fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)
	proxy := newLinkProxy(t, fmt.Sprintf("127.0.0.1:%d", leafPort))
	north := startLeagueClub(t, bin, "north", "nats-leaf://"+proxy.addr, filepath.Join(root, "north"), 100)
	south := startLeagueClub(t, bin, "south", leaf, filepath.Join(root, "south"), 200)
	north.feed(2)
	south.feed(2)
	north.answered(60 * time.Second)
	south.answered(60 * time.Second)
	page := hub.page
	b.Do(t, 30*time.Second, chromedp.Navigate(page+"/"))
	b.WaitTile(t, "north.stdio", 60*time.Second, "north's second board", func(v browsertest.Tile) bool { return v.Seq == 2 })
	// north's third unit is answered with its line cut; the hub gets it later.
	proxy.down()
	north.feed(1)
	north.answered(60 * time.Second)
	// LEAGUE stores it after the line is back, so after answeredBy; the club's time
	// of its result is before.
	answeredBy := time.Now()
	proxy.up()
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
	order := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('#tiles > *')].map(e => e.dataset.club ? "club " + e.dataset.club : e.dataset.port)`)
	if strings.Join(order, ", ") != "club north, north.stdio, club south, south.stdio" {
		t.Fatalf("the page has %v, want north's heading, its tile, south's heading, its tile", order)
	}
	// The board's time is the club's, from before the line came back.
	var boards []struct {
		Port string    `json:"port"`
		Seq  uint64    `json:"seq"`
		Time time.Time `json:"time"`
	}
	getJSON(t, page+"/api/boards", &boards)
	for _, bd := range boards {
		if bd.Port == "north.stdio" && (bd.Seq != 3 || !bd.Time.Before(answeredBy)) {
			t.Fatalf("north's board: seq %d at %v; want 3, at the club's time, before %v (answered, line still cut)", bd.Seq, bd.Time, answeredBy)
		}
	}
	// Each club's heading: its link and the age of its latest board.
	for _, club := range []string{"north", "south"} {
		bustest.Wait(t, club+"'s heading with its link and its latest board's age", func() (bool, string) {
			head := browsertest.Eval[string](t, b, fmt.Sprintf(`document.querySelector('h2.club[data-club=%q]').textContent`, club))
			return strings.Contains(head, "linked since") && strings.Contains(head, "latest board ") && strings.Contains(head, " ago"), fmt.Sprintf("it says %q", head)
		})
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
	head := browsertest.Eval[string](t, b, `document.querySelector('h2.club[data-club="north"] .link').textContent`)
	if !strings.HasPrefix(head, "link down since") {
		t.Fatalf("north's heading shows %q, want its link down", head)
	}

	// north's tile's own page: its earlier units, read from LEAGUE, each with its
	// picture, at the club's times.
	var items []struct {
		Seq  uint64    `json:"seq"`
		Time time.Time `json:"time"`
		SVG  string    `json:"svg"`
	}
	getJSON(t, page+"/api/history?port=north.stdio", &items)
	if len(items) != 3 || items[2].Seq != 3 || !items[2].Time.Before(answeredBy) || items[0].SVG == "" {
		t.Fatalf("/api/history?port=north.stdio: %+v; want units 1 to 3 with pictures, the third at the club's time before %v", items, answeredBy)
	}
	resp, err := http.Get(page + items[0].SVG)
	if err != nil {
		t.Fatal(err)
	}
	svg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(svg), "<svg") {
		t.Fatalf("%s: %s %.200q", items[0].SVG, resp.Status, svg)
	}
	b.Do(t, 30*time.Second, chromedp.Navigate(page+"/boards/north.stdio"))
	bustest.Wait(t, "north.stdio's page listing 3 earlier units with pictures", func() (bool, string) {
		n := browsertest.Eval[int](t, b, `document.querySelectorAll('#history-list li a').length`)
		return n == 3, fmt.Sprintf("it lists %d", n)
	})
}

// getJSON decodes the JSON at url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(data, v) != nil {
		t.Fatalf("%s: %s %.300q", url, resp.Status, data)
	}
}
