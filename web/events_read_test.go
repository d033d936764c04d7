package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goclub/scoreboard/web"
)

// seenBoard is a board event of the page's stream, when the test read it.
type seenBoard struct {
	Port string
	Seq  uint64
	At   time.Time
}

// boardEvent is one event of the page's stream that names a board: its type,
// the board, and the players its game names ("Black - White", "" for none).
type boardEvent struct {
	Type string
	seenBoard
	Players string
}

// readEvents reads the page's event stream until the test ends; the returned
// function lists the events read so far that name a board, in order.
func readEvents(t *testing.T, base string) func() []boardEvent {
	t.Helper()
	return readEventsOf(t, base, "")
}

// readEventsOf is readEvents of the stream of a query (?club=north).
func readEventsOf(t *testing.T, base, query string) func() []boardEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/events"+query, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/api/events%s: %s", query, resp.Status)
	}
	var mu sync.Mutex
	var seen []boardEvent
	done := make(chan struct{})
	games := map[string]*web.Game{} // the reader's alone
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			at := time.Now()
			var ev struct {
				Type  string `json:"type"`
				Board struct {
					Port string          `json:"port"`
					Seq  uint64          `json:"seq"`
					Game json.RawMessage `json:"game"`
				} `json:"board"`
				Port string `json:"port"`
			}
			if json.Unmarshal([]byte(data), &ev) == nil && (ev.Board.Port != "" || ev.Port != "") {
				// An event says a port's game when it changed (docs/page.md): the
				// players are the stream's last word on the port, as a page keeps.
				var g *web.Game
				switch {
				case ev.Type == "remove":
					delete(games, ev.Port)
				case ev.Board.Game != nil:
					if json.Unmarshal(ev.Board.Game, &g) != nil {
						t.Errorf("/api/events%s: a game of %s unread: %s", query, ev.Board.Port, ev.Board.Game)
					}
					games[ev.Board.Port] = g
				default:
					g = games[ev.Board.Port]
				}
				players := ""
				if g != nil {
					players = g.Black.Name + " - " + g.White.Name
				}
				mu.Lock()
				seen = append(seen, boardEvent{ev.Type, seenBoard{cmpOr(ev.Board.Port, ev.Port), ev.Board.Seq, at}, players})
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return func() []boardEvent {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// followEvents reads the page's event stream until the test ends; the returned
// function lists the board events read so far, with a board (seq > 0).
func followEvents(t *testing.T, base string) func() []seenBoard {
	t.Helper()
	events := readEvents(t, base)
	return func() []seenBoard {
		var seen []seenBoard
		for _, ev := range events() {
			if ev.Type == "board" && ev.Seq > 0 {
				seen = append(seen, ev.seenBoard)
			}
		}
		return seen
	}
}
