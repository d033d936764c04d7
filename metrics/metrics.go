// Package metrics owns the daemons' Prometheus registry: what run and work count,
// and the handler that serves it on /metrics.
//
// The actors count through handles resolved once (a port's, a problem's), so that a
// unit costs a few atomic adds and no label lookup or allocation. Every method is safe
// on a nil *Metrics and on nil handles: a process without metrics passes nil.
package metrics

import (
	"net/http"

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
)

// Metrics is one process's registry and its metric families.
type Metrics struct {
	reg         *prometheus.Registry
	units       *prometheus.CounterVec
	unitSeconds *prometheus.HistogramVec
	solve       *prometheus.HistogramVec
	retries     *prometheus.CounterVec
	portUp      *prometheus.GaugeVec
}

// New returns a registry with the Go and process collectors and the scoreboard's
// families; ports and problems appear as they are resolved.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		units: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scoreboard_units_total",
			Help: "Units read from a port that got their outcome: answered, error (a bad unit, or no worker answered), or stopped (unanswered when a stop's drain bound ended).",
		}, []string{"port", "problem", "outcome"}),
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
		portUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "scoreboard_port_up",
			Help: "1 while the port's device is open, 0 while it is waiting for it or stopped.",
		}, []string{"port"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.units, m.unitSeconds, m.solve, m.retries, m.portUp,
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

// Port is a port's counters, resolved once.
type Port struct {
	answered, failed, stopped prometheus.Counter
	seconds                   prometheus.Observer
	retries                   prometheus.Counter
	up                        prometheus.Gauge
}

// Port resolves the port's children. Both outcomes and the retries appear at 0 at
// once, so that a rate over them exists before the first error.
func (m *Metrics) Port(port, problem string) *Port {
	if m == nil {
		return nil
	}
	p := &Port{
		answered: m.units.WithLabelValues(port, problem, Answered),
		failed:   m.units.WithLabelValues(port, problem, Error),
		stopped:  m.units.WithLabelValues(port, problem, Stopped),
		seconds:  m.unitSeconds.WithLabelValues(port),
		retries:  m.retries.WithLabelValues(port),
		up:       m.portUp.WithLabelValues(port),
	}
	p.up.Set(0)
	return p
}

// Forget drops every series of a port a reload removed: a port_up of 0 kept for it
// would page someone forever.
func (m *Metrics) Forget(port string) {
	if m == nil {
		return
	}
	for _, v := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{m.units, m.unitSeconds, m.retries, m.portUp} {
		v.DeletePartialMatch(prometheus.Labels{"port": port})
	}
}

// Outcome counts a unit's outcome and the seconds since it was read.
func (p *Port) Outcome(failed bool, seconds float64) {
	if p == nil {
		return
	}
	if failed {
		p.failed.Inc()
	} else {
		p.answered.Inc()
	}
	p.seconds.Observe(seconds)
}

// Stopped counts a unit the daemon stopped before it was answered, and the seconds
// since it was read.
func (p *Port) Stopped(seconds float64) {
	if p == nil {
		return
	}
	p.stopped.Inc()
	p.seconds.Observe(seconds)
}

// Retry counts a dump published again.
func (p *Port) Retry() {
	if p != nil {
		p.retries.Inc()
	}
}

// Up says whether the port's device is open.
func (p *Port) Up(open bool) {
	if p == nil {
		return
	}
	if open {
		p.up.Set(1)
	} else {
		p.up.Set(0)
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
