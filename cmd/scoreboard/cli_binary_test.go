package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/internal/proctest"
)

// The command line against the built binary, as a user meets it.

// sb runs the built binary with args and the environment env added, and returns its
// exit status, stdout and stderr.
func sb(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(proctest.Scoreboard(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("scoreboard %q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// commandFlags are the flags each command's help must list, by group heading.
var commandFlags = map[string]map[string][]string{
	"run": {
		"Flags:":         {"--config"},
		"Port flags:":    {"--port-device", "--port-problem", "--port-name", "--port-baud", "--port-data-bits", "--port-parity", "--port-stop-bits", "--port-error-line"},
		"Daemon flags:":  {"--daemon-request-timeout", "--daemon-drain", "--daemon-workers"},
		"NATS flags:":    {"--nats-listen", "--nats-listen-token", "--nats-url", "--nats-user", "--nats-password", "--nats-prefix"},
		"History flags:": {"--daemon-state-dir", "--history-enabled", "--history-max-age", "--history-max-bytes", "--history-replicas"},
		"Web flags:":     {"--http-listen"},
		"Logging flags:": {"--log-level", "--log-format"},
	},
	"work":     {"Flags:": {"--config", "--problems", "--concurrency", "--http"}, "Daemon flags:": {"--daemon-drain"}, "NATS flags:": {"--nats-url", "--nats-token"}, "Logging flags:": {"--log-level"}},
	"solve":    {"Flags:": {"--timeout"}, "NATS flags:": {"--nats-url", "--nats-prefix"}},
	"send":     {"Flags:": {"--port-name", "--timeout"}, "NATS flags:": {"--nats-url"}},
	"watch":    {"Flags:": {"--json", "--port", "--problem", "--since", "--last", "--count"}, "NATS flags:": {"--nats-url"}},
	"history":  {"Flags:": {"--json", "--sgf", "--port", "--until", "--problem", "--since", "--last"}, "NATS flags:": {"--nats-url"}},
	"simulate": {"Flags:": {"--baud", "--link", "--idle", "--wait"}},
	"ports":    {"Flags:": {"--json"}},
	"web":      {"Web flags:": {"--http-listen"}, "NATS flags:": {"--nats-url"}, "Logging flags:": {"--log-format"}},
	"render":   {"Flags:": {"--sgf"}},
}

// Help: `scoreboard --help`, `scoreboard COMMAND --help` and `scoreboard help
// COMMAND` write the same help on stdout and exit 0; each lists every flag of the
// command under its group, a setting's with its default and its variable.
func TestBinaryHelp(t *testing.T) {
	code, out, errs := sb(t, nil, "--help")
	if code != 0 || errs != "" || !strings.Contains(out, "Usage:\n  scoreboard COMMAND") {
		t.Fatalf("--help: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for name := range commandFlags {
		if !regexp.MustCompile(`(?m)^  ` + name + ` +\S`).MatchString(out) {
			t.Errorf("--help does not list the command %s:\n%s", name, out)
		}
	}
	if code, out2, _ := sb(t, nil, "help"); code != 0 || out2 != out {
		t.Errorf("help: exit %d, and not --help's output:\n%s", code, out2)
	}
	for name, groups := range commandFlags {
		code, out, errs := sb(t, nil, name, "--help")
		if code != 0 || errs != "" || !strings.Contains(out, "Usage:\n  scoreboard "+name) {
			t.Errorf("%s --help: exit %d, stderr %q, stdout:\n%s", name, code, errs, out)
			continue
		}
		if code, out2, _ := sb(t, nil, "help", name); code != 0 || out2 != out {
			t.Errorf("help %s: exit %d, and not %s --help's output:\n%s", name, code, name, out2)
		}
		for heading, flags := range groups {
			i := strings.Index(out, "\n"+heading+"\n")
			if i < 0 {
				t.Errorf("%s --help has no %q group:\n%s", name, heading, out)
				continue
			}
			section, _, _ := strings.Cut(out[i+len(heading)+2:], "\n\n")
			for _, f := range flags {
				if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(f) + `\b`).MatchString(section) {
					t.Errorf("%s --help: %s not under %q:\n%s", name, f, heading, section)
				}
			}
		}
	}
	// A setting's line says its default and its variable.
	_, out, _ = sb(t, nil, "run", "--help")
	for _, want := range []string{"[$SCOREBOARD_HISTORY_MAX_BYTES] (default \"1GiB\")", "[$SCOREBOARD_DAEMON_DRAIN] (default 5s)",
		"[$SCOREBOARD_PORT_BAUD] (default 9600)", "[$SCOREBOARD_NATS_URL]"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("run --help does not say %q", want)
		}
	}
}

// Exit status and one-line mistakes with a hint: 2 for the command line, 1 for a
// failure, 0 for done.
func TestBinaryExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[log]\nlevel = 'loud'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sned"}, 2, `scoreboard: unknown command "sned"; did you mean send? ('scoreboard --help' lists the commands)`},
		{[]string{"help", "wacth"}, 2, `unknown command "wacth"; did you mean watch?`},
		{[]string{"run", "--nats-lisen", "off"}, 2, "scoreboard run: unknown flag --nats-lisen; did you mean --nats-listen? ('scoreboard run --help' shows the usage)"},
		{[]string{"run", "--prot", "-"}, 2, "unknown flag --prot; did you mean --port-device?"},
		{[]string{"watch", "--jsno"}, 2, "scoreboard watch: unknown flag --jsno; did you mean --json?"},
		{[]string{"solve", "gocsore"}, 2, `scoreboard solve: unknown problem "gocsore"; did you mean goscore?`},
		{[]string{"send", "gocsore"}, 2, `scoreboard send: unknown problem "gocsore"; did you mean goscore?`},
		{[]string{"render", "othelo"}, 2, `unknown problem "othelo"; did you mean othello?`},
		{[]string{"watch", "--problem", "gocsore"}, 2, `--problem: unknown problem "gocsore"; did you mean goscore?`},
		{[]string{"history", "--problem", "captrue"}, 2, `--problem: unknown problem "captrue"; did you mean capture?`},
		{[]string{"work", "--problems", "goscore,captrue"}, 2, `--problems: unknown problem "captrue"; did you mean capture?`},
		{[]string{"run", "--port-device", "-", "--port-problem", "gocsore"}, 2, `--port-problem: unknown problem "gocsore"; did you mean goscore?`},
		{[]string{"run", "--port-baud", "fast"}, 2, `--port-baud "fast": want a whole number`},
		{[]string{"solve"}, 2, "want one PROBLEM"},
		{[]string{"ports", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{}, 2, "scoreboard: no command"},
		{[]string{"run", "--config", bad}, 1, "config " + bad + ": line 2: key log.level: "},
		{[]string{"run", "--config", filepath.Join(dir, "none.toml")}, 1, "no such file or directory"},
		{[]string{"render", "goscore", filepath.Join(dir, "none.txt")}, 1, "no such file or directory"},
	} {
		code, out, errs := sb(t, nil, c.args...)
		lines := strings.Count(strings.TrimRight(errs, "\n"), "\n") + 1
		if code != c.code || !strings.Contains(errs, c.want) || lines != 1 || out != "" {
			t.Errorf("%q: exit %d, %d lines on stderr, stdout %q:\n%s\nwant exit %d and one line with %q", c.args, code, lines, out, errs, c.code, c.want)
		}
	}
	in, want := busSample(t, "goscore")
	cmd := exec.Command(proctest.Scoreboard(t), "solve", "goscore")
	cmd.Stdin = strings.NewReader(in)
	if out, err := cmd.Output(); err != nil || string(out) != want {
		t.Errorf("solve goscore: %v, wrong output %v", err, string(out) != want)
	}
}

// The name rule holds for every setting: key a.b_c, flag --a-b-c, $SCOREBOARD_A_B_C;
// the binary takes each flag and lists it with its variable, and the example config
// has each key in its table.
func TestSettingNames(t *testing.T) {
	// run's settings are in its help and scoreboard.toml; a league hub's own
	// ([league]) in hub's help and league-hub.toml.
	_, runHelp, _ := sb(t, nil, "run", "--help")
	runHelp = strings.Join(strings.Fields(runHelp), " ")
	_, hubHelp, _ := sb(t, nil, "hub", "--help")
	hubHelp = strings.Join(strings.Fields(hubHelp), " ")
	runExample, err := os.ReadFile("../../configs/scoreboard.toml")
	if err != nil {
		t.Fatal(err)
	}
	hubExample, err := os.ReadFile("../../configs/league-hub.toml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range config.All() {
		cmd, help, example := "run", runHelp, runExample
		if s.Hub() {
			cmd, help, example = "hub", hubHelp, hubExample
		}
		table, name, ok := strings.Cut(s.Key(), ".")
		if !ok || strings.ContainsAny(name, ".-") || strings.ToLower(s.Key()) != s.Key() {
			t.Errorf("key %q: want table.name, lowercase, with _ between words", s.Key())
		}
		flag := table + "-" + strings.ReplaceAll(name, "_", "-")
		env := "SCOREBOARD_" + strings.ToUpper(table+"_"+name)
		if s.Flag() != flag || s.Env() != env {
			t.Errorf("%s: flag --%s and $%s, want --%s and $%s", s.Key(), s.Flag(), s.Env(), flag, env)
		}
		if seen[flag] {
			t.Errorf("two settings make the flag --%s", flag)
		}
		seen[flag] = true
		if !strings.Contains(help, "--"+flag+" ") || !strings.Contains(help, "[$"+env+"]") {
			t.Errorf("%s --help does not list --%s with $%s", cmd, flag, env)
		}
		header := "\n[" + table + "]\n"
		if table == "port" {
			header = "\n[[port]]\n"
		}
		_, rest, _ := strings.Cut(string(example), header)
		body, _, _ := strings.Cut(rest, "\n[")
		if !regexp.MustCompile(`(?m)^(# )?` + name + ` = .*# --` + flag + `, \$` + env + `$`).MatchString(body) {
			t.Errorf("configs/%s has no %s key in %s with --%s and $%s", map[string]string{"run": "scoreboard.toml", "hub": "league-hub.toml"}[cmd], name, strings.TrimSpace(header), flag, env)
		}
	}
	// Every flag is taken by run, or by hub (--help: then nothing starts).
	for _, cmd := range []string{"run", "hub"} {
		args := []string{cmd, "--help"}
		for _, s := range config.All() {
			if s.Hub() == (cmd == "hub") {
				args = append(args, "--"+s.Flag()+"="+fmt.Sprint(s.Default()))
			}
		}
		if code, _, errs := sb(t, nil, args...); code != 0 {
			t.Errorf("%s with every setting's flag: exit %d, %s", cmd, code, errs)
		}
	}
}

// Precedence against the binary: each layer's bad value is the one reported, so the
// error says which layer won: the flag over the environment over the file.
func TestBinaryPrecedence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scoreboard.toml")
	if err := os.WriteFile(path, []byte("[nats]\nlisten = 'off'\n\n[log]\nlevel = 'from-file'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		args []string
		code int
		want string
	}{
		{nil, nil, 1, "config " + path + ": line 5: key log.level: log level \"from-file\""},
		{[]string{"SCOREBOARD_LOG_LEVEL=from-env"}, nil, 1, "$SCOREBOARD_LOG_LEVEL: log level \"from-env\""},
		{[]string{"SCOREBOARD_LOG_LEVEL=from-env"}, []string{"--log-level", "from-flag"}, 2, "--log-level: log level \"from-flag\""},
		{nil, []string{"--log-level", "from-flag"}, 2, "--log-level: log level \"from-flag\""},
	} {
		code, _, errs := sb(t, c.env, append([]string{"run", "--config", path}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) || strings.Count(errs, "log level") != 1 {
			t.Errorf("env %q, flags %q: exit %d, stderr %q; want %d and %q", c.env, c.args, code, errs, c.code, c.want)
		}
	}
}

// Version: one line with the version, the commit and Go's version, set at build
// time by the two variables the packaging sets.
func TestBinaryVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "scoreboard")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.version=v1.2.3 -X main.commit=0123abc", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil || !regexp.MustCompile(`^scoreboard 1\.2\.3 \(commit 0123abc, go1\.\d+[^)]*\)\n$`).Match(out) {
			t.Errorf("%q: %v, %q; want one line: scoreboard 1.2.3 (commit 0123abc, go1...)", args, err, out)
		}
	}
}

// Completions load in bash, zsh and fish, and complete the problems.
func TestBinaryCompletions(t *testing.T) {
	bin := proctest.Scoreboard(t)
	path := filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, c := range []struct {
		shell, script, want string
	}{
		{"bash", "source <(scoreboard completion bash) && complete -p scoreboard", "complete -o default -F __start_scoreboard scoreboard"},
		{"zsh", "autoload -U compinit && compinit -u -d $TMPDIR/zcompdump && source <(scoreboard completion zsh) && print -r -- ${_comps[scoreboard]}", "_scoreboard"},
		{"fish", "scoreboard completion fish | source; complete -c scoreboard", "__scoreboard_prepare_completions"},
	} {
		sh, err := exec.LookPath(c.shell)
		if err != nil {
			t.Errorf("%s: %v (.ci/run installs it)", c.shell, err)
			continue
		}
		cmd := exec.Command(sh, "-c", c.script)
		cmd.Env = append(os.Environ(), "PATH="+path, "TMPDIR="+t.TempDir(), "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: %v\n%s\nwant %q", c.shell, err, out, c.want)
		}
	}
	_, out, _ := sb(t, nil, "__complete", "run", "--port-problem", "")
	if got := strings.Fields(out); !slices.Contains(got, "goscore") || !slices.Contains(got, "othello") {
		t.Errorf("run --port-problem completes to %q, want the problems", got)
	}
}

// `scoreboard manpage --directory DIR` writes scoreboard.1 and one page per command.
func TestBinaryManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	if code, _, errs := sb(t, nil, "manpage", "--directory", dir); code != 0 {
		t.Fatalf("manpage: exit %d: %s", code, errs)
	}
	for _, page := range []string{"scoreboard.1", "scoreboard-run.1", "scoreboard-work.1", "scoreboard-completion.1"} {
		data, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil || !bytes.HasPrefix(data, []byte(".nh\n.TH \"SCOREBOARD\" \"1\"")) {
			t.Errorf("%s: %v, %.60q", page, err, data)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "scoreboard-run.1")); !bytes.Contains(data, []byte("SCOREBOARD_HISTORY_MAX_BYTES")) {
		t.Errorf("scoreboard-run.1 does not list the settings' variables")
	}
}
