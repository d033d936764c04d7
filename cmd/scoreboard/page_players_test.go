package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/serialio"
)

// playerEvent is a board event of a page's stream as these tests read it: its
// port, unit and players ("Black - White", "" for none), and when it was read.
type playerEvent struct {
	Port, Players string
	Seq           uint64
	At            time.Time
}

// streamOf reads the page's /api/events with query until the test ends; the
// function returned lists the board events read so far.
func streamOf(t *testing.T, page, query string) func() []playerEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, page+"/api/events"+query, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/api/events%s: %s", query, resp.Status)
	}
	var mu sync.Mutex
	var seen []playerEvent
	done := make(chan struct{})
	players := map[string]string{} // by port, the reader's alone
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type  string
				Port  string
				Board *struct {
					Port string
					Seq  uint64
					Game json.RawMessage
				}
			}
			if json.Unmarshal([]byte(data), &ev) != nil {
				continue
			}
			if ev.Type == "remove" {
				delete(players, ev.Port)
			}
			if ev.Board == nil {
				continue
			}
			// An event says its port's game when it changed (docs/page.md): the
			// players are the stream's last word on the port, as the page keeps.
			if ev.Board.Game != nil {
				var g *struct{ Black, White struct{ Name string } }
				_ = json.Unmarshal(ev.Board.Game, &g)
				players[ev.Board.Port] = ""
				if g != nil {
					players[ev.Board.Port] = g.Black.Name + " - " + g.White.Name
				}
			}
			e := playerEvent{Port: ev.Board.Port, Seq: ev.Board.Seq, At: time.Now(), Players: players[ev.Board.Port]}
			mu.Lock()
			seen = append(seen, e)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return func() []playerEvent {
		mu.Lock()
		defer mu.Unlock()
		return append([]playerEvent(nil), seen...)
	}
}

// TestPagePlayersDaemon: a real daemon whose page is delayed (http.delay 8s) and
// two pty ports at tables 1 and 2 loads the OpenGotha file's round 2 with
// `scoreboard pairings load`. While lobby's unit is held, neither /api/boards nor
// /api/events, asked by its player's name, shows its board or its players; once
// the delay is past, they show lobby's board with Jürgen Müller-Straße and
// 王小明, and the player's stream has told lobby's board alone, and no sooner
// than the delay after the load. A club's page has no clubs: ?club= is a 400,
// /clubs and /clubs/<name> 404s.
func TestPagePlayersDaemon(t *testing.T) {
	proctest.SkipShort(t, "a daemon process with two ports")
	const delay = 8 * time.Second
	bin := proctest.Scoreboard(t)
	run, lobby, addr, page, state := startPlayersDaemon(t, bin, delay)
	player := "?player=" + url.QueryEscape("müller-straße")
	events := streamOf(t, page, player)
	evry, _ := filepath.Abs("../../pairing/testdata/evry.xml")
	loaded := time.Now()
	if code, out := pairingsLoad(t, bin, "--nats-url", "nats://"+addr, "--daemon-state-dir", state, evry); code != 0 {
		t.Fatalf("pairings load: exit %d:\n%s", code, out)
	}
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	if _, err := lobby.Master.Write(in); err != nil {
		t.Fatal(err)
	}
	runReadAnswers(t, lobby, len(want), run)
	// The attacker's view while lobby's units are held: its player and its port.
	for _, q := range []string{player, "?player=" + url.QueryEscape("王小明"), "?port=lobby", ""} {
		var got []struct {
			Port string
			Seq  uint64
		}
		getJSON(t, page+"/api/boards"+q, &got)
		for _, b := range got {
			if b.Port == "lobby" {
				t.Errorf("/api/boards%s shows lobby (unit %d) within the page's delay", q, b.Seq)
			}
		}
	}
	if held := time.Since(loaded); held >= delay {
		t.Fatalf("the held view was read %v after the load, past the delay %v: nothing was tried within it", held, delay)
	}
	checkClubPageRefusals(t, page)

	bustest.Wait(t, "lobby's board with its players, after the delay", func() (bool, string) {
		var got []struct {
			Port string
			Seq  uint64
			Game *struct{ Black, White struct{ Name string } }
		}
		getJSON(t, page+"/api/boards"+player, &got)
		return len(got) == 1 && got[0].Port == "lobby" && got[0].Seq > 0 && got[0].Game != nil &&
			got[0].Game.Black.Name == "Jürgen Müller-Straße" && got[0].Game.White.Name == "王小明", fmt.Sprintf("%+v", got)
	})
	bustest.Wait(t, "the player's stream told lobby's board", func() (bool, string) {
		for _, e := range events() {
			if e.Port == "lobby" && e.Seq > 0 {
				return true, ""
			}
		}
		return false, fmt.Sprint(events())
	})
	for _, e := range events() {
		if e.Port != "lobby" || e.Players != "Jürgen Müller-Straße - 王小明" {
			t.Errorf("the stream of %s told %+v: want lobby's board with its players alone", player, e)
		}
		if early := e.At.Sub(loaded); early < delay {
			t.Errorf("the stream of %s told %+v %v after the load, within the page's delay %v", player, e, early, delay)
		}
	}
	t.Logf("%d events on the player's stream, the first %v after the load", len(events()), events()[0].At.Sub(loaded).Round(time.Millisecond))
}

// startPlayersDaemon starts a real daemon whose page, delayed by delay, is on a
// port of its own, with two pty ports: lobby at table 1, hall at table 2. It
// returns the daemon, lobby's pty, its NATS address, its page and its state dir.
func startPlayersDaemon(t *testing.T, bin string, delay time.Duration) (*proctest.Process, *serialio.PTY, string, string, string) {
	t.Helper()
	lobby, hall := runPTY(t), runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	page := "http://127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	conf, state := filepath.Join(t.TempDir(), "scoreboard.toml"), t.TempDir()
	err := os.WriteFile(conf, fmt.Appendf(nil, `
[nats]
listen = %q
[http]
listen = %q
delay = "%s"
[daemon]
state_dir = %q
[[port]]
name = "lobby"
device = %q
problem = "goscore"
baud = 115200
table = 1
[[port]]
name = "hall"
device = %q
problem = "goscore"
baud = 115200
table = 2
`, addr, strings.TrimPrefix(page, "http://"), delay, state, lobby.Path, hall.Path), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	run := proctest.Start(t, bin, "run", "--config", conf)
	runWaitOpened(t, lobby, run)
	runWaitOpened(t, hall, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	proctest.WaitTCP(t, strings.TrimPrefix(page, "http://"), 30*time.Second)
	return run, lobby, addr, page, state
}

// checkClubPageRefusals: a club's page has no clubs: /clubs and /clubs/<name>
// are 404s, ?club= a 400, as a bad ?player= is.
func checkClubPageRefusals(t *testing.T, page string) {
	t.Helper()
	for _, path := range []string{"/clubs", "/clubs/north", "/clubs/lobby"} {
		resp, err := http.Get(page + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s on a club's page: %s, want 404 (a club's page has no clubs)", path, resp.Status)
		}
	}
	for _, q := range []string{"?club=north", "?player=x", "?player=" + strings.Repeat("x", 50)} {
		resp, err := http.Get(page + "/api/events" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("/api/events%s on a club's page: %s, want 400", q, resp.Status)
		}
	}
}
