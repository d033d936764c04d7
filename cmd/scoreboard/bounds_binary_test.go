package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Duration and size settings out of the range that works, given to the real binary
// by flag, environment and config file: one line that names the setting and the
// range, and the exit status of a usage error (flag) or a bad file.
func TestBinarySettingBounds(t *testing.T) {
	dir := t.TempDir()
	file := func(text string) string {
		path := filepath.Join(dir, strings.NewReplacer(" ", "", "\n", "", "[", "", "]", "", "=", "", "'", "").Replace(text)+".toml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil { // a hub's file with tokens is refused at 0644
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		env  []string
		args []string
		code int
		want string
	}{
		{nil, []string{"run", "--port", "-", "--problem", "goscore", "--daemon-request-timeout", "80s"}, 2,
			"--daemon-request-timeout: 1m20s: want 500ms to 20s"},
		{nil, []string{"run", "--port", "-", "--problem", "goscore", "--request-timeout", "1ms"}, 2,
			"--daemon-request-timeout: 1ms: want 500ms to 20s"},
		{nil, []string{"run", "--config", file("[daemon]\nrequest_timeout = '80s'\n")}, 1, "key daemon.request_timeout: 1m20s: want 500ms to 20s"},
		{nil, []string{"run", "--config", file("[daemon]\ndrain = '40s'\n")}, 1, "key daemon.drain: 40s: want 1ms to 25s"},
		{nil, []string{"work", "--daemon-drain", "1h"}, 2, "--daemon-drain: 1h0m0s: want 1ms to 25s"},
		{nil, []string{"run", "--history-max-bytes", "1KiB"}, 2, `--history-max-bytes: "1KiB": want 16MiB to 64TiB`},
		{nil, []string{"run", "--config", file("[history]\nmax_age = '10m'\n")}, 1, `key history.max_age: "10m": want 1h to 36500d`},
		{nil, []string{"run", "--config", file("[history]\nsync = '1ms'\n")}, 1, `key history.sync: "1ms": want "always" or an interval of 100ms to 10m0s`},
		{[]string{"SCOREBOARD_DAEMON_REQUEST_TIMEOUT=21s"}, []string{"run", "--port", "-", "--problem", "goscore"}, 1,
			"SCOREBOARD_DAEMON_REQUEST_TIMEOUT: 21s: want 500ms to 20s"},
		{nil, []string{"hub", "--config", file("[league]\nclub_max_bytes = '1MiB'\n\n[[club]]\nname = 'north'\ntoken = 't'\n")}, 1,
			`key league.club_max_bytes: "1MiB": want 16MiB to 64TiB`},
		{nil, []string{"run", "--port", "-", "--problem", "goscore", "--port-on-reopen", "later"}, 2,
			`--port-on-reopen: "later": want "drop" (a scoreboard that rebooted) or "write" (a cable bumped)`},
	} {
		code, out, errs := sb(t, c.env, c.args...)
		lines := strings.Count(strings.TrimRight(errs, "\n"), "\n") + 1
		if code != c.code || !strings.Contains(errs, c.want) || lines != 1 || out != "" {
			t.Errorf("%q %q: exit %d, %d lines on stderr, stdout %q:\n%s\nwant exit %d and one line with %q", c.env, c.args, code, lines, out, errs, c.code, c.want)
		}
	}
}
