package league_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/promtest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/web"
)

// servePage opens and serves the hub's page as p says, until the returned stop.
func servePage(t *testing.T, h *league.Hub, p league.Page) (*league.PageServer, func()) {
	t.Helper()
	ps, err := h.OpenPage(p, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = ps.Serve(ctx, func() (*web.Server, error) { return web.New(h.Conn(), league.SubjectPrefix, testLog(t)) })
	}()
	return ps, func() { cancel(); wg.Wait(); ps.Close() }
}

// get GETs url: its status and body, or 0 when nothing answers.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func waitPage(t *testing.T, base string) {
	t.Helper()
	bustest.Wait(t, "the league page", func() (bool, string) {
		n, body := get(t, base+"/")
		return n == http.StatusOK, fmt.Sprintf("GET / : %d %s", n, body)
	})
}

// TestLeaguePageGuard: the hub's page (league.Start's hub) with league.metrics
// on a listener of its own serves /metrics there (promtool takes it) and 404 on
// the page's; with "off", none anywhere, and with the page off the metrics are
// still served. The guard is the league's: its bound per address answers 429
// naming league.max_viewers_per_address, and its embed origins frame /embed/.
// A taken metrics address is an error naming league.metrics.
func TestLeaguePageGuard(t *testing.T) {
	h := startHub(t)
	own := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	guard := web.Guard{Table: "league", MaxViewers: 10, MaxViewersPerAddress: 1, EmbedOrigins: "https://league.example.org"}

	ps, stop := servePage(t, h, league.Page{Listen: "127.0.0.1:0", Metrics: own, Guard: guard})
	page := "http://" + ps.PageAddr()
	waitPage(t, page)
	fams, body := promtest.Scrape(t, "http://"+own+"/metrics")
	if fams["scoreboard_league_clubs_linked"] == nil || fams["scoreboard_page_viewers"] == nil {
		t.Errorf("the hub's /metrics lacks scoreboard_league_clubs_linked or scoreboard_page_viewers:\n%s", body)
	}
	promtest.Promtool(t, body, "check", "metrics")
	if n, _ := get(t, page+"/metrics"); n != http.StatusNotFound {
		t.Errorf("GET /metrics on the league page's listener, with the metrics on their own: %d, want 404", n)
	}
	// The league's bound: one stream from this address, the second refused.
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: 20 * time.Second}}
	first, err := c.Get(page + "/api/events")
	if err != nil || first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream: %v %v", first, err)
	}
	defer first.Body.Close()
	if n, body := get(t, page+"/api/events"); n != http.StatusTooManyRequests || !strings.Contains(body, "league.max_viewers_per_address") {
		t.Errorf("the second stream from one address: %d %q, want 429 naming league.max_viewers_per_address", n, body)
	}
	resp, err := http.Get(page + "/embed/north.hall")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors 'self' https://league.example.org") {
		t.Errorf("/embed/'s policy on the hub: %q, want the league's embed origin in frame-ancestors", csp)
	}
	first.Body.Close()
	stop()

	// Off: no /metrics on the page, and no listener of their own.
	ps, stop = servePage(t, h, league.Page{Listen: "127.0.0.1:0", Metrics: "off", Guard: guard})
	page = "http://" + ps.PageAddr()
	waitPage(t, page)
	if n, _ := get(t, page+"/metrics"); n != http.StatusNotFound {
		t.Errorf("GET /metrics with league.metrics off: %d, want 404", n)
	}
	if ps.MetricsAddr() != "" {
		t.Errorf("league.metrics off has a listener, %s", ps.MetricsAddr())
	}
	stop()

	// The page off, the metrics on their own.
	ps, stop = servePage(t, h, league.Page{Listen: "off", Metrics: own, Guard: guard})
	if ps.PageAddr() != "" {
		t.Errorf("league.http off has a listener, %s", ps.PageAddr())
	}
	if fams, body := promtest.Scrape(t, "http://"+own+"/metrics"); fams["scoreboard_league_clubs_linked"] == nil {
		t.Errorf("the hub's /metrics with the page off lacks scoreboard_league_clubs_linked:\n%s", body)
	}
	stop()

	// A taken address.
	taken, err := net.Listen("tcp", own)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if ps, err := h.OpenPage(league.Page{Listen: "127.0.0.1:0", Metrics: own, Guard: guard}, testLog(t)); err == nil {
		ps.Close()
		t.Fatal("the hub's page opened with its metrics' address taken")
	} else if !strings.Contains(err.Error(), "league.metrics: the metrics' address "+own+" is taken") {
		t.Errorf("OpenPage's error %q: want it to name league.metrics and the address", err)
	}
}
