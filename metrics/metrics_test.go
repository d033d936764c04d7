package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/goclub/scoreboard/internal/promtest"
	"github.com/goclub/scoreboard/metrics"
)

func TestCountsServedBesidePage(t *testing.T) {
	m := metrics.New()
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })
	srv := httptest.NewServer(m.Beside(page))
	defer srv.Close()

	lobby := m.Port("lobby")
	for range 5 {
		lobby.Took(0.002)
	}
	lobby.Retry()
	m.Port("hall") // resolved, no unit yet: everything at 0
	// The units and ports are their owner's counts (the daemon's Monitor).
	m.Ports(func() []metrics.PortCounts {
		return []metrics.PortCounts{
			{Port: "lobby", Problem: "goscore", Answered: 3, Failed: 1, Stopped: 1, Up: true},
			{Port: "hall", Problem: "othello"},
		}
	})
	solve := m.Solve([]string{"goscore", "othello"})
	solve.Observe("goscore", 0.0001)
	solve.Observe("nosuch", 1) // not resolved: not counted, no panic
	pending := 7.0
	m.Gauge("scoreboard_history_pending", "test", func() float64 { return pending })

	fams, body := promtest.Scrape(t, srv.URL+metrics.Path)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"scoreboard_units_total", map[string]string{"port": "lobby", "problem": "goscore", "outcome": "answered"}, 3},
		{"scoreboard_units_total", map[string]string{"port": "lobby", "problem": "goscore", "outcome": "error"}, 1},
		{"scoreboard_units_total", map[string]string{"port": "lobby", "problem": "goscore", "outcome": "stopped"}, 1},
		{"scoreboard_units_total", map[string]string{"port": "hall", "problem": "othello", "outcome": "error"}, 0},
		{"scoreboard_units_total", map[string]string{"port": "hall", "problem": "othello", "outcome": "stopped"}, 0},
		{"scoreboard_unit_seconds", map[string]string{"port": "lobby"}, 5},
		{"scoreboard_retries_total", map[string]string{"port": "lobby"}, 1},
		{"scoreboard_retries_total", map[string]string{"port": "hall"}, 0},
		{"scoreboard_port_up", map[string]string{"port": "lobby"}, 1},
		{"scoreboard_port_up", map[string]string{"port": "hall"}, 0},
		{"scoreboard_solve_seconds", map[string]string{"problem": "goscore"}, 1},
		{"scoreboard_solve_seconds", map[string]string{"problem": "othello"}, 0},
		{"scoreboard_history_pending", map[string]string{}, 7},
	} {
		if got, ok := promtest.Value(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}
	if _, ok := promtest.Value(fams, "scoreboard_solve_seconds", map[string]string{"problem": "nosuch"}); ok {
		t.Error("a problem never resolved has a histogram")
	}
	promtest.Promtool(t, body, "check", "metrics")

	// The page is still the page.
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "page" {
		t.Errorf("GET / = %q, want the page", b)
	}
}

// A unit's counting allocates nothing: the port's and the problem's children are
// resolved once.
func TestHotPathAllocatesNothing(t *testing.T) {
	m := metrics.New()
	p := m.Port("lobby")
	s := m.Solve([]string{"goscore"})
	if n := testing.AllocsPerRun(1000, func() {
		p.Took(0.001)
		p.Retry()
		s.Observe("goscore", 0.0001)
	}); n != 0 {
		t.Errorf("%v allocations per unit, want 0", n)
	}
	var none *metrics.Metrics // a process without metrics
	none.Port("x").Took(1)
	none.Ports(nil)
	none.Solve([]string{"goscore"}).Observe("goscore", 1)
	none.Gauge("x", "x", func() float64 { return 0 })
}

// The example alert rules in configs/ load, and fire when they should
// (configs/scoreboard.rules.test.yml).
func TestAlertRules(t *testing.T) {
	rules := filepath.Join("..", "configs", "scoreboard.rules.yml")
	promtest.Promtool(t, nil, "check", "rules", rules)
	promtest.Promtool(t, nil, "test", "rules", filepath.Join("..", "configs", "scoreboard.rules.test.yml"))
}
