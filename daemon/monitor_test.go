package daemon_test

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/promtest"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/serialio"
)

// TestMonitor follows a daemon with one port on a pty and one whose device is not
// there: it is started once both have tried their device, the status counts what the
// ports answered and failed and names the port still waiting, and it is healthy.
// /metrics shows the same counts: they are the Monitor's.
func TestMonitor(t *testing.T) {
	_, nc := startBus(t, true)
	pt := newPTY(t)
	missing := filepath.Join(t.TempDir(), "ttyUSB9")
	mon := daemon.NewMonitor()
	met := metrics.New()
	scrape := httptest.NewServer(met.Handler())
	t.Cleanup(scrape.Close)
	d := startDaemon(t, nc, daemon.Config{
		Monitor: mon,
		Metrics: met,
		Ports: []daemon.PortConfig{
			{Name: "hall", Device: pt.Path, Problem: "goscore", Line: serialio.LineSettings{Baud: 115200}},
			{Name: "lobby", Device: missing, Problem: "goscore"},
		},
	})
	bustest.Wait(t, "both ports to try their device", func() (bool, string) { return mon.Started(2), "status: " + mon.Status() })
	waitOpened(t, pt)
	bustest.Wait(t, "the hall port to count as open", func() (bool, string) {
		s := mon.Status()
		return strings.HasPrefix(s, "1 of 2 ports open"), "status: " + s
	})

	good := board(3)
	bad := strings.Replace(board(4), "+", "x", 1)
	if _, err := pt.Master.Write([]byte(good + bad + good)); err != nil {
		t.Fatal(err)
	}
	want := goscoreAnswer(t, good)
	if got := string(readN(t, pt.Master, 2*len(want))); got != want+want {
		t.Fatalf("port got %q, want %q twice", got, want)
	}
	wantStatus := "1 of 2 ports open, 2 units answered, 1 errors; waiting for lobby"
	bustest.Wait(t, "the status "+wantStatus, func() (bool, string) {
		s := mon.Status()
		return s == wantStatus, "status: " + s
	})
	if err := mon.Health(); err != nil {
		t.Errorf("Health: %v", err)
	}
	fams, body := promtest.Scrape(t, scrape.URL)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"scoreboard_units_total", map[string]string{"port": "hall", "problem": "goscore", "outcome": "answered"}, 2},
		{"scoreboard_units_total", map[string]string{"port": "hall", "problem": "goscore", "outcome": "error"}, 1},
		{"scoreboard_units_total", map[string]string{"port": "hall", "problem": "goscore", "outcome": "stopped"}, 0},
		{"scoreboard_units_total", map[string]string{"port": "lobby", "problem": "goscore", "outcome": "answered"}, 0},
		{"scoreboard_port_up", map[string]string{"port": "hall"}, 1},
		{"scoreboard_port_up", map[string]string{"port": "lobby"}, 0},
	} {
		if got, ok := promtest.Value(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v beside the status %q:\n%s", c.name, c.labels, got, ok, c.want, wantStatus, body)
		}
	}
	d.stop(t)
	if s := mon.Status(); !strings.HasPrefix(s, "0 of 2 ports open") || strings.Contains(s, "waiting") {
		t.Errorf("status after stop: %q", s)
	}
	if err := mon.Health(); err != nil {
		t.Errorf("Health after stop: %v", err)
	}
}

// TestBadUnitFloodIsSampled: a scoreboard sending hundreds of bad boards a second
// gets its warnings thinned out, never silenced: some are logged, the rest are
// counted in a "suppressed" field, and every bad board still has its error result.
func TestBadUnitFloodIsSampled(t *testing.T) {
	_, nc := startBus(t, true)
	res := results(t, nc)
	pt := newPTY(t)
	d := startDaemonLogging(t, nc, daemon.Config{
		Ports: []daemon.PortConfig{{Name: "hall", Device: pt.Path, Problem: "goscore", Line: serialio.LineSettings{Baud: 115200}}},
	}, zerolog.WarnLevel)
	waitOpened(t, pt)
	const bad = 300
	flood := strings.Repeat(strings.Replace(board(1), "+", "x", 1), bad)
	good := board(2)
	if _, err := pt.Master.Write([]byte(flood + good)); err != nil {
		t.Fatal(err)
	}
	want := goscoreAnswer(t, good)
	if got := string(readN(t, pt.Master, len(want))); got != want {
		t.Fatalf("port got %q, want %q", got, want)
	}
	errs := 0
	for errs < bad {
		select {
		case r := <-res:
			if r.Error != "" {
				errs++
			}
		case <-time.After(long):
			t.Fatalf("%d error results of %d", errs, bad)
		}
	}
	logged := d.logs.count(map[string]any{"message": "bad unit"})
	if logged == 0 || logged >= bad/2 {
		t.Errorf("%d of %d bad units logged, want some but far fewer", logged, bad)
	}
	t.Logf("%d of %d bad-unit warnings logged", logged, bad)
}
