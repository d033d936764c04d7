package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/render"
)

// TestUnitOfSampleFiles: every unit of every sample file, picked by its number from
// the file as a scoreboard sends it, is the unit a port reader cuts there (the same
// answer); a single unit, as a dump holds it, is its own first unit; a number beyond
// the file says how many units it has.
func TestUnitOfSampleFiles(t *testing.T) {
	dir, err := samples.Dir()
	if err != nil {
		t.Fatal(err)
	}
	answer := func(problem string, unit []byte) string {
		p, _ := engine.Lookup(problem)
		a, err := p.Solve(unit)
		if err != nil {
			t.Fatalf("%s: %v", problem, err)
		}
		return string(a.AppendText(nil))
	}
	for _, c := range samples.Cases {
		file, err := os.ReadFile(filepath.Join(dir, c.File+".in"))
		if err != nil {
			t.Fatal(err)
		}
		units := samples.Units(t, c.Problem, c.File+".in")
		for k, want := range units {
			got, err := render.Unit(c.Problem, bytes.NewReader(file), k+1)
			if err != nil {
				t.Fatalf("%s unit %d: %v", c.File, k+1, err)
			}
			if answer(c.Problem, got) != answer(c.Problem, want) {
				t.Errorf("%s unit %d: %q, want %q", c.File, k+1, got, want)
			}
			one, err := render.Unit(c.Problem, bytes.NewReader(want), 1)
			if err != nil || answer(c.Problem, one) != answer(c.Problem, want) {
				t.Errorf("%s unit %d alone, as a dump: %q, %v", c.File, k+1, one, err)
			}
		}
		_, err = render.Unit(c.Problem, bytes.NewReader(file), len(units)+1)
		if err == nil || !strings.Contains(err.Error(), "has "+strconv.Itoa(len(units))) {
			t.Errorf("%s unit %d of %d: %v, want an error saying how many there are", c.File, len(units)+1, len(units), err)
		}
	}
	if _, err := render.Unit("goscore", strings.NewReader(""), 0); err == nil {
		t.Error("unit 0: no error")
	}
}

// FuzzUnit: any input and number gives a unit (whole lines, within the problem's
// bound; the engine may still reject it, as a port's worker does) or an error, never
// a panic.
func FuzzUnit(f *testing.F) {
	dir, err := samples.Dir()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range samples.Cases {
		in, err := os.ReadFile(filepath.Join(dir, c.File+".in"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(c.Problem, in, 2)
	}
	f.Fuzz(func(t *testing.T, problem string, in []byte, n int) {
		if _, ok := engine.Lookup(problem); !ok {
			return
		}
		unit, err := render.Unit(problem, bytes.NewReader(in), n%64)
		if err != nil {
			return
		}
		p, _ := engine.Lookup(problem)
		if len(unit) == 0 || unit[len(unit)-1] != '\n' || len(unit) > max(p.Limits().MaxUnit, len(in)+1) {
			t.Errorf("Unit gave %q", unit)
		}
	})
}
