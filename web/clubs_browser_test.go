package web_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
)

// indexJS reads the index of clubs as a phone shows it: the clubs and the boards
// in sight (not hidden by the search), the search's count, and what breaks it on
// the screen (a page wider than the screen, text under 14 px, text cut but a
// name's with its ellipsis, a name that ran as HTML).
const indexJS = `(() => {
	const bad = [];
	const vw = document.documentElement.clientWidth;
	if (document.scrollingElement.scrollWidth > vw + 1) bad.push("the page is " + document.scrollingElement.scrollWidth + " px wide on a " + vw + " px screen");
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let node; (node = walk.nextNode());) {
		const p = node.parentElement;
		if (!node.textContent.trim() || p.closest("[hidden]") || p.getClientRects().length === 0) continue;
		const where = p.tagName.toLowerCase() + "." + (p.getAttribute("class") || p.id) + " " + JSON.stringify(node.textContent.slice(0, 30));
		const cs = getComputedStyle(p), r = p.getBoundingClientRect();
		if (parseFloat(cs.fontSize) < 14 - 0.05) bad.push(where + " at " + cs.fontSize);
		if (r.left < -1 || r.right > vw + 1) bad.push(where + " beyond the screen's sides");
		if (cs.display !== "inline" && p.scrollWidth > p.clientWidth + 1 && cs.textOverflow !== "ellipsis") bad.push(where + " cut: " + p.scrollWidth + " px in " + p.clientWidth);
	}
	if (document.body.dataset.pwned || document.querySelectorAll("script").length !== 2 || document.querySelector("main img")) bad.push("a name ran as HTML");
	const shown = e => !e.closest("[hidden]");
	return {bad,
		clubs: [...document.querySelectorAll("#clubs section")].filter(shown).map(e => e.dataset.club),
		boards: [...document.querySelectorAll("#clubs li")].filter(shown).map(e => e.dataset.port + " " +
			[...e.querySelectorAll(".game:not([hidden]) .name")].map(n => n.textContent).join(" - ")),
		found: document.getElementById("found").textContent};
})()`

type indexView struct {
	Bad    []string `json:"bad"`
	Clubs  []string `json:"clubs"`
	Boards []string `json:"boards"`
	Found  string   `json:"found"`
}

// TestHubIndexSearchOnPhone: a league hub's index of clubs (/clubs) on a 390x844
// phone lists each club with its boards and their players, legible and within the
// screen; a search by a player's name (any case, without its accents) keeps that
// player's board alone, one tap from it, and a search by a club's name keeps the
// club; a club delayed an hour has neither its board nor its player in the
// index, whatever is searched. /clubs/<club> is the page of that club's tiles
// alone, which follows that club's events only.
// SCOREBOARD_SCREENSHOTS=$PWD/docs writes docs/page-index-phone.png,
// page-search-phone.png and page-club-phone.png.
func TestHubIndexSearchOnPhone(t *testing.T) {
	b := browsertest.New(t)
	p, want := indexLeague(t)
	b.Viewport(t, 390, 844, true)
	b.Do(t, 30*time.Second, chromedp.Navigate(p.base+"/clubs"))
	read := func() indexView { return browsertest.Eval[indexView](t, b, indexJS) }
	var v indexView
	bustest.Wait(t, "the index lists every board", func() (bool, string) {
		v = read()
		return len(v.Boards) == len(want), fmt.Sprintf("%d boards of %d: %v", len(v.Boards), len(want), v.Boards)
	})
	for _, s := range v.Bad {
		t.Errorf("the index: %s", s)
	}
	if slices.Contains(v.Clubs, "a-b") || slices.ContainsFunc(v.Boards, func(s string) bool { return strings.Contains(s, "Hidden") }) {
		t.Errorf("the index shows the club delayed an hour: %v %v", v.Clubs, v.Boards)
	}
	shots := os.Getenv("SCOREBOARD_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	b.Screenshot(t, filepath.Join(shots, "page-index-phone.png"))
	search := func(q string) indexView {
		t.Helper()
		b.Do(t, 20*time.Second, chromedp.Evaluate[chromedp.Void](`document.getElementById("q").value = ""`), chromedp.SendKeys("#q", q))
		var v indexView
		bustest.Wait(t, "the search for "+q, func() (bool, string) {
			v = read()
			return strings.HasSuffix(v.Found, "board") || strings.HasSuffix(v.Found, "boards"), fmt.Sprint(v)
		})
		return v
	}
	// The page keeps 40 characters of a name (the tile cuts it shorter, with an
	// ellipsis).
	const alvarez = "north.t2 Aurelio Álvarez-Núñez de la Peña y Ferná - محمد عبد الرحمن القحطاني"
	const hostile = `south.t1 <script>document.body.dataset.pwned = "s - <img src=x onerror="document.body.datase`
	for q, want := range map[string]string{
		"sedol":       "[north.t1 Sedol Lee - 张伟]",
		"ALVAREZ":     "[" + alvarez + "]",
		"张伟":          "[north.t1 Sedol Lee - 张伟]",
		"القحطاني":    "[" + alvarez + "]",
		"<script>":    "[" + hostile + "]",
		"hidden":      "[]",
		"a-b":         "[]",
		"יוסף":        "[]",
		"south":       "[south.t0  " + hostile + " south.t2 Player 2-1 Black - Player 2-1 White south.t3 ]",
		"club-03 5-1": "[club-03-of-the-north-london-go-and-othello-society.t2 Player 5-1 Black - Player 5-1 White]",
	} {
		got := search(q)
		if fmt.Sprint(got.Boards) != want {
			t.Errorf("search %q: %v, want %s", q, got.Boards, want)
		}
		for _, s := range got.Bad {
			t.Errorf("search %q: %s", q, s)
		}
	}
	search("sedol")
	b.Screenshot(t, filepath.Join(shots, "page-search-phone.png"))
	// One tap from the search to the player's board.
	b.Do(t, 20*time.Second, chromedp.Click(`#clubs li[data-port="north.t1"] a`))
	bustest.Wait(t, "the board of the player found", func() (bool, string) {
		got := browsertest.Eval[[]string](t, b, `[location.pathname, ((document.querySelector('.tile[data-port="north.t1"]') || {dataset: {}}).dataset.game || "").split("/")[0]]`)
		return got[0] == "/boards/north.t1" && got[1] == "4", fmt.Sprint(got)
	})
	b.WaitConn(t, "live") // its own stream open

	// A club's page: its tiles alone, from its own events.
	b.Do(t, 30*time.Second, chromedp.Navigate(p.base+"/clubs/north"))
	bustest.Wait(t, "north's page with its two tiles", func() (bool, string) {
		got := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll(".tile[data-seq]")].map(e => e.dataset.port + " round " + (e.dataset.game || "").split("/")[0])`)
		return fmt.Sprint(got) == "[north.t1 round 4 north.t2 round 4]", fmt.Sprint(got)
	})
	b.WaitConn(t, "live")
	b.Screenshot(t, filepath.Join(shots, "page-club-phone.png"))
	// The board's page followed its port's events, north's page its club's: no page
	// here took the whole league's stream.
	_, urls := b.Hosts()
	for _, want := range []string{"/api/events?port=north.t1", "/api/events?club=north"} {
		if !slices.ContainsFunc(urls, func(u string) bool { return strings.HasSuffix(u, want) }) {
			t.Errorf("no request for %s: %v", want, urls)
		}
	}
	if slices.ContainsFunc(urls, func(u string) bool { return strings.HasSuffix(u, "/api/events") }) {
		t.Errorf("a page took the whole league's events: %v", urls)
	}
}

// indexLeague is a league hub's page of 11 clubs (a-b delayed an hour) with 1 to
// 3 boards each, every board but each club's third named in round 4, some names
// long, right to left or hostile; it returns the page once every live board shows
// its game, and the ports it shows.
func indexLeague(t *testing.T) (*leaguePage, []string) {
	t.Helper()
	d := leagueDelays()
	p := startLeaguePage(t, d)
	// More clubs than the test's streams: the index is a list of many.
	clubs := slices.Sorted(maps.Keys(leagueClubs))
	for i := range 8 {
		clubs = append(clubs, fmt.Sprintf("club-%02d-of-the-north-london-go-and-othello-society", i+1))
	}
	d.SetLeague(clubs, map[string]time.Duration{"a-b": time.Hour})
	games := map[string][2]string{
		"north.t1": {"Sedol Lee", "张伟"},
		"north.t2": {"Aurelio Álvarez-Núñez de la Peña y Fernández-Villaverde", "محمد عبد الرحمن القحطاني"},
		"south.t1": {`<script>document.body.dataset.pwned = "script"</script>`, `<img src=x onerror="document.body.dataset.pwned = 'img'">`},
		"a-b.t1":   {"Hidden Player", "יוסף כהן"},
	}
	// south.t0 is the page's first state (startLeaguePage): a port without a unit.
	want := []string{"south.t0"}
	for i, club := range clubs {
		if club == "a-b" {
			continue
		}
		for j := range 1 + i%3 {
			port := fmt.Sprintf("%s.t%d", club, j+1)
			if _, ok := games[port]; !ok && j < 2 {
				games[port] = [2]string{fmt.Sprintf("Player %d-%d Black", i, j), fmt.Sprintf("Player %d-%d White", i, j)}
			}
			want = append(want, port)
		}
	}
	p.round(t, 4, games)
	seq := uint64(0)
	for _, port := range append(slices.Clone(want), "a-b.t1") {
		seq++
		p.board(t, port, seq)
	}
	slices.Sort(want)
	bustest.Wait(t, "every live club's board with its game", func() (bool, string) {
		_, got := playedBoards(t, p.base, "")
		n := 0
		for _, s := range got {
			if strings.Contains(s, " - ") {
				n++
			}
		}
		return len(got) == len(want) && n == len(games)-1, fmt.Sprintf("%d boards, %d with a game: %v", len(got), n, got)
	})
	return p, want
}
