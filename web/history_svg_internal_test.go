package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/render"
)

// historyOf is /api/history's items of port.
func historyOf(t *testing.T, base, port string) []HistoryItem {
	t.Helper()
	code, body := httpGet(t, base+"/api/history?port="+port)
	var items []HistoryItem
	if err := json.Unmarshal([]byte(body), &items); code != 200 || err != nil {
		t.Fatalf("/api/history?port=%s: %d %q: %v", port, code, body, err)
	}
	return items
}

// TestHistoryPictureOfItsStream: a history started again from a new state
// directory numbers its messages from 1 again, and its first unit's picture gets
// another address than the old history's first, which no longer shows a picture;
// so a browser or a proxy that keeps an address for a year never shows the old
// picture for the new unit. An address without the stream's name (an old page's)
// still answers, the current stream's picture, but is not kept.
func TestHistoryPictureOfItsStream(t *testing.T) {
	p := startHistoryPage(t, pageTimeouts, nil)
	p.units(t, "hall", 1, 1, 20)
	old := historyOf(t, p.base, "hall")
	if len(old) != 1 || old[0].StreamSeq != 1 || old[0].SVG == "" {
		t.Fatalf("the first history: %+v, want unit 1 at stream seq 1 with a picture", old)
	}
	code, oldSVG := httpGet(t, p.base+old[0].SVG)
	if code != 200 {
		t.Fatalf("%s: %d %q", old[0].SVG, code, oldSVG)
	}

	// A new state directory: the stream made anew, its numbers from 1 again.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.js.DeleteStream(ctx, p.subj.Stream()); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Setup(ctx, p.js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	p.units(t, "hall", 5, 1, 20)
	now := historyOf(t, p.base, "hall")
	if len(now) != 1 || now[0].StreamSeq != 1 || now[0].SVG == "" {
		t.Fatalf("the new history: %+v, want unit 5 at stream seq 1 with a picture", now)
	}
	if now[0].SVG == old[0].SVG {
		t.Fatalf("the new stream's seq 1 has the old one's address %s", now[0].SVG)
	}
	unit, _ := faulttest.GoscoreBoard(5)
	want, err := render.SVG("goscore", []byte(unit))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(p.base + now[0].SVG)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code, body := httpGet(t, p.base+now[0].SVG); code != 200 || body != string(want) || resp.Header.Get("Cache-Control") != immutable {
		t.Errorf("%s: %d, %d bytes, Cache-Control %q; want 200, the new unit's picture, kept for good", now[0].SVG, code, len(body), resp.Header.Get("Cache-Control"))
	}
	if code, body := httpGet(t, p.base+old[0].SVG); code != 404 || body == oldSVG || body == string(want) {
		t.Errorf("the old stream's %s: %d, %d bytes; want a 404, no picture", old[0].SVG, code, len(body))
	}
	// An old page's address, without the stream's name: the current picture, asked
	// again each time.
	resp, err = http.Get(p.base + "/history/1.svg")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cc := resp.Header.Get("Cache-Control"); resp.StatusCode != 200 || strings.Contains(cc, "immutable") || !strings.Contains(cc, "no-cache") {
		t.Errorf("/history/1.svg: %s, Cache-Control %q; want 200, no-cache", resp.Status, cc)
	}
}

// TestHistoryPictureGated: /history/<seq>.svg (a stream info, a get and a draw)
// takes a turn of the page's history reads, as /api/history does: while every
// turn is taken, it is refused as busy after its wait, and served once one is free.
func TestHistoryPictureGated(t *testing.T) {
	p := startHistoryPage(t, pageTimeouts, nil)
	p.units(t, "hall", 1, 1, 20)
	items := historyOf(t, p.base, "hall")
	if len(items) != 1 || items[0].SVG == "" {
		t.Fatalf("history: %+v, want one unit with a picture", items)
	}
	var leaves []func()
	for range cap(historyReads.slots) {
		leave, err := historyReads.enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, leave)
	}
	code, body := httpGet(t, p.base+items[0].SVG)
	for _, leave := range leaves {
		leave()
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "busy") {
		t.Errorf("%s while the %d history reads are taken: %d %q; want 503, busy", items[0].SVG, len(leaves), code, body)
	}
	if code, body := httpGet(t, p.base+items[0].SVG); code != 200 {
		t.Errorf("%s once free: %d %q", items[0].SVG, code, body)
	}
	_, most, bound := HistoryReads()
	t.Log(fmt.Sprintf("history reads: %d at most, bound %d", most, bound))
}
