package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
)

// TestHubPageClubsListed (review F6, the wiring): a real 'scoreboard hub' gives its
// page its [[club]] names, at start and at SIGHUP. The page answers the addresses
// of a club of the file (its embed, its page /clubs/<club>, its ?club= filter),
// and none of another spelling of its name (a_b for a-b, whose stream LEAGUE_A_B
// is one), nor, after a SIGHUP that removed it, of the club itself.
func TestHubPageClubsListed(t *testing.T) {
	hub, page, write := hubWithFile(t, "", "[[club]]\nname = \"a-b\"\ntoken = \"tab\"\ndelay = \"1h\"\n[[club]]\nname = \"north\"\ntoken = \"tn\"\n")
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
		// The index, a club's page and the club filter: the file's clubs alone.
		{"/clubs", http.StatusOK},
		{"/clubs/north", http.StatusOK},
		{"/clubs/a-b", http.StatusOK},
		{"/clubs/a_b", http.StatusNotFound},
		{"/clubs/ghost", http.StatusNotFound},
		{"/api/events?club=north", http.StatusOK},
		{"/api/events?club=a_b", http.StatusBadRequest},
		{"/api/boards?club=ghost", http.StatusBadRequest},
		{"/api/boards?club=a-b&player=anyone", http.StatusOK},
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
	for path, want := range map[string]int{"/clubs/a-b": http.StatusNotFound, "/api/events?club=a-b": http.StatusBadRequest, "/clubs/north": http.StatusOK} {
		if got, body := code(path); got != want {
			t.Errorf("%s after a-b's removal: %d %q, want %d", path, got, body, want)
		}
	}
}
