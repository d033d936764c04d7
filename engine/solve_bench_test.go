package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/goclub/scoreboard/internal/samples"
)

// BenchmarkSolveAppend: each problem's first sample unit answered by Append (the
// port's hot path) and by Solve plus its JSON (what a worker publishes), side by side:
// the structured answers keep their position for pictures, and this shows what that
// costs the workers.
func BenchmarkSolveAppend(b *testing.B) {
	for _, c := range samples.Cases {
		if c.File == "territory-one-line" {
			continue
		}
		p := mustProblem(b, c.Problem)
		unit := samples.Units(b, c.Problem, c.File+".in")[0]
		b.Run(c.Problem+"/append", func(b *testing.B) {
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = p.Append(dst[:0], unit); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.Problem+"/solve+json", func(b *testing.B) {
			for b.Loop() {
				ans, err := p.Solve(unit)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(ans); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
