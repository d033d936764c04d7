package main

import (
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/promtest"
)

// metricsWant is one sample a scrape must hold.
type metricsWant struct {
	name   string
	labels map[string]string
	want   float64
}

// checkMetrics fails the test for each sample of want that fams does not hold.
func checkMetrics(t *testing.T, fams map[string]*dto.MetricFamily, want []metricsWant, output string) {
	t.Helper()
	bad := false
	for _, c := range want {
		if got, ok := promtest.Value(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
			bad = true
		}
	}
	if bad {
		t.Logf("output:\n%s", output)
	}
}

// scrapeUntil scrapes url until ok holds of it, or fails after a generous bound.
func scrapeUntil(t *testing.T, url string, ok func(map[string]*dto.MetricFamily) bool) (map[string]*dto.MetricFamily, []byte) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		fams, body := promtest.Scrape(t, url)
		if ok(fams) || time.Now().After(deadline) {
			return fams, body
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A real 'scoreboard run' on a pseudo-terminal, with its history on: after units
// and a bad one flowed through the port, /metrics beside the page counts each of
// them, the port is up, the bus connected, and promtool takes the scrape.
func TestRunMetrics(t *testing.T) {
	pt := runPTY(t)
	httpAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	p := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", "off", "--state-dir", t.TempDir(),
		"--http", httpAddr, "--port", pt.Path, "--port-name", "lobby", "--problem", "replay", "--error-line")
	runWaitOpened(t, pt, p)
	proctest.WaitTCP(t, httpAddr, 30*time.Second)

	const good = 7
	unit := "5 1\nB(0,0)\n"
	answer := runSolve1(t, "replay", unit+"0 0\n")
	if _, err := pt.Master.Write([]byte(strings.Repeat(unit, good))); err != nil {
		t.Fatal(err)
	}
	runReadAnswers(t, pt, good*len(answer), p)
	if _, err := pt.Master.Write([]byte("2 1\nB(9,9)\n")); err != nil { // 2 is below the smallest board
		t.Fatal(err)
	}
	runReadAnswers(t, pt, len("error: replay: line "), p)

	url := "http://" + httpAddr + "/metrics"
	errors := map[string]string{"port": "lobby", "problem": "replay", "outcome": "error"}
	fams, body := scrapeUntil(t, url, func(fams map[string]*dto.MetricFamily) bool {
		n, _ := promtest.Value(fams, "scoreboard_units_total", errors)
		return n == 1
	})
	checkMetrics(t, fams, []metricsWant{
		{"scoreboard_units_total", map[string]string{"port": "lobby", "problem": "replay", "outcome": "answered"}, good},
		{"scoreboard_units_total", errors, 1},
		{"scoreboard_unit_seconds", map[string]string{"port": "lobby"}, good + 1},
		{"scoreboard_solve_seconds", map[string]string{"problem": "replay"}, good + 1},
		{"scoreboard_retries_total", map[string]string{"port": "lobby"}, 0},
		{"scoreboard_port_up", map[string]string{"port": "lobby"}, 1},
		{"scoreboard_nats_connected", map[string]string{}, 1},
	}, p.Output())
	// The bucket keeps up with 8 units: what it has not taken drains to 0.
	pending := func(fams map[string]*dto.MetricFamily) bool {
		n, ok := promtest.Value(fams, "scoreboard_history_pending", map[string]string{})
		return ok && n == 0
	}
	if fams, _ := scrapeUntil(t, url, pending); !pending(fams) {
		n, ok := promtest.Value(fams, "scoreboard_history_pending", map[string]string{})
		t.Errorf("scoreboard_history_pending = %v (present %v), want 0 once the bucket took every result", n, ok)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}
	promtest.Promtool(t, body, "check", "metrics")
	if err := p.Stop(); err != nil {
		t.Fatalf("after SIGTERM: %v; output:\n%s", err, p.Output())
	}
}

// 'scoreboard work --http' serves its own /metrics: the solve times of the dumps it
// solved, and its bus connection.
func TestWorkMetrics(t *testing.T) {
	srv := proctest.StartNATS(t, proctest.NATSOptions{})
	httpAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	w := proctest.Start(t, proctest.Scoreboard(t), "work", "--nats-url", srv.URL(), "--http", httpAddr)
	w.WaitOutput("scoreboard worker running", 60*time.Second)
	proctest.WaitTCP(t, httpAddr, 30*time.Second)

	const units = 5
	in := strings.Repeat("5 1\nB(0,0)\n", units) + "0 0\n"
	if code, _, errs := runCmd(t, in, "send", "--nats-url", srv.URL(), "replay"); code != 0 {
		t.Fatalf("send: exit %d: %s", code, errs)
	}
	fams, body := scrapeUntil(t, "http://"+httpAddr+"/metrics", func(fams map[string]*dto.MetricFamily) bool {
		n, _ := promtest.Value(fams, "scoreboard_solve_seconds", map[string]string{"problem": "replay"})
		return n == units
	})
	checkMetrics(t, fams, []metricsWant{
		{"scoreboard_solve_seconds", map[string]string{"problem": "replay"}, units},
		{"scoreboard_nats_connected", map[string]string{}, 1},
	}, w.Output())
	if fams["scoreboard_units_total"] != nil && len(fams["scoreboard_units_total"].Metric) > 0 {
		t.Error("a worker without ports counts port units")
	}
	// One version string: the logs', the service's ($SRV.INFO) and /metrics' agree.
	logged := logLines(w.Output(), "scoreboard worker running")
	nc := busConnect(t, srv.URL())
	info, err := nc.Request("$SRV.INFO.scoreboard", nil, 10*time.Second)
	var svc struct{ Version string }
	if err == nil {
		err = json.Unmarshal(info.Data, &svc)
	}
	build := map[string]string{"version": svc.Version, "goversion": runtime.Version()}
	if f := fams["scoreboard_build_info"]; f != nil && len(f.Metric) == 1 {
		for _, l := range f.Metric[0].Label {
			if l.GetName() == "commit" {
				build["commit"] = l.GetValue() // the build's vcs.revision where Go stamps one
			}
		}
	}
	if v, ok := promtest.Value(fams, "scoreboard_build_info", build); err != nil || len(logged) != 1 ||
		logged[0]["version"] != svc.Version || svc.Version != "0.0.0-dev" || !ok || v != 1 {
		t.Errorf("versions: logged %v, $SRV.INFO %q (%v), /metrics scoreboard_build_info%v = %v (%v); want one, 0.0.0-dev",
			logged, svc.Version, err, build, v, ok)
	}
	promtest.Promtool(t, body, "check", "metrics")
	if err := w.Stop(); err != nil {
		t.Fatalf("after SIGTERM: %v; output:\n%s", err, w.Output())
	}
}
