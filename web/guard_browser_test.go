package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/web"
)

// violations records, in every document the tab opens, what the page's policy
// refused (securitypolicyviolation), before the page's own scripts run.
const violations = `window.__refused = [];
document.addEventListener("securitypolicyviolation", e =>
  window.__refused.push(e.violatedDirective + " " + e.blockedURI + " " + (e.sourceFile || "") + ":" + e.lineNumber));`

// TestPageUnderPolicy: in Chromium, the page and a board's large view work under
// the guard's headers (the board drawn, the feed live) and the policy refuses
// nothing they do.
func TestPageUnderPolicy(t *testing.T) {
	b := browsertest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, ns := serveGuarded(t, web.Guard{MaxViewers: 10, MaxViewersPerAddress: 5}, zerolog.Nop())
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'self'") {
		t.Fatalf("the page's policy %q: the guard is not on", csp)
	}
	js, _ := jetstream.New(ns.Daemon())
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bus.Subjects{Prefix: bus.DefaultPrefix}.Boards()})
	if err != nil {
		t.Fatal(err)
	}
	// The board bucket the page follows, written as the history writes it.
	unit := samples.Units(t, "goscore", "goscore.in")[0]
	if _, err := kv.Put(ctx, "hall", boardValue(t, "goscore", "hall", 7, unit, time.Now())); err != nil {
		t.Fatal(err)
	}

	b.Do(t, 30*time.Second, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: violations})
		return err
	}))
	for _, path := range []string{"/", "/boards/hall"} {
		b.Do(t, 30*time.Second, chromedp.Navigate(base+path))
		b.WaitTile(t, "hall", 20*time.Second, path+": the board under the policy", func(v browsertest.Tile) bool {
			return v.Seq == 7 && v.Stones > 0
		})
		b.WaitConn(t, "live")
		if got := browsertest.Eval[[]string](t, b, `window.__refused || ["the recorder did not run"]`); len(got) != 0 {
			t.Errorf("%s: the policy refused %q", path, got)
		}
	}
}

// opens records, in every document the tab opens, when the page opened an event
// stream (performance.now(), ms).
const opens = `window.__opens = [];
window.EventSource = class extends window.EventSource {
  constructor(url, opts) { super(url, opts); window.__opens.push(performance.now()); }
};`

// TestRefusedPageBacksOff: a page turned away at the viewers' bound (503) opens its
// stream again later each time, not every second (a crowd refused would come back
// at once), and goes live once there is room.
func TestRefusedPageBacksOff(t *testing.T) {
	b := browsertest.New(t)
	base, _ := serveGuarded(t, web.Guard{MaxViewers: 1}, zerolog.Nop())
	held := openStream(t, base, "127.0.0.1", "")
	if held.StatusCode != http.StatusOK {
		t.Fatalf("the test's own stream: %d %s", held.StatusCode, bodyOf(held))
	}
	b.Do(t, 30*time.Second, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: opens})
		return err
	}))
	b.Do(t, 30*time.Second, chromedp.Navigate(base+"/"))
	// Four tries: at once, then after 1, 2 and 4 s (each at least 3/4 of it), so
	// the fourth comes 5.25 s or more after the first; every second, after 3.
	var at []float64
	deadline := time.Now().Add(60 * time.Second)
	for len(at) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("the refused page opened its stream %d times in 60 s (at %v ms), want 4", len(at), at)
		}
		at = browsertest.Eval[[]float64](t, b, `window.__opens || []`)
		time.Sleep(100 * time.Millisecond) // polling the page, not ordering anything
	}
	if gap := at[3] - at[0]; gap < 5250 {
		t.Errorf("the refused page opened its stream 4 times in %.0f ms (at %v): want 5250 ms or more, backing off", gap, at)
	}
	held.Body.Close()
	b.WaitConn(t, "live")
}
