package metrics_test

import (
	"testing"

	"github.com/goclub/scoreboard/metrics"
)

// BenchmarkUnit is what a unit adds to the pipeline's hot path: its read-to-answer
// time on its port, and its solve time, through children resolved
// once. Beside it, the same through nil handles (a process without metrics).
func BenchmarkUnit(b *testing.B) {
	for _, c := range []struct {
		name string
		m    *metrics.Metrics
	}{{"metrics", metrics.New()}, {"none", nil}} {
		b.Run(c.name, func(b *testing.B) {
			p := c.m.Port("lobby")
			s := c.m.Solve([]string{"goscore"})
			b.ReportAllocs()
			for b.Loop() {
				p.Took(0.0012)
				s.Observe("goscore", 0.00003)
			}
		})
	}
}
