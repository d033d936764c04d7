package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
)

// TestRunPageDelayed: a real 'scoreboard run --http-delay 10s' says its delay on
// /api/status and holds a unit its port read from /api/boards until
// its board was stored 10 s ago, then shows it: the setting reaches the page.
// 'history' shows the unit at once: the arbiters' tools are not delayed.
func TestRunPageDelayed(t *testing.T) {
	// Long enough that the unit, the bucket's read and the first question fit in it
	// on a busy machine: at 3 s an in-process sibling test was once never
	// asked while its unit was held, under -race in CI's race suite.
	const delay = 10 * time.Second
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	natsAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	httpAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	pt := runPTY(t)
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", natsAddr, "--http", httpAddr, "--http-delay", delay.String(),
		"--port", pt.Path, "--port-name", "desk", "--problem", "goscore", "--baud", "115200")
	runWaitOpened(t, pt, run)
	run.WaitOutput("serving the scoreboard page", 60*time.Second)
	proctest.WaitTCP(t, httpAddr, 30*time.Second)
	base := "http://" + httpAddr
	var status struct {
		Delay float64 `json:"delay_seconds"`
	}
	getJSON(t, base+"/api/status", &status)
	if status.Delay != delay.Seconds() {
		t.Fatalf("/api/status delay_seconds %v, want %v", status.Delay, delay.Seconds())
	}

	diskUnits(t, pt.Master, pt.Master, 0, 2, run)
	js, err := jetstream.New(busConnect(t, "nats://"+natsAddr))
	if err != nil {
		t.Fatal(err)
	}
	var stored time.Time
	var seq uint64
	bustest.Wait(t, "desk's board in the bucket", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Boards())
		if err != nil {
			return false, err.Error()
		}
		en, err := kv.Get(ctx, "desk")
		if err != nil {
			return false, err.Error()
		}
		var r result.Kept
		_ = json.Unmarshal(en.Value(), &r)
		stored, seq = en.Created(), r.Seq
		return true, ""
	})
	// The arbiters' tools stay live: history shows the unit the page holds.
	code, out, errs := runCmd(t, "", "history", "--port", "desk", "--last", "10", "--nats-url", "nats://"+natsAddr)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("#%d ", seq)) {
		t.Fatalf("history --port desk --last 10 while the page holds unit %d: exit %d\n%s\n%s", seq, code, out, errs)
	}
	if time.Now().Before(stored.Add(delay)) {
		t.Logf("history showed unit %d %v before the page may", seq, time.Until(stored.Add(delay)).Round(time.Millisecond))
	}
	held := 0
	bustest.Wait(t, "desk's unit on /api/boards", func() (bool, string) {
		var boards []struct {
			Port string `json:"port"`
			Seq  uint64 `json:"seq"`
		}
		getJSON(t, base+"/api/boards", &boards)
		shown := false
		for _, b := range boards {
			shown = shown || (b.Port == "desk" && b.Seq == seq)
		}
		if time.Now().Before(stored.Add(delay)) {
			held++
			if shown {
				t.Fatalf("desk's unit %d on /api/boards %v before its time", seq, time.Until(stored.Add(delay)))
			}
		}
		return shown, fmt.Sprintf("%d boards; asked %d times while held", len(boards), held)
	})
	if held == 0 {
		t.Fatalf("/api/boards was never asked while desk's unit was held: a stall longer than %v", delay)
	}
}

// TestHubPageDelaySIGHUP: a real 'scoreboard hub' takes league.http_delay and the
// [[club]] tables' delay, and /api/status says them; a SIGHUP with the clubs'
// delays changed is on the page at once, without a restart.
func TestHubPageDelaySIGHUP(t *testing.T) {
	hub, page, write := hubWithFile(t, "http_delay = \"10m\"\n", "[[club]]\nname = \"north\"\ntoken = \"tn\"\ndelay = \"0s\"\n[[club]]\nname = \"south\"\ntoken = \"ts\"\n")
	type status struct {
		Delay float64            `json:"delay_seconds"`
		Clubs map[string]float64 `json:"club_delay_seconds"`
	}
	var st status
	getJSON(t, page+"/api/status", &st)
	if st.Delay != 600 || fmt.Sprint(st.Clubs) != "map[north:0]" {
		t.Fatalf("/api/status: %+v; want delay_seconds 600 and north's 0 alone", st)
	}
	write("[[club]]\nname = \"north\"\ntoken = \"tn\"\n[[club]]\nname = \"south\"\ntoken = \"ts\"\ndelay = \"1m\"\n")
	if err := hub.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	hub.WaitOutput("SIGHUP: clubs reloaded", 30*time.Second)
	st = status{}
	getJSON(t, page+"/api/status", &st)
	if st.Delay != 600 || fmt.Sprint(st.Clubs) != "map[south:60]" {
		t.Fatalf("/api/status after the SIGHUP: %+v; want delay_seconds 600 and south's 60 alone", st)
	}
}

// hubWithFile starts a real 'scoreboard hub' on a file of its own: [league] on
// free ports and a state dir, with the keys in league (lines ending in "\n"), then
// the [[club]] tables clubs. write puts other clubs in the file, for a SIGHUP.
func hubWithFile(t *testing.T, league, clubs string) (hub *proctest.Process, page string, write func(clubs string)) {
	t.Helper()
	root := t.TempDir()
	httpPort := proctest.FreePort(t)
	head := fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\n%sstate_dir = %q\n",
		proctest.FreePort(t), proctest.FreePort(t), httpPort, league, filepath.Join(root, "hub"))
	path := filepath.Join(root, "hub.toml")
	write = func(clubs string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(head+clubs), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(clubs)
	hub = proctest.Start(t, proctest.Scoreboard(t), "hub", "--config", path, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	page = fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	proctest.WaitTCP(t, fmt.Sprintf("127.0.0.1:%d", httpPort), 30*time.Second)
	return hub, page, write
}
