package daemon

import (
	"strings"
	"testing"
	"time"
)

// TestMonitorHealthStale: a display writer that stops turning over fails the health
// check by name, and recovers when it turns again; a port that ended does not count.
func TestMonitorHealthStale(t *testing.T) {
	m := NewMonitor()
	m.Stale = time.Minute
	m.add("hall", "goscore")
	m.add("lobby", "othello")
	if err := m.Health(); err != nil {
		t.Fatalf("fresh ports: %v", err)
	}
	m.update("hall", func(p *portState) { p.beat = time.Now().Add(-2 * time.Minute) })
	err := m.Health()
	if err == nil || !strings.Contains(err.Error(), "hall (2m0s)") || strings.Contains(err.Error(), "lobby") {
		t.Fatalf("stale hall: Health() = %v", err)
	}
	m.beat("hall")
	if err := m.Health(); err != nil {
		t.Fatalf("after a beat: %v", err)
	}
	m.update("lobby", func(p *portState) { p.beat = time.Now().Add(-time.Hour) })
	m.end("lobby")
	if err := m.Health(); err != nil {
		t.Fatalf("an ended port: %v", err)
	}
	var nilMon *Monitor
	nilMon.beat("x")
	if !nilMon.Started(3) || nilMon.Health() != nil || nilMon.Status() != "" {
		t.Fatal("a nil monitor must do nothing")
	}
}
