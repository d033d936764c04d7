// Package promtest checks Prometheus metrics in tests: scrapes an endpoint, reads its
// samples, and runs promtool.
package promtest

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Promtool runs Prometheus's promtool with args and stdin, and fails the test with
// its output unless it exits 0. Without promtool the test is skipped, except in CI
// (CI=true), where it fails: .ci/run installs Debian's prometheus package.
func Promtool(t testing.TB, stdin []byte, args ...string) {
	t.Helper()
	exe, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed (apt-get install prometheus): the metrics checks must run in CI")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
}

// Scrape fetches url and parses it; the body is returned for promtool.
func Scrape(t testing.TB, url string) (map[string]*dto.MetricFamily, []byte) {
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
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse %s: %v\n%s", url, err, body)
	}
	return fams, body
}

// Value is the value of the sample of family name with exactly labels (a
// histogram's count), and whether there is one.
func Value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
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
