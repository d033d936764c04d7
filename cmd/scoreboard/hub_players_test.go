package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// TestHubPagePlayersEndToEnd: a real hub process, its page on, and two real club
// daemons linked to it: north live, south delayed an hour. Each plays a unit; the
// organiser loads a round at the hub (pairings load --hub, the file's [tables]).
// The hub's page shows north's board with its players, to ?player= and ?club= and
// in Chromium's index on a phone, where a search for Lee finds north's board alone,
// one tap from it; south's board and players are in no answer and no stream, asked
// by its player's name or its club's, and its search finds nothing.
func TestHubPagePlayersEndToEnd(t *testing.T) {
	proctest.SkipShort(t, "a hub process, two club daemons and a browser")
	b := browsertest.New(t)
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	page, hubURL, leafURL := startPlayersHub(t, bin, root)
	lee := streamOf(t, page, "?player=lee")
	hidden := streamOf(t, page, "?player="+url.QueryEscape("hidden player"))
	southStream := streamOf(t, page, "?club=south")

	north := startLeagueClub(t, bin, "north", leafURL, filepath.Join(root, "north"), 1)
	south := startLeagueClub(t, bin, "south", leafURL, filepath.Join(root, "south"), 100)
	csv := filepath.Join(root, "round.csv")
	os.WriteFile(csv, []byte("round,table,black,black rank,white,white rank\n5,1,Lee Sedol,9p,张伟,5d\n5,2,Hidden Player,3d,Cho Chikun,9p\n"), 0o600)
	var out string
	bustest.Wait(t, "the organiser's load", func() (bool, string) {
		var code int
		code, out = pairingsLoad(t, bin, "--league", "--nats-url", hubURL, csv)
		return code == 0, out
	})
	north.feed(1)
	south.feed(1)
	north.answered(60 * time.Second)
	south.answered(60 * time.Second)

	type board struct {
		Port string
		Seq  uint64
		Game *struct{ Black, White struct{ Name, Rank string } }
	}
	boards := func(q string) string {
		var got []board
		getJSON(t, page+"/api/boards"+q, &got)
		var s []string
		for _, b := range got {
			if b.Game == nil {
				s = append(s, fmt.Sprintf("%s %d", b.Port, b.Seq))
				continue
			}
			s = append(s, fmt.Sprintf("%s %d %s (%s) - %s (%s)", b.Port, b.Seq, b.Game.Black.Name, b.Game.Black.Rank, b.Game.White.Name, b.Game.White.Rank))
		}
		return strings.Join(s, ", ")
	}
	want := "north.stdio 1 Lee Sedol (9p) - 张伟 (5d)"
	bustest.Wait(t, "north's board with its players", func() (bool, string) {
		got := boards("?player=sedol")
		return got == want, got
	})
	bustest.Wait(t, "Lee's stream told north's board", func() (bool, string) {
		return slices.ContainsFunc(lee(), func(e playerEvent) bool { return e.Port == "north.stdio" && e.Seq == 1 }), fmt.Sprint(lee())
	})
	for q, w := range map[string]string{"?club=north": want, "?club=south": "", "?player=hidden": "", "?player=cho": "", "?club=south&player=hidden": "", "": want} {
		if got := boards(q); got != w {
			t.Errorf("/api/boards%s: %q, want %q", q, got, w)
		}
	}
	for name, events := range map[string]func() []playerEvent{"?player=lee": lee, "?player=hidden player": hidden, "?club=south": southStream} {
		for _, e := range events() {
			if e.Port != "north.stdio" || name != "?player=lee" {
				t.Errorf("/api/events%s told %+v: only Lee's north.stdio may be told", name, e)
			}
		}
	}

	checkIndexFindsLee(t, b, page)
}

// startPlayersHub starts a real hub, its page on, whose file has clubs north
// (live) and south (delayed an hour) and maps tables 1 and 2 to their ports: its
// page, its tools' and its leaf nodes' URLs.
func startPlayersHub(t *testing.T, bin, root string) (page, hubURL, leafURL string) {
	t.Helper()
	tools, leaf, httpPort := proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	err := os.WriteFile(conf, fmt.Appendf(nil, `[league]
listen = "127.0.0.1:%d"
leaf_listen = "127.0.0.1:%d"
http = "127.0.0.1:%d"
state_dir = %q
[[club]]
name = "north"
token = "token-north"
[[club]]
name = "south"
token = "token-south"
delay = "1h"
[tables]
1 = "north.stdio"
2 = "south.stdio"
`, tools, leaf, httpPort, filepath.Join(root, "hub")), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	page = fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	proctest.WaitTCP(t, fmt.Sprintf("127.0.0.1:%d", httpPort), 30*time.Second)
	return page, fmt.Sprintf("nats://127.0.0.1:%d", tools), fmt.Sprintf("nats-leaf://127.0.0.1:%d", leaf)
}

// checkIndexFindsLee: the hub's index on a phone lists north's board alone; a
// search for south's players or club finds nothing, one for Lee finds north's
// board, one tap from its page with its players.
func checkIndexFindsLee(t *testing.T, b *browsertest.Browser, page string) {
	t.Helper()
	b.Viewport(t, 390, 844, true)
	b.Do(t, 30*time.Second, chromedp.Navigate(page+"/clubs"))
	rows := func() []string {
		return browsertest.Eval[[]string](t, b, `[...document.querySelectorAll("#clubs li")].filter(e => !e.closest("[hidden]")).map(e => e.dataset.port + " " + e.textContent)`)
	}
	bustest.Wait(t, "the index lists north's board", func() (bool, string) {
		r := rows()
		return len(r) == 1 && strings.Contains(r[0], "Lee Sedol"), fmt.Sprint(r)
	})
	for _, q := range []string{"hidden", "south", "cho"} {
		b.Do(t, 20*time.Second, chromedp.Evaluate[chromedp.Void](`document.getElementById("q").value = ""`), chromedp.SendKeys("#q", q))
		bustest.Wait(t, "the search for "+q+" finds nothing", func() (bool, string) {
			found := browsertest.Eval[string](t, b, `document.getElementById("found").textContent`)
			return found == "0 boards" && len(rows()) == 0, found + " " + fmt.Sprint(rows())
		})
	}
	b.Do(t, 20*time.Second, chromedp.Evaluate[chromedp.Void](`document.getElementById("q").value = ""`), chromedp.SendKeys("#q", "sedol"))
	bustest.Wait(t, "the search for sedol", func() (bool, string) {
		r := rows()
		return len(r) == 1 && strings.HasPrefix(r[0], "north.stdio"), fmt.Sprint(r)
	})
	b.Do(t, 20*time.Second, chromedp.Click(`#clubs li[data-port="north.stdio"] a`))
	bustest.Wait(t, "Lee's board's page with its players", func() (bool, string) {
		got := browsertest.Eval[[]string](t, b, `[location.pathname, [...document.querySelectorAll('.tile[data-port="north.stdio"] .game .name')].map(e => e.textContent).join(" - ")]`)
		return got[0] == "/boards/north.stdio" && got[1] == "Lee Sedol - 张伟", fmt.Sprint(got)
	})
}
