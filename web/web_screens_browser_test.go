package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/web"
)

// testDelays are the screens' delays: the page's, 1 s, and on a hub club-02's own,
// none, and club-03's, 2 s: short, so the tiles come soon, and real, so the badges
// say what the server's /api/status does.
func testDelays() *web.Delays {
	return web.NewDelays(time.Second, map[string]time.Duration{"club-02": 0, "club-03": 2 * time.Second})
}

// testPlayers are the players of the screens' games, Black and White in turn: in
// Latin with accents, Chinese, Arabic and Hebrew (right to left), long enough to be
// cut, and hostile: HTML that would run if the page wrote a name as HTML.
var testPlayers = []pairing.Player{
	{Name: "Lee", FirstName: "Sedol", Rank: "9p"},
	{Name: "张伟", Rank: "5d"},
	{Name: "محمد عبد الرحمن القحطاني", Rank: "2k"},
	{Name: "Álvarez-Núñez de la Peña y Fernández-Villaverde", FirstName: "Aurelio-Maximiliano", Rank: "12k"},
	{Name: `<script>document.body.dataset.pwned = "script"</script>`, Rank: "1d"},
	{Name: `<img src=x onerror="document.body.dataset.pwned = 'img'">`, FirstName: "Wolfeschlegelsteinhausenbergerdorff", Rank: "30k"},
	{Name: "יוסף כהן", Rank: "3d"},
	{Name: "Chō", FirstName: "Chikun", Rank: "9p"},
}

// pairBoards loads round 3 in the page's pairings' bucket (SCOREBOARD_PAIRINGS), as
// the daemon's load writes it: a game on every board's port but the last (a port
// with no game shows no players; a page of one board has its game), with
// testPlayers in turn, some with a handicap and a result.
func pairBoards(t *testing.T, js jetstream.JetStream, boards []pageBoard) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	kv, err := pairing.Setup(ctx, js, bus.DefaultPrefix, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := pairing.Round{Info: pairing.Info{Tournament: "Test Open", Round: 3}}
	tables := map[int]string{}
	for i, b := range boards {
		if i == len(boards)-1 && i > 0 {
			break
		}
		g := pairing.Game{Table: i + 1, Handicap: i % 4,
			Black: testPlayers[(2*i)%len(testPlayers)], White: testPlayers[(2*i+1)%len(testPlayers)]}
		if i%3 == 2 {
			g.Result = "W+"
		}
		r.Games = append(r.Games, g)
		tables[i+1] = b.port
	}
	if _, err := pairing.Apply(ctx, kv, r, tables, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// serveBoards serves a fresh page with delays d over a board bucket holding boards
// (put straight in the bucket, as the history writes them) and the games of
// pairBoards, and returns its address and the bucket.
func serveBoards(t *testing.T, boards []pageBoard, d *web.Delays, guard ...web.Guard) (string, jetstream.KeyValue) {
	t.Helper()
	ns := bustest.Start(t, bustest.Options{JetStream: true})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	js, _ := jetstream.New(ns.Daemon())
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bus.Subjects{Prefix: bus.DefaultPrefix}.Boards()})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range boards {
		if _, err := kv.Put(ctx, b.port, boardValue(t, b.problem, b.port, uint64(i+1), b.unit, time.Now())); err != nil {
			t.Fatalf("put %s: %v", b.port, err)
		}
	}
	pairBoards(t, js, boards)
	o := pageOpts{delays: d, pairings: true}
	for _, g := range guard {
		o.guard = &g
	}
	base, _ := serveTestPage(t, ns.Tool(), o)
	return base, kv
}

// hubBoards makes n boards of a league hub's page (ports <club>.<port>), in clubs of
// 1, 4, 2 and 3 boards in turn (2 boards: two clubs of one), some names long.
func hubBoards(t *testing.T, n int) []pageBoard {
	t.Helper()
	kinds := boardsFor(t, 12)
	var all []pageBoard
	sizes := []int{1, 4, 2, 3}
	for c := 0; len(all) < n; c++ {
		club := fmt.Sprintf("club-%02d", c+1)
		if c%5 == 3 {
			club = fmt.Sprintf("club-%02d-north-london-go-and-othello-society", c+1)
		}
		for i := 0; i < sizes[c%len(sizes)] && len(all) < n; i++ {
			k := kinds[len(all)%len(kinds)]
			port := fmt.Sprintf("table-%d", i+1)
			if i == 1 {
				port = k.port // the long names of the club's page
			}
			all = append(all, pageBoard{port: club + "." + port, problem: k.problem, unit: k.unit})
		}
	}
	return all
}

// screensJS lists, by computed styles and element boxes, what breaks the page on the
// screen it is on (phone: the 390 px phone's own rule as well):
//   - a page laid out wider or taller than the screen (drawn zoomed out);
//   - a tile without a picture drawn;
//   - a picture drawn (its viewBox fitted in its box) narrower or shorter than a third
//     of the screen's height or of its tile's width, or on a phone than 80% of the
//     screen's width;
//   - text cut (by its box, a box whose overflow is not visible, its tile or the
//     screen's sides), ending in an ellipsis, or under 14 px (the pictures' own text
//     aside);
//   - the status badge, the delay badge or the clock beyond the screen.
//
// It returns the problems, the page's height, its columns and its smallest picture.
const screensJS = `((phone, vw, vh) => {
	const bad = [];
	// A page wider than a phone's screen is drawn zoomed out: the screen's own size
	// is the measure, not the page's.
	if (document.documentElement.clientWidth !== vw || innerHeight !== vh)
		bad.push("the page is laid out " + document.documentElement.clientWidth + "x" + innerHeight + " on a " + vw + "x" + vh + " screen");
	const box = r => Math.round(r.left) + "," + Math.round(r.top) + " " + Math.round(r.width) + "x" + Math.round(r.height);
	const inside = (r, o) => r.left >= o.left - 1 && r.right <= o.right + 1 && r.top >= o.top - 1 && r.bottom <= o.bottom + 1;
	const least = vh / 3;
	let smallest = Infinity;
	for (const t of document.querySelectorAll(".tile")) {
		const port = t.dataset.port, tr = t.getBoundingClientRect();
		if (tr.left < -1 || tr.right > vw + 1) bad.push(port + ": tile " + box(tr) + " beyond the screen's sides");
		const svg = t.querySelector(".pic svg");
		if (!svg) { bad.push(port + ": no picture"); continue; }
		const r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
		let w = r.width, h = r.height;
		if (vb && vb.width > 0 && vb.height > 0) {
			const k = Math.min(r.width / vb.width, r.height / vb.height);
			w = vb.width * k; h = vb.height * k;
		}
		const drawn = Math.round(w) + "x" + Math.round(h);
		smallest = Math.min(smallest, w, h);
		if (Math.min(w, h) < least - 0.5) bad.push(port + ": picture drawn " + drawn + ", under a third of the screen's height (" + Math.round(least) + ")");
		if (Math.min(w, h) < tr.width / 3 - 0.5) bad.push(port + ": picture drawn " + drawn + ", under a third of its tile's width (" + Math.round(tr.width) + ")");
		if (phone && w < 0.8 * vw - 0.5) bad.push(port + ": picture drawn " + drawn + ", under 80% of the phone's width (" + vw + ")");
	}
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	let texts = 0, names = 0;
	for (let node; (node = walk.nextNode());) {
		const p = node.parentElement;
		if (!node.textContent.trim() || !p || p.closest("svg") || p.closest("[hidden]") || p.getClientRects().length === 0) continue;
		texts++;
		const where = (p.closest("[data-port]") ? p.closest("[data-port]").dataset.port + ": " : "") + p.tagName.toLowerCase() + "." + (p.getAttribute("class") || p.id) + " " + JSON.stringify(node.textContent.slice(0, 30));
		const cs = getComputedStyle(p);
		if (parseFloat(cs.fontSize) < 14 - 0.05) bad.push(where + " at " + cs.fontSize);
		if (p.matches(".game .name")) {
			// A player's name is the one text cut: with an ellipsis, whole in its title,
			// its box inside its tile and the screen.
			const r = p.getBoundingClientRect(), tile = p.closest(".tile");
			if (p.scrollWidth > p.clientWidth + 1 && cs.textOverflow !== "ellipsis") bad.push(where + " cut without an ellipsis");
			if (p.title !== node.textContent) bad.push(where + " has the title " + JSON.stringify(p.title));
			if (r.left < -1 || r.right > vw + 1 || (tile && !inside(r, tile.getBoundingClientRect()))) bad.push(where + " " + box(r) + " out of its tile or the screen");
			names++;
			continue;
		}
		if (cs.display !== "inline" && p.scrollWidth > p.clientWidth + 1) bad.push(where + " cut: " + p.scrollWidth + " px in " + p.clientWidth);
		if (cs.textOverflow === "ellipsis") bad.push(where + " ends in an ellipsis");
		const range = document.createRange();
		range.selectNodeContents(node);
		const tile = p.closest(".tile");
		for (const r of range.getClientRects()) {
			if (r.width === 0) continue;
			if (r.left < -1 || r.right > vw + 1) bad.push(where + " " + box(r) + " beyond the screen's sides");
			if (tile && !inside(r, tile.getBoundingClientRect())) bad.push(where + " " + box(r) + " out of its tile " + box(tile.getBoundingClientRect()));
			for (let a = p; a && a !== document.body; a = a.parentElement) {
				const s = getComputedStyle(a);
				if (s.overflowX === "visible" && s.overflowY === "visible") continue;
				if (!inside(r, a.getBoundingClientRect())) bad.push(where + " " + box(r) + " cut by " + a.tagName.toLowerCase() + "." + a.className + " (overflow " + s.overflow + ")");
			}
		}
	}
	if (texts === 0) bad.push("no text on the page");
	// Every player's line in its order, whatever the name's direction: the stone,
	// the name, the rank, left to right (an isolate each), on one line.
	for (const pl of [...document.querySelectorAll(".tile .game .player")].filter(e => e.getClientRects().length > 0)) {
		const [st, nm, rk] = [".stone", ".name", ".rank"].map(s => pl.querySelector(s).getBoundingClientRect());
		if (!(st.right <= nm.left + 1 && nm.right <= rk.left + 1) || Math.abs(st.top + st.height / 2 - (rk.top + rk.height / 2)) > rk.height)
			bad.push(pl.closest("[data-port]").dataset.port + ": player " + JSON.stringify(pl.textContent) + " out of order: stone " + box(st) + ", name " + box(nm) + ", rank " + box(rk));
	}
	// No name ran as HTML: the page's scripts are its own two, no image of a name.
	if (document.body.dataset.pwned) bad.push("a player's name ran as HTML: " + document.body.dataset.pwned);
	if (document.querySelectorAll("script").length !== 2 || document.querySelector("main img")) bad.push("a player's name made elements: " + document.querySelectorAll("script").length + " scripts");
	const screen = {left: 0, top: 0, right: vw, bottom: vh};
	for (const id of ["conn", "delay", "clock", "history-off", "find"]) {
		const e = document.getElementById(id);
		if (!e) { bad.push("no #" + id); continue; }
		if ((id === "history-off" || id === "find") && e.hidden) continue;
		const r = e.getBoundingClientRect();
		if (e.hidden || r.width === 0) bad.push("#" + id + " not shown");
		else if (!inside(r, screen)) bad.push("#" + id + " " + box(r) + " beyond the screen " + vw + "x" + vh);
	}
	return {bad, names, games: [...document.querySelectorAll(".tile .game")].filter(e => e.getClientRects().length > 0).length, height: document.scrollingElement.scrollHeight, smallest: Math.round(smallest),
		cols: +getComputedStyle(document.getElementById("tiles")).getPropertyValue("--cols")};
})`

// TestPageOnEveryScreen: the club's page with 1, 4 and 12 boards and a league hub's
// with 2, 20 and 200 (clubs of 1 to 4 boards), on a phone (390x844), a tablet
// (768x1024) and a 1080p TV, as screensJS checks them; with few boards the TV
// page is on one screen, and a delayed page's badges are there. The pictures are
// never shrunk to fit: where they cannot all be on one screen, the page scrolls.
// SCOREBOARD_SCREENSHOTS=$PWD/docs writes docs/page-phone.png, page-tablet.png,
// page-4.png, page-12.png, page-hub-phone.png and page-hub-tv.png.
func TestPageOnEveryScreen(t *testing.T) {
	b := browsertest.New(t)
	shots := os.Getenv("SCOREBOARD_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	type screen struct {
		name          string
		width, height int
		phone         bool
	}
	screens := []screen{{"phone", 390, 844, true}, {"tablet", 768, 1024, false}, {"tv", 1920, 1080, false}}
	pages := []struct {
		name   string
		boards []pageBoard
		// fits: on the TV, every tile on one screen.
		fits  bool
		shots map[string]string
	}{
		{"club page, 1 board", boardsFor(t, 1), true, nil},
		{"club page, 4 boards", boardsFor(t, 4), true, map[string]string{"phone": "page-phone.png", "tablet": "page-tablet.png", "tv": "page-4.png"}},
		{"club page, 12 boards", boardsFor(t, 12), false, map[string]string{"tv": "page-12.png"}},
		{"hub page, 2 boards", hubBoards(t, 2), true, nil},
		{"hub page, 20 boards", hubBoards(t, 20), false, map[string]string{"phone": "page-hub-phone.png", "tv": "page-hub-tv.png"}},
		{"hub page, 200 boards", hubBoards(t, 200), false, nil},
	}
	start := time.Now()
	loads := 0
	for _, pg := range pages {
		d := testDelays()
		hub := strings.HasPrefix(pg.name, "hub")
		if hub {
			// A hub's page knows its clubs: its header links to their index.
			var clubs []string
			for _, b := range pg.boards {
				if c, _, _ := strings.Cut(b.port, "."); !slices.Contains(clubs, c) {
					clubs = append(clubs, c)
				}
			}
			d.SetLeague(clubs, map[string]time.Duration{"club-02": 0, "club-03": 2 * time.Second})
		}
		base, _ := serveBoards(t, pg.boards, d)
		for _, sc := range screens {
			what := fmt.Sprintf("%s at %dx%d", pg.name, sc.width, sc.height)
			b.Viewport(t, sc.width, sc.height, sc.phone)
			b.Do(t, 30*time.Second, chromedp.Navigate(base+"/"))
			loads++
			waitLaidOut(t, b, len(pg.boards))
			got := browsertest.Eval[struct {
				Bad      []string `json:"bad"`
				Names    int      `json:"names"`
				Games    int      `json:"games"`
				Height   int      `json:"height"`
				Smallest int      `json:"smallest"`
				Cols     int      `json:"cols"`
			}](t, b, fmt.Sprintf("%s(%v, %d, %d)", screensJS, sc.phone, sc.width, sc.height))
			if len(got.Bad) > 0 {
				t.Errorf("%s: %d problems:", what, len(got.Bad))
				for i, s := range got.Bad {
					if i == 20 {
						t.Errorf("  and %d more", len(got.Bad)-i)
						break
					}
					t.Errorf("  %s", s)
				}
			}
			if find := browsertest.Eval[bool](t, b, `!document.getElementById("find").hidden`); find != hub {
				t.Errorf("%s: the link to the clubs' index shown %v, want %v", what, find, hub)
			}
			if want := max(len(pg.boards)-1, 1); got.Games != want || got.Names != 2*want {
				t.Errorf("%s: %d tiles show a game, %d names, want %d and %d (every port but the last has a game)", what, got.Games, got.Names, want, 2*want)
			}
			t.Logf("%s: %d columns, smallest picture %d px, page %d px high, %d games", what, got.Cols, got.Smallest, got.Height, got.Games)
			// The delays: the page's in the header, and a club's own in its heading.
			delays := browsertest.Eval[[]string](t, b, `[document.getElementById("delay").textContent,
				...[...document.querySelectorAll("h2.club .delay:not([hidden])")].map(e => e.closest("h2").dataset.club + ": " + e.textContent)]`)
			want := []string{"delayed 1 s"}
			if strings.HasPrefix(pg.name, "hub") {
				want = append(want, "club-02: live")
				if len(pg.boards) > 2 {
					want = append(want, "club-03: delayed 2 s")
				}
			}
			if fmt.Sprint(delays) != fmt.Sprint(want) {
				t.Errorf("%s: the delays say %q, want %q", what, delays, want)
			}
			if sc.name == "tv" && pg.fits && got.Height > sc.height+1 {
				t.Errorf("%s: the page scrolls (%d px high), want every tile on the screen", what, got.Height)
			}
			if name := pg.shots[sc.name]; name != "" {
				b.Screenshot(t, filepath.Join(shots, name))
			}
		}
	}
	t.Logf("%d page loads in %v", loads, time.Since(start).Round(time.Millisecond))
}

// waitLaidOut waits until the page shows n tiles, each with its unit and picture, in
// a layout that has settled, and its delay badge.
func waitLaidOut(t *testing.T, b *browsertest.Browser, n int) {
	t.Helper()
	bustest.Wait(t, fmt.Sprintf("%d tiles laid out and the delay badge", n), func() (bool, string) {
		got := browsertest.Eval[[]string](t, b, `[String(document.querySelectorAll(".tile[data-seq]").length),
			document.getElementById("tiles").dataset.settled || "", document.getElementById("delay").textContent,
			String(document.querySelectorAll(".tile[data-game^='3/']").length)]`)
		return got[0] == fmt.Sprint(n) && got[1] == fmt.Sprint(n) && strings.HasPrefix(got[2], "delayed") && got[3] == fmt.Sprint(max(n-1, 1)),
			fmt.Sprintf("%s tiles with their unit, laid out for %q, delay badge %q, %s with their game", got[0], got[1], got[2], got[3])
	})
}
