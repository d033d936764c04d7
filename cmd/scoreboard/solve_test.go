package main

import (
	"context"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/internal/samples"
)

// runCmd runs the command line args in-process with in on stdin.
func runCmd(t *testing.T, in string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = runMain(context.Background(), args, stdio{strings.NewReader(in), &out, &errb})
	return code, out.String(), errb.String()
}

func TestSolveSamples(t *testing.T) {
	for _, c := range samples.Cases {
		t.Run(c.File, func(t *testing.T) {
			in, want := samples.Pair(t, c)
			code, out, errs := runCmd(t, string(in), "solve", c.Problem)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if out != string(want) {
				t.Errorf("stdout %q, want %q", out, want)
			}
		})
	}
}

// TestSolveBadUnit: a bad board is reported with its problem and line, the boards
// around it are still answered, and the exit status says something failed.
func TestSolveBadUnit(t *testing.T) {
	in := samples.Read(t, "goscore.in")
	lines := strings.SplitAfter(string(in), "\n")
	bad := append([]string{}, lines[:20]...)
	bad = append(bad, "\n", strings.Replace(lines[1], "+", "x", 1))
	bad = append(bad, lines[2:20]...)
	bad = append(bad, lines[20:]...)
	code, out, errs := runCmd(t, strings.Join(bad, ""), "solve", "goscore")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if out != "5 3\n177 175\n" {
		t.Errorf("stdout %q, want both good boards answered", out)
	}
	if !strings.Contains(errs, "goscore: line 22:") {
		t.Errorf("stderr %q does not name the problem and line 22", errs)
	}
}

func TestSolveUsage(t *testing.T) {
	code, out, _ := runCmd(t, "", "solve", "--help")
	if code != 0 {
		t.Errorf("--help: exit %d", code)
	}
	for _, p := range []string{"capture", "goscore", "othello", "replay", "territory"} {
		if !strings.Contains(out, p) {
			t.Errorf("--help does not list %s:\n%s", p, out)
		}
	}
	if code, _, errs := runCmd(t, "", "solve", "chess"); code != 2 || !strings.Contains(errs, `unknown problem "chess"`) {
		t.Errorf("unknown problem: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := runCmd(t, "", "solve"); code != 2 {
		t.Errorf("no problem: exit %d, want 2", code)
	}
}
