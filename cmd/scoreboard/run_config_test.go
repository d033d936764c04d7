package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunBadConfigExits: `scoreboard run --config` with a bad file exits 1 before
// anything starts, saying which file, which key and what is wrong.
func TestRunBadConfigExits(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[nats]\nlisten = 'off'\nurll = 'x'\n", "key nats.urll: unknown key"},
		{"[nats]\nlisten = 'off'\n[[port]]\nname = 'lobby'\nproblem = 'goscore'\n", `key [[port]] 1 ("lobby") device: missing`},
		{"[nats]\nlisten = 'off'\n[[port]]\ndevice = '-'\nproblem = 'goscore'\nbaud = 'fast'\n", `key [[port]] 1 baud: want an integer`},
		{"[nats]\nlisten = 'off'\n[[port]]\ndevice = '-'\nproblem = 'chess'\n", `unknown problem "chess"`},
		{"[nats\n", "line 1: "},
	} {
		path := filepath.Join(t.TempDir(), "scoreboard.toml")
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errw strings.Builder
		code := runMain(t.Context(), []string{"run", "--config", path}, stdio{strings.NewReader(""), &out, &errw})
		if code != 1 || !strings.Contains(errw.String(), "config "+path+": ") || !strings.Contains(errw.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and an error naming the file and %q", tc.text, code, errw.String(), tc.want)
		}
		if strings.Contains(errw.String(), `"level"`) {
			t.Errorf("%q: something started and logged before the config was checked:\n%s", tc.text, errw.String())
		}
	}
}
