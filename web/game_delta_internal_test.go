package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/goclub/scoreboard/internal/bustest"
)

// rawViewer reads an event stream's data lines as they come, bytes and all, and
// keeps each port's game as a page does (docs/page.md, "Events"): an event with
// no "game" keeps the one the stream said last, "game":null clears it.
type rawViewer struct {
	mu     sync.Mutex
	events [][]byte
	games  map[string]string // port → "Black - White (round)", as the stream told it
	// blind are the board events that kept a game the stream had never said: a
	// port's first event without one, which says nothing of its players.
	blind []string
}

func watchRaw(t *testing.T, url string) *rawViewer {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	t.Cleanup(func() { resp.Body.Close() })
	v := &rawViewer{games: map[string]string{}}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok {
				continue
			}
			var ev struct {
				Type  string
				Port  string
				Board *struct {
					Port string
					Game json.RawMessage
				}
			}
			if err := json.Unmarshal(data, &ev); err != nil {
				panic(fmt.Sprintf("event %q: %v", data, err))
			}
			v.mu.Lock()
			v.events = append(v.events, bytes.Clone(data))
			switch {
			case ev.Type == "remove":
				delete(v.games, ev.Port)
			case ev.Board.Game == nil:
				if _, ok := v.games[ev.Board.Port]; !ok {
					v.blind = append(v.blind, string(data))
				}
			case string(ev.Board.Game) == "null":
				v.games[ev.Board.Port] = ""
			default:
				var g Game
				if err := json.Unmarshal(ev.Board.Game, &g); err != nil {
					panic(fmt.Sprintf("game %q: %v", ev.Board.Game, err))
				}
				v.games[ev.Board.Port] = fmt.Sprintf("%s - %s (%d)", g.Black.Name, g.White.Name, g.Round)
			}
			v.mu.Unlock()
		}
	}()
	return v
}

func (v *rawViewer) got() ([][]byte, map[string]string, []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	games := map[string]string{}
	for p, g := range v.games {
		games[p] = g
	}
	return append([][]byte(nil), v.events...), games, append([]string(nil), v.blind...)
}

func waitRaw(t *testing.T, n int, vs ...*rawViewer) {
	t.Helper()
	bustest.Wait(t, fmt.Sprintf("%d events at each of %d viewers", n, len(vs)), func() (bool, string) {
		var counts []int
		ok := true
		for _, v := range vs {
			ev, _, _ := v.got()
			counts = append(counts, len(ev))
			ok = ok && len(ev) >= n
		}
		return ok, fmt.Sprintf("viewers have %v events", counts)
	})
}

// TestNamedBoardSaysItsGameOnce: a board event carries its port's game only when
// the game differs from the one the port's last event said (or the port is new):
// a named board's next results are sent without their players, within a few bytes
// of an unnamed board's (a new port without a game says "game":null once); a round loaded puts the new game in the port's next event,
// a port left without a game says "game":null; a new viewer's first screen has
// every port's game (or null). Every viewer, of every port, of one port and of one
// player, ends knowing the hub's games, and none is sent a board without its game
// before the game.
func TestNamedBoardSaysItsGameOnce(t *testing.T) {
	s, ts := hubServer(t)
	ctx := context.Background()
	round := func(n int, black, white string) *Game {
		return (&Game{Round: n, Table: 7, Black: Player{black, "3d"}, White: Player{white, "1k"}}).clipped()
	}
	put := func(port string, seq uint64) {
		s.hub.put(ctx, &Board{Port: port, Problem: "goscore", Seq: seq, Answer: "5 3\n", Revision: 100 + seq, Time: "2026-11-28T11:00:00Z"})
	}
	all := watchRaw(t, ts.URL+"/api/events")
	one := watchRaw(t, ts.URL+"/api/events?port=named")
	lee := watchRaw(t, ts.URL+"/api/events?player="+url.QueryEscape("lee sedol"))
	bustest.Wait(t, "the streams subscribed", func() (bool, string) {
		return s.streams.Load() == 3, fmt.Sprintf("%d of 3 streams", s.streams.Load())
	})

	// Round 1: the port "named" has Lee's game; "plain" has none. Each gets three
	// results.
	s.hub.setGame(ctx, "named", round(1, "Lee Sedol", "Jürgen Müller-Straße"), false)
	for seq := uint64(1); seq <= 3; seq++ {
		put("named", seq)
		put("plain", seq)
	}
	waitRaw(t, 7, all)
	events, _, _ := all.got()
	if !bytes.Contains(events[0], []byte(`"game":{"round":1`)) {
		t.Errorf("the port's game set: its event %s, want its game", events[0])
	}
	// A new port says it has no game, once.
	if plain := events[2]; !bytes.Contains(plain, []byte(`"game":null`)) {
		t.Errorf("a new port without a game: its first event %s, want \"game\":null", plain)
	}
	for i := 3; i < 7; i += 2 {
		named, plain := events[i], events[i+1]
		if bytes.Contains(named, []byte(`"game"`)) || bytes.Contains(plain, []byte(`"game"`)) {
			t.Errorf("result %d: a board whose game did not change says a game:\n%s\n%s", i/2+1, named, plain)
		}
		t.Logf("result %d: a named board's event %d bytes, an unnamed one's %d", i/2+1, len(named), len(plain))
		if d := len(named) - len(plain); d < 0 || d > 2 {
			t.Errorf("result %d: a named board's event is %d bytes, an unnamed one's %d: want within 2 bytes (the port's name)\n%s\n%s", i/2+1, len(named), len(plain), named, plain)
		}
	}

	// A viewer who comes now: each port's game (or null) in its first screen.
	late := watchRaw(t, ts.URL+"/api/events")
	lateLee := watchRaw(t, ts.URL+"/api/events?player=lee")
	waitRaw(t, 2, late)
	waitRaw(t, 1, lateLee)
	for _, v := range []*rawViewer{late, lateLee} {
		first, _, _ := v.got()
		for _, ev := range first {
			if !bytes.Contains(ev, []byte(`"game":{"round":1`)) && !bytes.Contains(ev, []byte(`"game":null`)) {
				t.Errorf("a new viewer's first screen: %s, want its game or \"game\":null", ev)
			}
		}
	}

	// Round 2: Lee moves to "plain", "named" has no game. The next event of each
	// port carries its new game; the results after it do not.
	s.hub.setGame(ctx, "named", nil, false)
	s.hub.setGame(ctx, "plain", round(2, "Cho Chikun", "Lee Sedol"), false)
	put("named", 4)
	put("plain", 4)
	s.hub.setGame(ctx, "named", round(3, "Ana Smith", "Zoë Ångström"), false)
	s.hub.setGame(ctx, "named", round(3, "Ana Smith", "Zoë Ångström"), false) // the same round again
	put("named", 5)
	waitRaw(t, 14, all)
	events, _, _ = all.got()
	for i, want := range []string{`"game":null`, `"game":{"round":2`, "", "", `"game":{"round":3`, "", ""} {
		ev := events[7+i]
		if want == "" && bytes.Contains(ev, []byte(`"game"`)) || want != "" && !bytes.Contains(ev, []byte(want)) {
			t.Errorf("event %d after round 2: %s, want %q", 8+i, ev, wantOr(want, "no game"))
		}
	}

	waitRaw(t, 14-5, late) // its 2 first, then 7
	want := map[string]string{"named": "Ana Smith - Zoë Ångström (3)", "plain": "Cho Chikun - Lee Sedol (2)"}
	for name, c := range map[string]struct {
		v    *rawViewer
		want map[string]string
	}{
		"every port":       {all, want},
		"every port, late": {late, want},
		"?port=named":      {one, map[string]string{"named": want["named"]}},
		// Lee's stream is told the game that takes Lee from "named" (null), and
		// "plain"'s with Lee in it.
		"?player=lee sedol":  {lee, map[string]string{"named": "", "plain": want["plain"]}},
		"?player=lee (late)": {lateLee, map[string]string{"named": "", "plain": want["plain"]}},
	} {
		bustest.Wait(t, name+"'s games", func() (bool, string) {
			_, games, blind := c.v.got()
			if len(blind) > 0 {
				t.Fatalf("%s: a board event without its game before its game: %q", name, blind)
			}
			return fmt.Sprint(games) == fmt.Sprint(c.want), fmt.Sprintf("%v, want %v", games, c.want)
		})
	}
	// Lee's stream got only the events of Lee's games: nothing of "named" after
	// Lee left it.
	events, _, _ = lee.got()
	for _, ev := range events {
		if bytes.Contains(ev, []byte(`"round":3`)) || bytes.Contains(ev, []byte(`"seq":5`)) {
			t.Errorf("Lee's stream told a board Lee no longer plays at: %s", ev)
		}
	}
}

func wantOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
