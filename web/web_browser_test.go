package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/result"
)

// boardValue is a value of the board bucket as the history writes it: the result's
// fields, the unit, the time, and othello's board after the command.
func boardValue(t *testing.T, problem, port string, seq uint64, unit []byte, at time.Time) []byte {
	t.Helper()
	p, _ := engine.Lookup(problem)
	ans, err := p.Solve(unit)
	if err != nil {
		t.Fatalf("%s unit %d: %v", problem, seq, err)
	}
	res, _ := json.Marshal(ans)
	v := result.Kept{
		Record: result.Record{Problem: problem, Port: port, Seq: seq, Answer: string(ans.AppendText(nil)), Result: res, Worker: "test"},
		Unit:   string(unit), Time: at.Format(time.RFC3339Nano),
	}
	if a, ok := ans.(engine.OthelloAnswer); ok {
		pos := a.Position()
		v.Board = strings.Split(strings.TrimSuffix(string(pos.AppendBoard(nil)), "\n"), "\n")
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPageFollowsBoardBucket: the page shows the board bucket's values when it loads,
// follows every put live without a reload (each problem's score and picture change
// within 1 s), shows a port's state, recovers by itself after the NATS server
// restarts, and requests no host but its own.
func TestPageFollowsBoardBucket(t *testing.T) {
	b := browsertest.New(t)
	// The page reads as a tool ('scoreboard web'); the daemon's history writes.
	ns := bustest.Start(t, bustest.Options{JetStream: true})
	nc, wnc := ns.Tool(), ns.Daemon()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	js, _ := jetstream.New(wnc)
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: subj.Boards(), Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, stopWeb := serveTestPage(t, nc, pageOpts{ln: ln})
	base := "http://" + ln.Addr().String()

	units := map[string][][]byte{}
	for _, c := range samples.Cases {
		if _, ok := units[c.Problem]; !ok {
			units[c.Problem] = samples.Units(t, c.Problem, c.File+".in")
		}
	}
	put := func(problem, port string, seq uint64, unit []byte) time.Time {
		t.Helper()
		at := time.Now()
		if _, err := kv.Put(ctx, port, boardValue(t, problem, port, seq, unit, at)); err != nil {
			t.Fatalf("put %s: %v", port, err)
		}
		return at
	}
	// A board kept before the page loads is there when it loads.
	put("goscore", "hall", 7, units["goscore"][0])
	b.Do(t, 30*time.Second, chromedp.Navigate(base+"/"))
	b.WaitTile(t, "hall", 10*time.Second, "the board kept before the page loaded", func(v browsertest.Tile) bool {
		return v.Seq == 7 && v.Stones > 0
	})

	checkEveryProblemLive(t, b, units, put)

	// The port's state, as the daemon publishes it.
	since := time.Date(2026, 11, 23, 19, 42, 0, 0, time.Local)
	st, _ := json.Marshal(bus.PortState{Port: "hall", State: bus.PortUnplugged, Since: since})
	if err := wnc.Publish(subj.PortState("hall"), st); err != nil {
		t.Fatal(err)
	}
	b.WaitTile(t, "hall", 10*time.Second, "the unplugged state", func(v browsertest.Tile) bool {
		return v.State == "unplugged since 19:42"
	})

	// The server restarts: the page's server reconnects and follows the bucket again.
	ns.Restart()
	// The daemon's in-process connection ends with its server; its history writes
	// again on a new one.
	if js, err = jetstream.New(ns.Daemon()); err != nil {
		t.Fatal(err)
	}
	if kv, err = js.KeyValue(ctx, subj.Boards()); err != nil {
		t.Fatalf("the bucket after the restart: %v", err)
	}
	putUntilShown(t, b, kv, units["replay"][0])

	// The page's server restarts (as 'scoreboard run --http' does with the daemon):
	// the page notices, reconnects by itself, and follows the bucket again.
	addr := ln.Addr().String()
	stopWeb()
	b.WaitConn(t, "reconnecting…")
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	_, stopWeb = serveTestPage(t, nc, pageOpts{ln: ln})
	b.WaitConn(t, "live")
	before := b.ReadTile(t, "desk-goscore")
	put("goscore", "desk-goscore", 9, units["goscore"][0])
	b.WaitTile(t, "desk-goscore", 10*time.Second, "a board put after the page's server restarted", func(v browsertest.Tile) bool {
		return v.Seq == 9 && v.Applied > before.Applied
	})

	// SCOREBOARD_SCREENSHOTS=DIR keeps the pictures (docs/ has those of
	// TestPageReadableAcrossRoom).
	shots := os.Getenv("SCOREBOARD_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	b.Screenshot(t, filepath.Join(shots, "page.png"))

	checkLargeView(t, b, base, shots)

	// No host but the page's own, in the whole visit.
	hosts, urls := b.Hosts()
	if len(hosts) != 1 || hosts[0] != base {
		t.Errorf("the page requested hosts %v, want only %s; URLs: %v", hosts, base, urls)
	}
}

// checkEveryProblemLive: every problem, two units one after the other on the same
// port; each shows its answer and its picture within 1 s, without a reload.
func checkEveryProblemLive(t *testing.T, b *browsertest.Browser, units map[string][][]byte, put func(problem, port string, seq uint64, unit []byte) time.Time) {
	t.Helper()
	var delays []time.Duration
	for _, problem := range engine.Names() {
		port := "desk-" + problem
		us := units[problem]
		var prev browsertest.Tile
		for i, unit := range us[:min(2, len(us))] {
			seq := uint64(i + 1)
			p, _ := engine.Lookup(problem)
			ans, _ := p.Solve(unit)
			want := string(ans.AppendText(nil))
			at := put(problem, port, seq, unit)
			v := b.WaitTile(t, port, 10*time.Second, fmt.Sprintf("unit %d", seq), func(v browsertest.Tile) bool {
				return v.Seq == seq
			})
			delay := time.UnixMilli(v.Applied).Sub(at)
			delays = append(delays, delay)
			if delay > time.Second {
				t.Errorf("%s unit %d: shown %v after the put, want within 1s", problem, seq, delay)
			}
			if v.Answer != want {
				t.Errorf("%s unit %d: answer %q, want %q", problem, seq, v.Answer, want)
			}
			if v.Stones == 0 || !strings.Contains(v.Pic, "<svg") {
				t.Errorf("%s unit %d: no picture (%d stones)", problem, seq, v.Stones)
			}
			if i > 0 && v.Pic == prev.Pic {
				t.Errorf("%s: the picture did not change from unit %d to %d", problem, i, seq)
			}
			if v.Problem != problem {
				t.Errorf("%s: the tile says problem %q", problem, v.Problem)
			}
			prev = v
		}
	}
	t.Logf("delays from put to shown: %v", delays)
}

// putUntilShown puts units of replay on hall, from seq 100, until the page shows
// one, within a minute: after a server restart its puts may fail for a while.
func putUntilShown(t *testing.T, b *browsertest.Browser, kv jetstream.KeyValue, unit []byte) {
	t.Helper()
	ctx := context.Background()
	var seq uint64 = 100
	deadline := time.Now().Add(60 * time.Second)
	for {
		at := time.Now()
		_, err := kv.Put(ctx, "hall", boardValue(t, "replay", "hall", seq, unit, at))
		if err == nil {
			// Any unit put since the restart: its picture is fetched after its
			// event, so the tile may show the one before the last put.
			if v := b.ReadTile(t, "hall"); v.Seq >= 100 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the server restarted, the page did not show a new board within 60s (last put error: %v)", err)
		}
		seq++
		time.Sleep(250 * time.Millisecond)
	}
}

// checkLargeView: the large view of one port is its tile alone.
func checkLargeView(t *testing.T, b *browsertest.Browser, base, shots string) {
	t.Helper()
	b.Do(t, 30*time.Second, chromedp.Navigate(base+"/boards/desk-goscore"))
	v := b.WaitTile(t, "desk-goscore", 10*time.Second, "the large view", func(v browsertest.Tile) bool { return v.Stones > 0 })
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll(".tile").length`); n != 1 {
		t.Errorf("the large view of desk-goscore shows %d tiles, want 1", n)
	}
	if v.Problem != "goscore" {
		t.Errorf("the large view shows problem %q", v.Problem)
	}
	b.Screenshot(t, filepath.Join(shots, "page-large.png"))
}
