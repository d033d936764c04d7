package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// TestHubPageClubsListed (review F6, the wiring): a real 'scoreboard hub' gives its
// page its [[club]] names, at start and at SIGHUP. The page answers the addresses
// of a club of the file, and none of another spelling of its name (a_b for a-b,
// whose stream LEAGUE_A_B is one), nor, after a SIGHUP that removed it, of the
// club itself.
func TestHubPageClubsListed(t *testing.T) {
	root := t.TempDir()
	httpPort := proctest.FreePort(t)
	head := fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\n",
		proctest.FreePort(t), proctest.FreePort(t), httpPort, filepath.Join(root, "hub"))
	path := filepath.Join(root, "hub.toml")
	write := func(clubs string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(head+clubs), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[[club]]\nname = \"a-b\"\ntoken = \"tab\"\ndelay = \"1h\"\n[[club]]\nname = \"north\"\ntoken = \"tn\"\n")
	hub := proctest.Start(t, proctest.Scoreboard(t), "hub", "--config", path, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	page := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	proctest.WaitTCP(t, fmt.Sprintf("127.0.0.1:%d", httpPort), 30*time.Second)
	code := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(page + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			return resp.StatusCode, "(an event stream)" // it does not end
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	for _, c := range []struct {
		path string
		want int
	}{
		{"/embed/a-b.t1", http.StatusOK},
		{"/embed/north.t1", http.StatusOK},
		{"/embed/a_b.t1", http.StatusNotFound},
		{"/history/a_b.1.svg", http.StatusNotFound},
		{"/boards/a_b.t1.svg", http.StatusNotFound},
		{"/api/history?port=a_b.t1", http.StatusBadRequest},
		{"/api/events?port=a_b.t1", http.StatusBadRequest},
	} {
		if got, body := code(c.path); got != c.want {
			t.Errorf("%s: %d %q, want %d", c.path, got, body, c.want)
		}
	}
	// a-b removed from the file: none of its addresses, as soon as the reload is done.
	write("[[club]]\nname = \"north\"\ntoken = \"tn\"\n")
	if err := hub.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	hub.WaitOutput("SIGHUP: clubs reloaded", 30*time.Second)
	bustest.Wait(t, "/embed/a-b.t1 refused after a-b's removal", func() (bool, string) {
		got, body := code("/embed/a-b.t1")
		return got == http.StatusNotFound, fmt.Sprintf("%d %q", got, body)
	})
	if got, body := code("/embed/north.t1"); got != http.StatusOK {
		t.Errorf("/embed/north.t1 after the SIGHUP: %d %q", got, body)
	}
}
