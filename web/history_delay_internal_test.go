package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
)

// TestDelayedHistoryReadsTheTail: a delayed page's /api/history reads the
// stream's tail at the delay's cutoff, not the whole stream, counted in the
// messages the page's own connection takes in for it (a few windows of the last
// units, of 6,000 messages); and a since beyond its bound is a 400 that names the
// parameter and its range, not a read of everything.
func TestDelayedHistoryReadsTheTail(t *testing.T) {
	const delay = time.Second
	p := startHistoryPage(t, pageTimeouts, func(s *Server) { s.WithDelays(NewDelays(delay, nil)) })
	const units = 3000
	p.units(t, "hall", 1, units, 20)
	stored := time.Now()
	bustest.Wait(t, "the units older than the delay", func() (bool, string) {
		return time.Since(stored) > delay, fmt.Sprintf("%v since they were stored", time.Since(stored))
	})

	code, body := httpGet(t, p.base+"/api/history?port=hall&since=100000h")
	if code != 400 || !strings.Contains(body, "since=") || !strings.Contains(body, historyMaxSince.String()) {
		t.Errorf("since=100000h: %d %q, want 400 naming since= and its bound %v", code, body, historyMaxSince)
	}
	for _, since := range []string{"", "&since=" + historyMaxSince.String()} {
		before := p.nc.Stats().InMsgs
		code, body := httpGet(t, p.base+"/api/history?port=hall&limit=10"+since)
		read := p.nc.Stats().InMsgs - before
		var items []HistoryItem
		if err := json.Unmarshal([]byte(body), &items); code != 200 || err != nil {
			t.Fatalf("since %q: %d %q: %v", since, code, body, err)
		}
		if len(items) != 10 || items[0].Seq != units-9 || items[9].Seq != units {
			t.Errorf("since %q: %d units from %v, want the last 10 (%d to %d)", since, len(items), items[0].Seq, units-9, units)
		}
		// The first window is 2*10+64 messages of the port's; the tail settles in
		// it or the next.
		if read > 500 {
			t.Errorf("since %q: the page took in %d messages for the last 10 units of %d messages; want the tail's few hundred at most", since, read, 2*units)
		}
		t.Logf("since %q: %d messages taken in for the last 10 units", since, read)
	}
}
