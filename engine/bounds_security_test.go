package engine_test

import (
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// The input bounds README documents, each enforced with an error naming the line and
// the bound. The table is the documentation's source.
func TestSecurityInputBounds(t *testing.T) {
	for _, c := range []struct {
		problem, in, want string
	}{
		{"goscore", "\n" + strings.Repeat(" +", 65) + "\n", "line 2: line too long: 130 bytes, limit 128"},
		{"replay", strings.Repeat("7", 81) + "\n", "line 1: line too long: 81 bytes, limit 80"},
		{"replay", "19 10001\n", "10001 placements: want 0 to 10000"},
		{"replay", "21 1\nB(0,0)\n", "board size 21: want an odd number from 3 to 19"},
		{"replay", "2 1\nB(0,0)\n", "board size 2: want an odd number from 3 to 19"},
		{"territory", strings.Repeat("1 ", 32<<10+1) + "\n", "line 1: line too long"},
		{"territory", "20 1 1\n1 1\n2 2\n", "board size 20: want 1 to 19"},
		{"territory", "19 300 300\n", "600 stones: no board holds more than 361"},
		{"othello", "1000001\n", "more than 1000000 games"},
		{"othello", strings.Repeat("-", 65) + "\n", "line 1: line too long: 65 bytes, limit 64"},
		{"capture", "5 25001\n", "move count 25001 is out of range 1..25000"},
		{"capture", "2147483648 1\n0 0\n", "board size 2147483648 is out of range 1..2147483647"},
		{"capture", strings.Repeat("1", 65) + "\n", "line 1: line too long: 65 bytes, limit 64"},
	} {
		p, _ := engine.Lookup(c.problem)
		var errs []string
		var out strings.Builder
		if _, err := engine.Contest(p, strings.NewReader(c.in), &out, func(err error) { errs = append(errs, err.Error()) }); err != nil {
			t.Fatal(err)
		}
		all := strings.Join(errs, "\n")
		if out.Len() != 0 || !strings.Contains(all, c.want) || !strings.Contains(all, c.problem+": line ") {
			t.Errorf("%s %.40q: output %q, errors:\n%s\nwant an error naming the line and %q", c.problem, c.in, out.String(), all, c.want)
		}
	}
	// The bounds the framers buffer to, and the longest answers.
	for name, want := range map[string]engine.Limits{
		"goscore":   {MaxLine: 128, MaxUnit: 1 + 19*129, MaxAnswer: len("361 361\n")},
		"replay":    {MaxLine: 80, MaxUnit: 10001 * 81, MaxAnswer: len("10361 10361\n")},
		"territory": {MaxLine: 64 << 10, MaxUnit: 4 << 10, MaxAnswer: len("White wins by 361\n")},
		"othello":   {MaxLine: 64, MaxUnit: 200, MaxAnswer: 1 + 64*6},
		"capture":   {MaxLine: 64, MaxUnit: 25001*65 + 25000, MaxAnswer: len("25000\n")},
	} {
		p, _ := engine.Lookup(name)
		if got := p.Limits(); got != want {
			t.Errorf("%s limits %+v, want %+v (update README's bounds table)", name, got, want)
		}
	}
}
