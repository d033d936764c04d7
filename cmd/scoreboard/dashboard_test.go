package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// dashboardPanel is a panel of a Grafana dashboard, as far as the test reads it.
type dashboardPanel struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Targets     []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []dashboardPanel `json:"panels"` // a collapsed row's
}

type dashboard struct {
	Title  string           `json:"title"`
	Panels []dashboardPanel `json:"panels"`
	Links  []struct {
		Title, URL, Tooltip string
	} `json:"links"`
}

// readDashboard reads a dashboard of configs/ and its panels, rows' too.
func readDashboard(t *testing.T, name string) (dashboard, []dashboardPanel) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../configs", name))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("configs/%s: %v", name, err)
	}
	var all []dashboardPanel
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			all = append(all, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return d, all
}

// promQuery asks Prometheus's HTTP API at base for expr, now: the result's series
// and how many of them have a number (not NaN).
func promQuery(base, expr string) (series, numbers int, err error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Status, Error string
		Data          struct {
			ResultType string
			Result     []struct {
				Value []any
			}
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", b, err)
	}
	if r.Status != "success" {
		return 0, 0, fmt.Errorf("%s: %s", r.Status, r.Error)
	}
	for _, s := range r.Data.Result {
		if len(s.Value) == 2 {
			if v, err := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64); err == nil && !math.IsNaN(v) {
				numbers++
			}
		}
	}
	return len(r.Data.Result), numbers, nil
}

// Issue 44: the dashboards of configs/ (grafana-club.json, grafana-hub.json) against
// a real Prometheus (Debian's) scraping a real daemon, a club of a real hub, with
// units flowing through its pty port: every panel's every query returns series, at
// least one of them a number; the alert rules (configs/scoreboard.rules.yml) load
// in that Prometheus, and the club's dashboard names each of them.
func TestDashboards(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is not installed (apt-get install prometheus): the dashboards' test must run in CI")
		}
		t.Skip("prometheus is not installed (apt-get install prometheus)")
	}
	bin := proctest.Scoreboard(t)
	root := t.TempDir()

	// The hub, with the club north.
	hubHTTP, leaf := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t)), fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	hubConf := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(hubConf, fmt.Appendf(nil, "[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = %q\nhttp = %q\nstate_dir = %q\n[[club]]\nname = \"north\"\ntoken = \"tn\"\n",
		proctest.FreePort(t), leaf, hubHTTP, filepath.Join(root, "hub")), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", hubConf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)

	// The club's daemon, a pty port, joined to the hub.
	pt := runPTY(t)
	clubHTTP := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	run := proctest.Start(t, bin, "run", "--nats-listen", "off", "--daemon-state-dir", filepath.Join(root, "club"), "--http-listen", clubHTTP,
		"--port-device", pt.Path, "--port-problem", "goscore", "--port-name", "hall",
		"--hub-url", "nats-leaf://"+leaf, "--hub-club", "north", "--hub-token", "tn", "--log-format", "json")
	runWaitOpened(t, pt, run)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // answers, drained
		b := make([]byte, 4096)
		for {
			if _, err := pt.Master.Read(b); err != nil {
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
	}()
	go func() { // a unit every 200 ms until the end: the rates are live
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			u, _ := faulttest.GoscoreBoard(k)
			pt.Master.WriteString(u)
		}
	}()

	// Prometheus, scraping both every second, with the alert rules.
	rules, err := filepath.Abs("../../configs/scoreboard.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	promConf := filepath.Join(root, "prometheus.yml")
	if err := os.WriteFile(promConf, fmt.Appendf(nil, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: scoreboard
    static_configs: [{targets: [%q]}]
  - job_name: scoreboard-hub
    static_configs: [{targets: [%q]}]
`, rules, clubHTTP, hubHTTP), 0o600); err != nil {
		t.Fatal(err)
	}
	p := proctest.Start(t, prom, "--config.file", promConf, "--storage.tsdb.path", filepath.Join(root, "tsdb"),
		"--web.listen-address", promAddr, "--log.level", "warn")
	base := "http://" + promAddr
	bustest.WaitWithin(t, 60*time.Second, "Prometheus scraping the club and the hub, the club linked, its units flowing", func() (bool, string) {
		select {
		case <-p.Done():
			t.Fatalf("prometheus exited: %v\n%s", p.Err(), p.Output())
		default:
		}
		up, _, err := promQuery(base, "up == 1")
		if err != nil {
			return false, err.Error()
		}
		linked, _, _ := promQuery(base, "scoreboard_hub_link_up == 1 and on() scoreboard_league_clubs_linked == 1")
		flowing, _, _ := promQuery(base, `sum(rate(scoreboard_units_total{outcome="answered"}[30s])) > 0`)
		// A rate needs two samples of its target: each target scraped three times
		// at least (the hub's first scrape may come well after the club's).
		scraped, _, _ := promQuery(base, "count_over_time(up[30s]) >= 3")
		return up == 2 && linked == 1 && flowing == 1 && scraped == 2, fmt.Sprintf("%d of 2 targets up; club linked %v; units flowing %v; %d of 2 targets scraped 3 times", up, linked == 1, flowing == 1, scraped)
	})

	for _, c := range []struct{ file, instance string }{{"grafana-club.json", clubHTTP}, {"grafana-hub.json", hubHTTP}} {
		d, panels := readDashboard(t, c.file)
		queries, empty := 0, 0
		for _, pn := range panels {
			for _, tg := range pn.Targets {
				// Grafana's variables, as it fills them in for this instance: a
				// regular expression in a PromQL string, its backslashes doubled.
				inst := strings.ReplaceAll(regexp.QuoteMeta(c.instance), `\`, `\\`)
				expr := strings.NewReplacer("$__rate_interval", "30s", "$instance", inst).Replace(tg.Expr)
				queries++
				series, numbers, err := promQuery(base, expr)
				switch {
				case err != nil:
					empty++
					t.Errorf("%s, panel %q: %s: %v", c.file, pn.Title, expr, err)
				case series == 0 || numbers == 0:
					empty++
					t.Errorf("%s, panel %q: %s: %d series, %d with a number: no data", c.file, pn.Title, expr, series, numbers)
				}
			}
			if pn.Type != "row" && pn.Type != "alertlist" && len(pn.Targets) == 0 {
				t.Errorf("%s, panel %q: no query", c.file, pn.Title)
			}
		}
		t.Logf("%s (%q): %d panels, %d queries, %d of them without data", c.file, d.Title, len(panels), queries, empty)
		if len(d.Links) == 0 || !strings.Contains(d.Links[0].URL, "/alerting/list") {
			t.Errorf("%s: its first link is not the alert rules' list: %+v", c.file, d.Links)
		}
	}

	// The rules loaded, each healthy, and each named on the club's dashboard.
	resp, err := http.Get(base + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct{ Name, Health string }
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	club, _ := os.ReadFile("../../configs/grafana-club.json")
	n := 0
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			n++
			if rule.Health == "err" {
				t.Errorf("rule %s: health %s in Prometheus", rule.Name, rule.Health)
			}
			if !strings.Contains(string(club), rule.Name) {
				t.Errorf("alert %s (configs/scoreboard.rules.yml) is not named on the club's dashboard", rule.Name)
			}
		}
	}
	if n == 0 {
		t.Errorf("Prometheus loaded no rule from %s", rules)
	}
}
