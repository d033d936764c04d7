package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/web"
)

// inFrame evaluates the function body fn (JavaScript, "return ..." at its end) in the
// document of the page's iframe named name: a frame of another origin, which the
// page's own script may not read. It runs in a world of its own in that frame (the
// frame's DOM, not its script's variables).
func inFrame[T any](t *testing.T, b *browsertest.Browser, name, fn string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatalf("browser: the page's frames: %v", err)
	}
	var frame *cdp.Frame
	var names []string
	for _, c := range tree.FrameTree.ChildFrames {
		names = append(names, c.Frame.Name)
		if c.Frame.Name == name {
			frame = c.Frame
		}
	}
	if frame == nil {
		t.Fatalf("browser: no iframe named %q; the page's are %q", name, names)
	}
	world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame.ID, WorldName: "test"})
	if err != nil {
		t.Fatalf("browser: a world in iframe %s: %v", name, err)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T]("(() => {"+fn+"})()", func(p *runtime.EvaluateParams) {
		p.ContextID = world.ExecutionContextID
	}))
	if err != nil {
		t.Fatalf("browser: evaluate in iframe %s: %v", name, err)
	}
	return v
}

// embedJS reads an embedded board, the frame it is in being its screen: its unit,
// answer and mark, and what breaks it (a picture drawn under half the frame's
// smaller side, text cut or beyond the frame or under 14 px, a frame that scrolls).
const embedJS = `
	const bad = [];
	const vw = document.documentElement.clientWidth, vh = innerHeight;
	const box = r => Math.round(r.left) + "," + Math.round(r.top) + " " + Math.round(r.width) + "x" + Math.round(r.height);
	const board = document.getElementById("board");
	const svg = document.querySelector("#pic svg");
	let drawn = 0;
	if (!svg) bad.push("no picture");
	else {
		const r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
		const k = Math.min(r.width / vb.width, r.height / vb.height);
		drawn = Math.min(vb.width * k, vb.height * k);
		if (drawn < Math.min(vw, vh) / 2) bad.push("picture drawn " + Math.round(vb.width * k) + "x" + Math.round(vb.height * k) + " in a " + vw + "x" + vh + " frame");
	}
	if (document.scrollingElement.scrollHeight > vh + 1 || document.scrollingElement.scrollWidth > vw + 1)
		bad.push("the frame scrolls: " + document.scrollingElement.scrollWidth + "x" + document.scrollingElement.scrollHeight);
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let node; (node = walk.nextNode());) {
		const p = node.parentElement;
		if (!node.textContent.trim() || p.closest("svg") || p.closest("[hidden]") || p.getClientRects().length === 0) continue;
		const where = p.tagName.toLowerCase() + "." + (p.className || p.id) + " " + JSON.stringify(node.textContent.slice(0, 30));
		const cs = getComputedStyle(p);
		if (parseFloat(cs.fontSize) < 14 - 0.05) bad.push(where + " at " + cs.fontSize);
		if (p.matches(".game .name")) {
			// A player's name may be cut, with an ellipsis, its box in the frame.
			const r = p.getBoundingClientRect();
			if (p.scrollWidth > p.clientWidth + 1 && cs.textOverflow !== "ellipsis") bad.push(where + " cut without an ellipsis");
			if (r.left < -1 || r.right > vw + 1 || r.top < -1 || r.bottom > vh + 1) bad.push(where + " " + box(r) + " beyond the " + vw + "x" + vh + " frame");
			continue;
		}
		if (cs.display !== "inline" && p.scrollWidth > p.clientWidth + 1) bad.push(where + " cut: " + p.scrollWidth + " px in " + p.clientWidth);
		const range = document.createRange();
		range.selectNodeContents(node);
		for (const r of range.getClientRects())
			if (r.width > 0 && (r.left < -1 || r.right > vw + 1 || r.top < -1 || r.bottom > vh + 1)) bad.push(where + " " + box(r) + " beyond the " + vw + "x" + vh + " frame");
	}
	if (document.body.dataset.pwned || document.querySelectorAll("script").length !== 2) bad.push("a player's name ran as HTML");
	const game = document.querySelector(".game:not([hidden])");
	return {seq: +(board.dataset.seq || 0), answer: document.getElementById("answer").textContent,
		players: game ? [...game.querySelectorAll(".name")].map(e => e.textContent).join(" - ") : "",
		problem: document.getElementById("problem").textContent, mark: document.getElementById("mark").textContent,
		pic: document.getElementById("pic").innerHTML, drawn: Math.round(drawn), bad};`

type embedded struct {
	Seq     uint64   `json:"seq"`
	Answer  string   `json:"answer"`
	Problem string   `json:"problem"`
	Mark    string   `json:"mark"`
	Players string   `json:"players"`
	Pic     string   `json:"pic"`
	Drawn   int      `json:"drawn"`
	Bad     []string `json:"bad"`
}

// TestEmbedOnAnotherSite: a page of another origin frames /embed/hall at 300 and
// 1200 px wide and /embed/lobby (othello) at 300: each frame shows its port's board
// alone, its picture filling the frame, its answer, and the page's delay; a unit put
// in the bucket afterwards shows in the frames of its port, and only there. A page
// without a delay marks its embedded board live.
// SCOREBOARD_SCREENSHOTS=$PWD/docs writes docs/page-embed.png.
func TestEmbedOnAnotherSite(t *testing.T) {
	b := browsertest.New(t)
	goscore := samples.Units(t, "goscore", "goscore.in")
	othello := samples.Units(t, "othello", "othello.in")
	// The club's site, another origin, which the page lets frame its boards.
	siteLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// hall plays Lee Sedol against 张伟 (pairBoards); lobby, the last, no game.
	base, kv := serveBoards(t, []pageBoard{
		{port: "hall", problem: "goscore", unit: goscore[0]},
		{port: "lobby", problem: "othello", unit: othello[3]},
	}, testDelays(), web.Guard{EmbedOrigins: "http://" + siteLn.Addr().String()})

	checkEmbedAddresses(t, base)

	frames := []struct{ id, port, problem string }{{"narrow", "hall", "goscore"}, {"wide", "hall", "goscore"}, {"othello", "lobby", "othello"}}
	site := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>The club's site</title><body style="margin:0;background:#fff">
<h1>Our club's tournament</h1>
<iframe name="narrow" src="%[1]s/embed/hall" width="300" height="420" style="border:0"></iframe>
<iframe name="othello" src="%[1]s/embed/lobby" width="300" height="480" style="border:0"></iframe>
<iframe name="wide" src="%[1]s/embed/hall" width="1200" height="700" style="border:0"></iframe>
</body>`, base)
	}))
	site.Listener.Close()
	site.Listener = siteLn
	site.Start()
	defer site.Close()
	if strings.HasPrefix(site.URL, base) || site.URL == base {
		t.Fatalf("the site %s is the page's own origin %s", site.URL, base)
	}

	b.Do(t, 30*time.Second, chromedp.Navigate(site.URL))
	read := func(id string) embedded { return inFrame[embedded](t, b, id, embedJS) }
	wait := func(id, what string, ok func(embedded) bool) embedded {
		t.Helper()
		var v embedded
		bustest.Wait(t, fmt.Sprintf("frame %s: %s", id, what), func() (bool, string) {
			v = read(id)
			return ok(v), fmt.Sprintf("it shows unit %d (%q, %s, mark %q, %d bytes of picture)", v.Seq, v.Answer, v.Problem, v.Mark, len(v.Pic))
		})
		return v
	}
	solve := func(problem string, unit []byte) string {
		p, _ := engine.Lookup(problem)
		ans, err := p.Solve(unit)
		if err != nil {
			t.Fatal(err)
		}
		return string(ans.AppendText(nil))
	}
	check := func(id string, v embedded, seq uint64, problem, answer string) {
		t.Helper()
		if v.Seq != seq || v.Problem != problem || v.Answer != answer {
			t.Errorf("frame %s: unit %d of %s answering %q, want unit %d of %s answering %q", id, v.Seq, v.Problem, v.Answer, seq, problem, answer)
		}
		for _, s := range v.Bad {
			t.Errorf("frame %s: %s", id, s)
		}
	}
	for _, f := range frames {
		seq := map[string]uint64{"hall": 1, "lobby": 2}[f.port]
		players := map[string]string{"hall": "Sedol Lee - 张伟"}[f.port]
		v := wait(f.id, "its board, its players and the page's delay", func(v embedded) bool {
			return v.Seq == seq && v.Mark == "delayed 1 s" && v.Players == players
		})
		want := map[string]string{"hall": solve("goscore", goscore[0]), "lobby": solve("othello", othello[3])}[f.port]
		check(f.id, v, seq, f.problem, want)
		t.Logf("frame %s: picture drawn %d px", f.id, v.Drawn)
	}
	before := read("narrow")

	// A unit of lobby, then one of hall: each frame shows its own port's.
	ctx := context.Background()
	if _, err := kv.Put(ctx, "lobby", boardValue(t, "othello", "lobby", 3, othello[1], time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "hall", boardValue(t, "goscore", "hall", 4, goscore[1], time.Now())); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		seq := map[string]uint64{"hall": 4, "lobby": 3}[f.port]
		v := wait(f.id, fmt.Sprintf("unit %d", seq), func(v embedded) bool { return v.Seq == seq })
		want := map[string]string{"hall": solve("goscore", goscore[1]), "lobby": solve("othello", othello[1])}[f.port]
		check(f.id, v, seq, f.problem, want)
	}
	if after := read("narrow"); after.Pic == "" || after.Pic == before.Pic {
		t.Errorf("frame narrow: the picture did not change from unit 1 to unit 4")
	}
	shots := os.Getenv("SCOREBOARD_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	b.Screenshot(t, filepath.Join(shots, "page-embed.png"))

	checkEmbedLive(t, b, goscore[0])
}

// checkEmbedAddresses: /embed/<port> answers any port's name, a board or not yet,
// and a league hub's <club>.<port>; anything else is a 404.
func checkEmbedAddresses(t *testing.T, base string) {
	t.Helper()
	for path, want := range map[string]int{"/embed/hall": 200, "/embed/no-board-yet": 200, "/embed/north.table-1": 200, "/embed/Bad%20Name": 404, "/embed/a.b.c": 404} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// checkEmbedLive: a page without a delay marks its embedded board live.
func checkEmbedLive(t *testing.T, b *browsertest.Browser, unit []byte) {
	t.Helper()
	live, _ := serveBoards(t, []pageBoard{{port: "hall", problem: "goscore", unit: unit}}, nil)
	b.Do(t, 30*time.Second, chromedp.Navigate(live+"/embed/hall"))
	bustest.Wait(t, "the embedded board of a page without a delay, marked live", func() (bool, string) {
		got := browsertest.Eval[[]string](t, b, `[document.getElementById("board").dataset.seq || "", document.getElementById("mark").textContent]`)
		return got[0] == "1" && got[1] == "live", fmt.Sprintf("it shows unit %q, marked %q", got[0], got[1])
	})
}
