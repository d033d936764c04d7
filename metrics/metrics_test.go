package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/metrics"
)

// scrape fetches url and parses it; the body is returned for promtool.
func scrape(t *testing.T, url string) (map[string]*dto.MetricFamily, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", url, resp.StatusCode, err, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse %s: %v\n%s", url, err, body)
	}
	return fams, body
}

// value is the value of the sample of family name with exactly labels (a
// histogram's count), and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	fam := fams[name]
	if fam == nil {
		return 0, false
	}
next:
	for _, m := range fam.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		for _, l := range m.Label {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestCountsServedBesidePage(t *testing.T) {
	m := metrics.New()
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })
	srv := httptest.NewServer(m.Beside(page))
	defer srv.Close()

	lobby := m.Port("lobby", "goscore")
	for range 3 {
		lobby.Outcome(false, 0.002)
	}
	lobby.Outcome(true, 0.5)
	lobby.Retry()
	lobby.Up(true)
	m.Port("hall", "othello") // resolved, no unit yet: everything at 0
	solve := m.Solve([]string{"goscore", "othello"})
	solve.Observe("goscore", 0.0001)
	solve.Observe("nosuch", 1) // not resolved: not counted, no panic
	pending := 7.0
	m.Gauge("scoreboard_history_pending", "test", func() float64 { return pending })

	fams, body := scrape(t, srv.URL+metrics.Path)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"scoreboard_units_total", map[string]string{"port": "lobby", "problem": "goscore", "outcome": "answered"}, 3},
		{"scoreboard_units_total", map[string]string{"port": "lobby", "problem": "goscore", "outcome": "error"}, 1},
		{"scoreboard_units_total", map[string]string{"port": "hall", "problem": "othello", "outcome": "error"}, 0},
		{"scoreboard_unit_seconds", map[string]string{"port": "lobby"}, 4},
		{"scoreboard_retries_total", map[string]string{"port": "lobby"}, 1},
		{"scoreboard_retries_total", map[string]string{"port": "hall"}, 0},
		{"scoreboard_port_up", map[string]string{"port": "lobby"}, 1},
		{"scoreboard_port_up", map[string]string{"port": "hall"}, 0},
		{"scoreboard_solve_seconds", map[string]string{"problem": "goscore"}, 1},
		{"scoreboard_solve_seconds", map[string]string{"problem": "othello"}, 0},
		{"scoreboard_history_pending", map[string]string{}, 7},
	} {
		if got, ok := value(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}
	if _, ok := value(fams, "scoreboard_solve_seconds", map[string]string{"problem": "nosuch"}); ok {
		t.Error("a problem never resolved has a histogram")
	}
	proctest.Promtool(t, body, "check", "metrics")

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
	p := m.Port("lobby", "goscore")
	s := m.Solve([]string{"goscore"})
	if n := testing.AllocsPerRun(1000, func() {
		p.Outcome(false, 0.001)
		p.Retry()
		s.Observe("goscore", 0.0001)
	}); n != 0 {
		t.Errorf("%v allocations per unit, want 0", n)
	}
	var none *metrics.Metrics // a process without metrics
	none.Port("x", "goscore").Outcome(true, 1)
	none.Solve([]string{"goscore"}).Observe("goscore", 1)
	none.Gauge("x", "x", func() float64 { return 0 })
}

// The example alert rules in configs/ load, and fire when they should
// (configs/scoreboard.rules.test.yml).
func TestAlertRules(t *testing.T) {
	rules := filepath.Join("..", "configs", "scoreboard.rules.yml")
	proctest.Promtool(t, nil, "check", "rules", rules)
	proctest.Promtool(t, nil, "test", "rules", filepath.Join("..", "configs", "scoreboard.rules.test.yml"))
}
