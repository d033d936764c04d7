// Package metrics owns the daemons' Prometheus registry: what run and work count,
// and the handler that serves it on /metrics.
//
// The actors count through handles resolved once (a port's, a problem's), so that a
// unit costs a few atomic adds and no label lookup or allocation. Every method is safe
// on a nil *Metrics and on nil handles: a process without metrics passes nil.
package metrics

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served on the HTTP listener.
const Path = "/metrics"

// Outcomes of a unit, the values of the outcome label.
const (
	Answered = "answered"
	Error    = "error"
	// Stopped is a unit still unanswered when the daemon's drain bound ended.
	Stopped = "stopped"
	// Dropped is a unit whose answer was never written: its device went away.
	Dropped = "dropped"
)

// Metrics is one process's registry and its metric families.
type Metrics struct {
	reg         *prometheus.Registry
	ports       portsCollector
	unitSeconds *prometheus.HistogramVec
	solve       *prometheus.HistogramVec
	retries     *prometheus.CounterVec
}

// New returns a registry with the Go and process collectors and the scoreboard's
// families; ports and problems appear as they are resolved.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		unitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "scoreboard_unit_seconds",
			Help: "Time from a unit read on a port to its outcome, ready to be written back.",
			// From a fraction of a millisecond (a board on a local worker) to the
			// request timeout's attempts.
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"port"}),
		solve: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scoreboard_solve_seconds",
			Help:    "Time a worker of this process took to solve one dump.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 4, 10),
		}, []string{"problem"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scoreboard_retries_total",
			Help: "Dumps a port published again because no worker answered in time.",
		}, []string{"port"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&m.ports, m.unitSeconds, m.solve, m.retries,
	)
	return m
}

// Handler serves the registry in the exposition format.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Gauge registers a gauge read from f at each scrape (scoreboard_nats_connected,
// scoreboard_history_pending): the value is the owner's, not a copy to keep in step.
func (m *Metrics) Gauge(name, help string, f func() float64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// Flag registers a gauge of 1 while f says true, 0 while false
// (scoreboard_hub_link_up).
func (m *Metrics) Flag(name, help string, f func() bool) {
	m.Gauge(name, help, func() float64 {
		if f() {
			return 1
		}
		return 0
	})
}

// BusConnected registers scoreboard_nats_connected, read from connected at each
// scrape: run and work both have it, under one name and help.
func (m *Metrics) BusConnected(connected func() bool) {
	m.Flag("scoreboard_nats_connected", "1 while every bus connection of this process is connected, 0 while one is reconnecting.", connected)
}

// Info registers a gauge of 1 whose labels say what (scoreboard_build_info: the
// version, the commit, the Go version).
func (m *Metrics) Info(name, help string, labels map[string]string) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels},
		func() float64 { return 1 }))
}

// Counter registers a counter read from f at each scrape
// (scoreboard_history_units_not_stored_total): the count is the owner's.
func (m *Metrics) Counter(name, help string, f func() float64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
}

// Labeled is one series of a family read at each scrape: its label values, in the
// family's order, and its value.
type Labeled struct {
	Values []string
	Value  float64
}

// Counters registers a family of counters read from f at each scrape, one series
// per Labeled it returns (scoreboard_league_junk_total{club,reason}): the counts
// are the owner's.
func (m *Metrics) Counters(name, help string, labels []string, f func() []Labeled) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&labeledCollector{desc: prometheus.NewDesc(name, help, labels, nil), f: f})
}

type labeledCollector struct {
	desc *prometheus.Desc
	f    func() []Labeled
}

func (c *labeledCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *labeledCollector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.f() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, l.Value, l.Values...)
	}
}

// Port is a port's histogram and retries, resolved once. Its units' outcomes and
// whether it is up are the daemon's Monitor's counts (Ports).
type Port struct {
	seconds prometheus.Observer
	retries prometheus.Counter
}

// Port resolves the port's children. The retries appear at 0 at once, so that a
// rate over them exists before the first one.
func (m *Metrics) Port(port string) *Port {
	if m == nil {
		return nil
	}
	return &Port{seconds: m.unitSeconds.WithLabelValues(port), retries: m.retries.WithLabelValues(port)}
}

// Forget drops every series of a port a reload removed: a port_up of 0 kept for it
// would page someone forever.
func (m *Metrics) Forget(port string) {
	if m == nil {
		return
	}
	for _, v := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{m.unitSeconds, m.retries} {
		v.DeletePartialMatch(prometheus.Labels{"port": port})
	}
}

// Took records the seconds from a unit read to its outcome.
func (p *Port) Took(seconds float64) {
	if p != nil {
		p.seconds.Observe(seconds)
	}
}

// Retry counts a dump published again.
func (p *Port) Retry() {
	if p != nil {
		p.retries.Inc()
	}
}

// Solve is the solve-time histograms of a set of problems, resolved once.
type Solve map[string]prometheus.Observer

// Solve resolves the histograms of the problems.
func (m *Metrics) Solve(problems []string) Solve {
	if m == nil {
		return nil
	}
	s := Solve{}
	for _, name := range problems {
		s[name] = m.solve.WithLabelValues(name)
	}
	return s
}

// Observe records a solve of problem; a problem not resolved (an unknown one) is not.
func (s Solve) Observe(problem string, seconds float64) {
	if o := s[problem]; o != nil {
		o.Observe(seconds)
	}
}

// Beside serves the metrics on Path and everything else with h: the daemon's page
// and its metrics share one listener.
func (m *Metrics) Beside(h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, m.Handler())
	mux.Handle("/", h)
	return mux
}

// PortCounts are a port's units by outcome, and whether its device is open.
type PortCounts struct {
	Port, Problem                      string
	Answered, Failed, Stopped, Dropped uint64
	Up                                 bool
	// NoLineEnds: the port receives bytes but no line ends.
	NoLineEnds bool
}

// Ports makes f the source of scoreboard_units_total and scoreboard_port_up, read
// at each scrape: the daemon's Monitor, whose counts systemd's status line shows
// too, so that the two never disagree. A later call replaces f.
func (m *Metrics) Ports(f func() []PortCounts) {
	if m != nil {
		m.ports.f.Store(&f)
	}
}

var (
	unitsDesc = prometheus.NewDesc("scoreboard_units_total",
		"Units read from a port that got their outcome: answered, error (a bad unit, or no worker answered), stopped (unanswered when a stop's drain bound ended), or dropped (its answer never written: the device went away, or was reopened since).",
		[]string{"port", "problem", "outcome"}, nil)
	portUpDesc = prometheus.NewDesc("scoreboard_port_up",
		"1 while the port's device is open, 0 while it is waiting for it or stopped.", []string{"port"}, nil)
	noLineEndsDesc = prometheus.NewDesc("scoreboard_port_no_line_ends",
		"1 while the port receives bytes but no line ends (no unit can be read), else 0.", []string{"port"}, nil)
)

// portsCollector serves the counts of Ports' source; every outcome of every port
// appears at once, at 0, so that a rate over it exists before the first error.
type portsCollector struct {
	f atomic.Pointer[func() []PortCounts]
}

func (c *portsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- unitsDesc
	ch <- portUpDesc
	ch <- noLineEndsDesc
}

func (c *portsCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.f.Load()
	if f == nil {
		return
	}
	for _, p := range (*f)() {
		for outcome, n := range map[string]uint64{Answered: p.Answered, Error: p.Failed, Stopped: p.Stopped, Dropped: p.Dropped} {
			ch <- prometheus.MustNewConstMetric(unitsDesc, prometheus.CounterValue, float64(n), p.Port, p.Problem, outcome)
		}
		up := 0.0
		if p.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(portUpDesc, prometheus.GaugeValue, up, p.Port)
		none := 0.0
		if p.NoLineEnds {
			none = 1
		}
		ch <- prometheus.MustNewConstMetric(noLineEndsDesc, prometheus.GaugeValue, none, p.Port)
	}
}
