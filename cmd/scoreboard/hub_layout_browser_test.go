package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/render"
	"github.com/goclub/scoreboard/result"
)

// hubLayoutJS measures the tiles' and the clubs' headings' rectangles, and says
// which rows of tiles hold one club only while columns are left empty beside it.
const hubLayoutJS = `(() => {
	const rect = e => { const r = e.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
	const tiles = [...document.querySelectorAll(".tile")].map(e => ({port: e.dataset.port, club: e.dataset.port.split(".")[0], ...rect(e)}));
	const heads = [...document.querySelectorAll("h2.club")].map(e => ({club: e.dataset.club, ...rect(e)}));
	return {tiles, heads, cols: +getComputedStyle(document.getElementById("tiles")).getPropertyValue("--cols"),
		width: document.documentElement.clientWidth};
})()`

type hubRect struct {
	Port, Club string
	L, T, R, B float64
}

func (a hubRect) overlaps(b hubRect) bool {
	return a.L < b.R-1 && b.L < a.R-1 && a.T < b.B-1 && b.T < a.B-1
}

// TestHubPageClubsShareRows: on a league hub's page at 1920x1080 (a TV), a club of
// one board followed by a club of four shares its row with the second club's
// tiles, instead of leaving the rest of that row empty (docs/page-hub-tv.png before);
// no tile overlaps another or a heading, and each club's heading spans its own
// tiles. Measured on the tiles' rectangles in headless Chromium.
// SCOREBOARD_SCREENSHOTS=DIR writes DIR/page-hub-1-4.png.
func TestHubPageClubsShareRows(t *testing.T) {
	b := browsertest.New(t)
	ns := bustest.Start(t, bustest.Options{JetStream: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	js, _ := jetstream.New(ns.Daemon())
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "SCOREBOARD_BOARDS"})
	if err != nil {
		t.Fatal(err)
	}
	in := samples.Read(t, "goscore.in")
	ports := []string{"club-01.table-1", "club-02.table-1", "club-02.table-2", "club-02.table-3", "club-02.table-4"}
	for i, port := range ports {
		unit, err := render.Unit("goscore", bytes.NewReader(in), i%2+1)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := engine.Lookup("goscore")
		ans, err := p.Solve(unit)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := json.Marshal(ans)
		v, _ := json.Marshal(result.Kept{
			Record: result.Record{Problem: "goscore", Port: port, Seq: uint64(i + 1), Answer: string(ans.AppendText(nil)), Result: res, Worker: "test"},
			Unit:   string(unit), Time: time.Now().Format(time.RFC3339Nano),
		})
		if _, err := kv.Put(ctx, port, v); err != nil {
			t.Fatalf("put %s: %v", port, err)
		}
	}
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	var stderr proctest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, []string{"web", "--nats-url", ns.URL(), "--http-listen", addr, "--log-format", "json"},
			stdio{strings.NewReader(""), io.Discard, &stderr})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("web did not stop")
		}
	}()
	b.Viewport(t, 1920, 1080, false)
	bustest.Wait(t, "web serving", func() (bool, string) {
		return strings.Contains(stderr.String(), `"url":"http://`+addr+`/"`), stderr.String()
	})
	b.Do(t, 30*time.Second, chromedp.Navigate("http://"+addr+"/"))
	bustest.Wait(t, "5 tiles laid out", func() (bool, string) {
		got := browsertest.Eval[[]string](t, b, `[String(document.querySelectorAll(".tile[data-seq]").length),
			document.getElementById("tiles").dataset.settled || ""]`)
		return got[0] == "5" && got[1] == "5", fmt.Sprintf("%s tiles, laid out for %q", got[0], got[1])
	})
	got := browsertest.Eval[struct {
		Tiles []hubRect `json:"tiles"`
		Heads []hubRect `json:"heads"`
		Cols  int       `json:"cols"`
		Width float64   `json:"width"`
	}](t, b, hubLayoutJS)
	if len(got.Tiles) != 5 || len(got.Heads) != 2 {
		t.Fatalf("%d tiles and %d headings, want 5 and 2: %+v", len(got.Tiles), len(got.Heads), got)
	}
	for _, r := range got.Tiles {
		t.Logf("%s: %.0f,%.0f to %.0f,%.0f", r.Port, r.L, r.T, r.R, r.B)
	}
	t.Logf("%d columns", got.Cols)
	one := got.Tiles[0]
	if one.Club != "club-01" {
		t.Fatalf("the first tile is %s, want club-01's", one.Port)
	}
	// The row of the one-board club: the other club's tiles beside it.
	beside := 0
	for _, r := range got.Tiles[1:] {
		if r.T < one.B-1 && one.T < r.B-1 {
			beside++
		}
	}
	if beside == 0 {
		t.Errorf("club-01's tile (%.0f,%.0f to %.0f,%.0f) is alone in its row of %d columns: the rest of the row is empty", one.L, one.T, one.R, one.B, got.Cols)
	}
	all := append(append([]hubRect{}, got.Tiles...), got.Heads...)
	for i, a := range all {
		for _, c := range all[i+1:] {
			if a.overlaps(c) {
				t.Errorf("%s%s overlaps %s%s", a.Port, a.Club, c.Port, c.Club)
			}
		}
		if a.L < -1 || a.R > got.Width+1 {
			t.Errorf("%s%s beyond the screen's sides: %.0f to %.0f", a.Port, a.Club, a.L, a.R)
		}
	}
	// Each club's heading is above its tiles and spans their columns.
	for _, h := range got.Heads {
		for _, r := range got.Tiles {
			if r.Club == h.Club && (r.T < h.B-1 || r.L < h.L-1 || r.R > h.R+1) {
				t.Errorf("%s (%.0f,%.0f to %.0f,%.0f) is not under its heading (%.0f,%.0f to %.0f,%.0f)", r.Port, r.L, r.T, r.R, r.B, h.L, h.T, h.R, h.B)
			}
		}
	}
	if dir := os.Getenv("SCOREBOARD_SCREENSHOTS"); dir != "" {
		b.Screenshot(t, filepath.Join(dir, "page-hub-1-4.png"))
	}
}
