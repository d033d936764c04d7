package daemon

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/goclub/scoreboard/metrics"
)

// Monitor keeps what the service manager needs to know of the ports: whether each one
// has started, is open and has a display writer that still turns over, and how many
// units were answered or failed. It feeds systemd's READY=1, STATUS= and the
// watchdog's health check, and /metrics' units and ports (Ports): one count for both. A nil *Monitor does nothing; all methods are safe for
// concurrent use.
type Monitor struct {
	// Stale is how long a display writer may go without a turn of its loop before
	// the health check fails; its loop ticks four times in Stale when idle, so only
	// a stuck writer misses it. Default 10s.
	Stale time.Duration

	mu    sync.Mutex
	ports map[string]*portState
	// gone are the units of the ports a reload removed, still in the status's totals.
	gone     units
	refusals uint64 // replies on a port's inbox that were no answer to its dump
	// changed holds a token when a port's state (tried, open, ended, added, removed)
	// changed since PublishPortStates last looked: it waits on it, not on a poll.
	changed chan struct{}
}

type portState struct {
	problem string
	units
	tried bool      // the reader made its first attempt to open the device
	open  bool      // the device is open now
	beat  time.Time // the display writer's last turn
	ended bool      // the port's actors have returned (stdin ended, or stopping)
	// unended: the port receives bytes but no line ends (display.lineEnds).
	unended bool
}

// units counts a port's units by outcome; dropped are those whose answer (or error
// line) was never written: the device was away, or reopened since (OnReopenDrop),
// or never read it before a stop.
type units struct{ answered, failed, stopped, dropped uint64 }

// NewMonitor returns an empty monitor.
func NewMonitor() *Monitor {
	return &Monitor{ports: map[string]*portState{}, changed: make(chan struct{}, 1)}
}

// Changed is ready when a port's state may have changed since it last was.
func (m *Monitor) Changed() <-chan struct{} {
	if m == nil {
		return nil
	}
	return m.changed
}

func (m *Monitor) signal() {
	if m == nil {
		return
	}
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

func (m *Monitor) port(name string) *portState {
	p := m.ports[name]
	if p == nil {
		p = &portState{beat: time.Now()}
		m.ports[name] = p
	}
	return p
}

func (m *Monitor) update(name string, f func(*portState)) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m.port(name))
}

// add counts a port in, or back in: a port restarted by a reload is not ended.
func (m *Monitor) add(name, problem string) {
	m.update(name, func(p *portState) { p.problem, p.ended, p.beat = problem, false, time.Now() })
	m.signal()
}

// remove forgets a port a reload removed.
func (m *Monitor) remove(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.ports[name]; p != nil {
		m.gone.answered += p.answered
		m.gone.failed += p.failed
		m.gone.stopped += p.stopped
		m.gone.dropped += p.dropped
	}
	delete(m.ports, name)
	m.signal()
}

func (m *Monitor) tried(name string) {
	m.update(name, func(p *portState) { p.tried = true })
	m.signal()
}
func (m *Monitor) opened(name string) {
	m.update(name, func(p *portState) { p.tried, p.open = true, true })
	m.signal()
}
func (m *Monitor) lost(name string) {
	m.update(name, func(p *portState) { p.open = false })
	m.signal()
}
func (m *Monitor) beat(name string) { m.update(name, func(p *portState) { p.beat = time.Now() }) }
func (m *Monitor) end(name string) {
	m.update(name, func(p *portState) { p.ended, p.open = true, false })
	m.signal()
}
func (m *Monitor) unended(name string, none bool) {
	m.update(name, func(p *portState) { p.unended = none })
}

// dropped counts a unit whose answer was not written to its device.
func (m *Monitor) dropped(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.port(name).dropped++
}

// NoLineEnds are the ports that receive bytes but no line ends now, sorted: for a
// status page beside systemd's status line.
func (m *Monitor) NoLineEnds() []string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for name, p := range m.ports {
		if p.unended && !p.ended {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func (m *Monitor) refused() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refusals++
}

// Refused is how many replies on the ports' inboxes were refused: not the answer to
// their dump (a forged one, or a worker's bug).
func (m *Monitor) Refused() uint64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refusals
}

// outcome counts a unit of port name: answered, failed (an error line), or stopped
// (unanswered when the drain bound ended).
func (m *Monitor) outcome(name string, failed, stopped bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// No closure (update): this is once a unit, on the display writer's loop.
	switch p := m.port(name); {
	case stopped:
		p.stopped++
	case failed:
		p.failed++
	default:
		p.answered++
	}
}

// Ports are the ports' counts, for /metrics (metrics.Metrics.Ports).
func (m *Monitor) Ports() []metrics.PortCounts {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	all := make([]metrics.PortCounts, 0, len(m.ports))
	for name, p := range m.ports {
		all = append(all, metrics.PortCounts{Port: name, Problem: p.problem,
			Answered: p.answered, Failed: p.failed, Stopped: p.stopped, Dropped: p.dropped, Up: p.open,
			NoLineEnds: p.unended && !p.ended})
	}
	return all
}

// Started reports whether every port has tried to open its device once: the daemon
// is up then, even if a device is unplugged (it is reopened when it comes back, and
// the status line says so).
func (m *Monitor) Started(ports int) bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, p := range m.ports {
		if p.tried {
			n++
		}
	}
	return n >= ports
}

// Health fails when a port's display writer has not turned over for Stale: its
// actors are stuck, and a restart is the cure.
func (m *Monitor) Health() error {
	if m == nil {
		return nil
	}
	stale := m.Stale
	if stale <= 0 {
		stale = 10 * time.Second
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var stuck []string
	for name, p := range m.ports {
		if since := time.Since(p.beat); !p.ended && since > stale {
			stuck = append(stuck, fmt.Sprintf("%s (%s)", name, since.Round(time.Second)))
		}
	}
	if len(stuck) > 0 {
		sort.Strings(stuck)
		return fmt.Errorf("port display writer stuck: %s", strings.Join(stuck, ", "))
	}
	return nil
}

// Status is one line for systemd's STATUS=: ports open, units answered, errors,
// answers dropped, the ports waiting for their device, and those that receive bytes
// but no line ends.
func (m *Monitor) Status() string {
	if m == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	open := 0
	var waiting, unended []string
	total := m.gone
	for name, p := range m.ports {
		total.answered += p.answered
		total.failed += p.failed
		total.stopped += p.stopped
		total.dropped += p.dropped
		if p.unended && !p.ended {
			unended = append(unended, name)
		}
		switch {
		case p.open:
			open++
		case !p.ended:
			waiting = append(waiting, name)
		}
	}
	s := fmt.Sprintf("%d of %d ports open, %d units answered, %d errors", open, len(m.ports), total.answered, total.failed+total.stopped)
	if total.dropped > 0 {
		s += fmt.Sprintf(", %d answers dropped", total.dropped)
	}
	if m.refusals > 0 {
		s += fmt.Sprintf(", %d answers refused", m.refusals)
	}
	if len(waiting) > 0 {
		sort.Strings(waiting)
		s += "; waiting for " + strings.Join(waiting, ", ")
	}
	if len(unended) > 0 {
		sort.Strings(unended)
		s += "; bytes but no line ends from " + strings.Join(unended, ", ")
	}
	return s
}
