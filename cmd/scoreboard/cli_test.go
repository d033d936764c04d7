package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Flags go anywhere among the arguments: after the positional ones, before the
// command, and a "--" ends them.
func TestCLIFlagsAnywhere(t *testing.T) {
	_, url := busDaemon(t, true)
	in, want := busSample(t, "goscore")
	file := filepath.Join(t.TempDir(), "boards.txt")
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"send", "goscore", file, "--nats-url", url},
		{"send", "goscore", "--port-name", "desk", file, "--nats-url", url, "--timeout", "20s"},
		{"--nats-url", url, "send", "goscore", file},
		{"send", "--nats-url", url, "--", "goscore", file},
	} {
		if code, out, errs := runCmd(t, "", args...); code != 0 || out != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and %q", args, code, out, errs, want)
		}
	}
	// After "--", what looks like a flag is an argument.
	code, _, errs := runCmd(t, "", "send", "--nats-url", url, "--", "goscore", file, "--timeout")
	if code != 2 || !strings.Contains(errs, "got 3 arguments") {
		t.Errorf(`an argument "--timeout" after "--": exit %d, stderr %q; want 2 and "got 3 arguments"`, code, errs)
	}
}

// A mistake is one line, with a hint and where the usage is, and exit 2; the usage
// itself only on --help.
func TestCLIMistakesAreOneLineWithAHint(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"run", "--prot", "/dev/ttyUSB0"}, "scoreboard run: unknown flag --prot; did you mean --port-device? ('scoreboard run --help' shows the usage)", 2},
		{[]string{"run", "--nats-lisen", "off"}, "unknown flag --nats-lisen; did you mean --nats-listen?", 2},
		{[]string{"watch", "--jsno"}, "unknown flag --jsno; did you mean --json?", 2},
		{[]string{"solve", "--xyzzy", "goscore"}, "scoreboard solve: unknown flag --xyzzy ('scoreboard solve --help'", 2},
		{[]string{"run", "--baud", "fast"}, `--port-baud "fast": want a whole number`, 2},
		{[]string{"run", "--port-bard", "9600"}, "unknown flag --port-bard; did you mean --port-baud?", 2},
		{[]string{"run", "--hub-creds", "h.creds"}, "scoreboard run: --hub-creds: removed: operator mode (a creds file) is no longer taken: give the club its own key, a seed file in hub.seed_file (--hub-seed-file)", 2},
		{[]string{"hub", "key", "north"}, "scoreboard hub key: --out is needed", 2},
		{[]string{"hub", "key", "North", "--out", "/nonexistent/x"}, `club name "North": want lowercase`, 2},
		{[]string{"run", "--history-max-byte", "1GiB"}, "unknown flag --history-max-byte; did you mean --history-max-bytes?", 2},
		{[]string{"run", "--port", "-", "--problem", "gocsore"}, `scoreboard run: --port-problem: unknown problem "gocsore"; did you mean goscore?`, 2},
		{[]string{"run", "--http-listen", "8080"}, `scoreboard run: --http-listen: "8080": want HOST:PORT`, 2},
		{[]string{"send", "gocsore"}, `scoreboard send: unknown problem "gocsore"; did you mean goscore?`, 2},
		{[]string{"history", "--problem", "othelo"}, `scoreboard history: --problem: unknown problem "othelo"; did you mean othello?`, 2},
		{[]string{"help", "sned"}, `scoreboard: unknown command "sned"; did you mean send?`, 2},
		{[]string{"completion", "tcsh"}, "scoreboard completion: want one shell: bash, zsh or fish", 2},
		{[]string{"work", "--drain", "5"}, `--daemon-drain "5": want a duration such as 2s or 500ms`, 2},
		{[]string{"run", "--history=maybe"}, `--history-enabled "maybe": want true or false`, 2},
		{[]string{"run", "--port"}, "flag needs an argument: --port-device", 2},
		{[]string{"solve"}, "want one PROBLEM (the input comes on stdin), got 0 arguments", 2},
		{[]string{"send", "--timeout", "0s", "goscore"}, "--timeout 0s: want a positive duration", 2},
		{[]string{"ports", "extra"}, `unexpected argument "extra"`, 2},
		{[]string{"sned", "goscore"}, `scoreboard: unknown command "sned"; did you mean send?`, 2},
		{[]string{"frobnicate"}, `scoreboard: unknown command "frobnicate" ('scoreboard --help' lists the commands)`, 2},
		{[]string{}, "scoreboard: no command ('scoreboard --help' lists the commands)", 2},
		{[]string{"--nats-url", "nats://127.0.0.1:1"}, "--nats-url but no command", 2},
		{[]string{"watch", "--problem", "gocsore"}, `scoreboard watch: --problem: unknown problem "gocsore"; did you mean goscore? (problems: capture, goscore`, 2},
		{[]string{"solve", "gocsore"}, `unknown problem "gocsore"; did you mean goscore?`, 2},
		{[]string{"render", "othelo"}, `unknown problem "othelo"; did you mean othello?`, 2},
		{[]string{"work", "--problems", "goscore,captrue"}, `--problems: unknown problem "captrue"; did you mean capture?`, 2},
		{[]string{"send", "goscore", "/nonexistent/boards.txt"}, "open /nonexistent/boards.txt: no such file or directory (give a readable file of units, or - or nothing for stdin)", 1},
		{[]string{"render", "goscore", "/nonexistent/board.txt"}, "(give a readable file of units, or - or nothing for stdin)", 1},
		{[]string{"simulate", "/nonexistent/units.txt"}, "(give a readable file of units, or - or nothing for stdin)", 1},
		{[]string{"run", "--config", "/nonexistent/scoreboard.toml"}, "config: open /nonexistent/scoreboard.toml: no such file or directory (--config names a TOML file; configs/scoreboard.toml in the source is an example)", 1},
	} {
		code, _, errs := runCmd(t, "", c.args...)
		lines := strings.Count(strings.TrimRight(errs, "\n"), "\n") + 1
		if code != c.code || !strings.Contains(errs, c.want) || lines != 1 || strings.Contains(errs, "Usage:") {
			t.Errorf("%q: exit %d, %d lines on stderr:\n%s\nwant exit %d and one line with %q", c.args, code, lines, errs, c.code, c.want)
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"run", "--help"}, {"send", "goscore", "-h"}, {"help", "run"}} {
		code, out, errs := runCmd(t, "", args...)
		if code != 0 || !strings.Contains(out, "Usage:\n  scoreboard") || errs != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and the usage on stdout", args, code, out, errs)
		}
	}
}
