package main

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/internal/samples"
)

// TestRenderCommand: render writes a unit's picture (or its game record) on stdout,
// and refuses what it cannot draw with a message that says why.
func TestRenderCommand(t *testing.T) {
	for _, c := range samples.Cases {
		unit := samples.Units(t, c.Problem, c.File+".in")[0]
		code, out, errs := runCmd(t, string(unit), "render", c.Problem)
		if code != 0 || errs != "" {
			t.Fatalf("render %s: exit %d, %s", c.Problem, code, errs)
		}
		if err := xml.Unmarshal([]byte(out), new(struct{})); err != nil || !strings.HasPrefix(out, "<svg") {
			t.Errorf("render %s: not an SVG document (%v): %.80s", c.Problem, err, out)
		}
	}
	unit := samples.Units(t, "replay", "replay.in")[0]
	if code, out, _ := runCmd(t, string(unit), "render", "--sgf", "replay"); code != 0 || !strings.HasPrefix(out, "(;FF[4]") {
		t.Errorf("render --sgf replay: exit %d %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		in   string
		want string
		code int
	}{
		{[]string{"render", "chess"}, "", `unknown problem "chess"`, 2},
		{[]string{"render", "--sgf", "othello"}, "", "othello units have no game record", 1},
		{[]string{"render", "replay"}, "5 1\nB(9,9)\n", "stdin: replay: line 2", 1},
		{[]string{"render", "goscore", "/nonexistent/board.txt"}, "", "no such file", 1},
		{[]string{"render", "--port", "hall", "goscore"}, "", "--port and --seq go with --club", 2},
		{[]string{"render", "--club", "north"}, "", "--club north: give the club's --port too", 2},
		{[]string{"render", "--club", "north", "--port", "hall", "goscore", "file"}, "", "with --club, at most a PROBLEM", 2},
		{[]string{"render", "--club", "North", "--port", "hall"}, "", `--club "North": want lowercase`, 2},
	} {
		code, _, errs := runCmd(t, tc.in, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}
