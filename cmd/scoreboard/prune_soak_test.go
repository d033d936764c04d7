package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/prune"
	"github.com/goclub/scoreboard/serialio"
)

// The keeper of package prune, as `run` and `hub` wire it: a stream past 15/16 of
// its max_bytes is purged of its oldest units by the process's own keeper, within
// a look or two (prune.DefaultEvery), before the server's limit would drop them
// one by one. The tests are named Soak for .ci/run's load stage: each fills a
// stream of the least size (16 MiB) and waits for a look, mostly idle.

// pruneLine is the length a placement of pruneReplayUnit is padded to: a replay
// line's most (engine's replayMaxLine), so that a unit is some 20 KiB, and 15 MiB
// of history takes some 750 units. The stream keeps a dump as the port read it,
// white space and all.
const pruneLine = 80

// pruneReplayUnit is a valid replay unit of 190 to 340 placements whose answer is
// different for each k below 76*76: black walls off the top eight rows and puts a
// stones inside them, white the bottom eight and b stones; the middle row is
// neutral, so black owns 152-a vacant points and white 152-b, and nothing is
// captured. Every placement touches an empty point or its own wall, which touches
// the empty middle row: none is suicide.
func pruneReplayUnit(t *testing.T, k int) (unit, answer string) {
	t.Helper()
	a, b := 76+k%76, 76+(k/76)%76
	var s strings.Builder
	place := func(colour byte, r, c int) { // row and column from 0: x = c-9, y = r-9
		line := fmt.Sprintf("%c(%d,%d)", colour, c-9, r-9)
		s.WriteString(line + strings.Repeat(" ", pruneLine-len(line)) + "\n")
	}
	fmt.Fprintf(&s, "19 %d\n", 38+a+b)
	for c := range 19 {
		place('B', 8, c)
		place('W', 10, c)
	}
	for i := range a {
		place('B', i/19, i%19)
	}
	for i := range b {
		place('W', 18-i/19, 18-i%19)
	}
	p, _ := engine.Lookup("replay")
	ans, err := p.Append(nil, []byte(s.String()))
	if err != nil {
		t.Fatalf("replay unit %d: %v", k, err)
	}
	if want := fmt.Sprintf("%d %d\n", 152-a, 152-b); string(ans) != want {
		t.Fatalf("replay unit %d: answer %q, want %q", k, ans, want)
	}
	return s.String(), string(ans)
}

// pruneFeed is a replay port's device: the units it sent and what it read.
type pruneFeed struct {
	pt   *serialio.PTY
	got  proctest.Buffer
	want []string
}

func newPruneFeed(pt *serialio.PTY) *pruneFeed {
	f := &pruneFeed{pt: pt}
	go func() { _, _ = io.Copy(&f.got, pt.Master) }()
	return f
}

// fill sends units 16 at a time (some 330 KiB) until the stream that state reads
// holds more than High of maxBytes, or was pruned already, and returns its state
// then. After each batch it waits for the answers, and for state to say the
// stream took them (an answer is written once its result is stored,
// daemon.Stored; at the hub it has to be sourced too): so the stream stops within
// a batch of High, well short of the limit a sixteenth above.
func (f *pruneFeed) fill(t *testing.T, maxBytes int64, state func() (st jetstream.StreamState, took bool, counts string)) jetstream.StreamState {
	t.Helper()
	const batch = 16
	var st jetstream.StreamState
	for st.Bytes <= uint64(prune.High(maxBytes)) && st.FirstSeq <= 1 {
		if len(f.want) > 4000 {
			t.Fatalf("the stream holds %d bytes after %d units: it does not fill", st.Bytes, len(f.want))
		}
		var in bytes.Buffer
		for range batch {
			u, a := pruneReplayUnit(t, len(f.want))
			in.WriteString(u)
			f.want = append(f.want, a)
		}
		if _, err := f.pt.Master.Write(in.Bytes()); err != nil {
			t.Fatal(err)
		}
		bustest.Wait(t, "the batch's answers", func() (bool, string) {
			n := strings.Count(f.got.String(), "\n")
			return n >= len(f.want), fmt.Sprintf("%d of %d answers", n, len(f.want))
		})
		bustest.Wait(t, "the stream to take the batch", func() (bool, string) {
			var took bool
			var counts string
			st, took, counts = state()
			return took, counts
		})
	}
	return st
}

// streamState is a stream's state, read with js.
func streamState(js jetstream.JetStream, name string) (jetstream.StreamState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		return jetstream.StreamState{}, err
	}
	return s.CachedInfo().State, nil
}

// waitPruned waits, for a few looks of a keeper, until the stream name is pruned
// (its first sequence past 1, at most High of maxBytes) and the metric at
// metrics counts the units dropped; it fails unless they are the messages
// missing from the stream's start: the server's limit dropped none.
func waitPruned(t *testing.T, js jetstream.JetStream, name string, maxBytes int64, metrics, metric string, full jetstream.StreamState) jetstream.StreamState {
	t.Helper()
	var st jetstream.StreamState
	var pruned float64
	bustest.WaitWithin(t, 4*prune.DefaultEvery+bustest.Long/4, "the keeper to prune "+name, func() (bool, string) {
		var err error
		if st, err = streamState(js, name); err != nil {
			return false, err.Error()
		}
		pruned = metricValue(metrics, metric)
		return st.FirstSeq > 1 && st.Bytes <= uint64(prune.High(maxBytes)) && pruned > 0,
			fmt.Sprintf("%s: %d messages, %d bytes, sequences %d-%d (at its fullest %d bytes, High %d); %s %v",
				name, st.Msgs, st.Bytes, st.FirstSeq, st.LastSeq, full.Bytes, prune.High(maxBytes), metric, pruned)
	})
	counts := fmt.Sprintf("%s: %d messages, %d bytes, sequences %d-%d, %d deleted; %s %v",
		name, st.Msgs, st.Bytes, st.FirstSeq, st.LastSeq, st.NumDeleted, metric, pruned)
	t.Log(counts)
	if uint64(pruned) != st.FirstSeq-1 || st.Msgs+uint64(pruned) != st.LastSeq {
		t.Errorf("the stream lost messages its keeper did not drop (the server's limit took them): %s", counts)
	}
	if st.Bytes < uint64(prune.Low(maxBytes))-(1<<20) {
		t.Errorf("the stream was pruned below %d bytes: %s", prune.Low(maxBytes)-(1<<20), counts)
	}
	return st
}

// pruneShare is the stream's max_bytes in these tests: the least a history and a
// club's share take.
const pruneShare = 16 << 20

// TestHistoryPruneSoak: `run` with the least history (max_bytes 16 MiB), a replay
// port sent 20 KiB units until the stream holds more than 15/16 of it. Within a
// few looks of run's keeper (every 10 s) the stream is pruned to at most High,
// its first sequence past 1, and scoreboard_history_pruned_messages_total is the
// messages missing from its start: the server's limit dropped none. Every unit
// sent is answered once, right, in order.
func TestHistoryPruneSoak(t *testing.T) {
	start := time.Now()
	pt := runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	web := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr, "--http", web,
		"--state-dir", filepath.Join(t.TempDir(), "state"), "--history-max-bytes", "16MiB",
		"--port", pt.Path, "--problem", "replay", "--baud", "115200", "--error-line")
	runWaitOpened(t, pt, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	js := historyJetStream(t, "nats://"+addr)
	f := newPruneFeed(pt)
	full := f.fill(t, pruneShare, func() (jetstream.StreamState, bool, string) {
		st, err := streamState(js, "SCOREBOARD")
		return st, err == nil, fmt.Sprint(err)
	})
	t.Logf("%d units sent in %v; the stream: %d messages, %d bytes, first %d (High %d)",
		len(f.want), time.Since(start).Round(time.Millisecond), full.Msgs, full.Bytes, full.FirstSeq, prune.High(pruneShare))
	waitPruned(t, js, "SCOREBOARD", pruneShare, "http://"+web+"/metrics", "scoreboard_history_pruned_messages_total", full)
	faulttest.Tally("history at its limit", f.want, f.got.String()).Check(t)
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}

// TestLeaguePruneSoak: a hub whose club's share is the least (league.club_max_bytes
// 16MiB), and the club a `run` process linked to it, its replay port sent 20 KiB
// units until the club's stream at the hub holds more than 15/16 of the share.
// Within a few looks of the hub's keeper (every 10 s) that stream is pruned to at
// most High, and scoreboard_league_pruned_messages_total on the hub's /metrics is
// the messages missing from its start: the server's limit dropped none. The
// stream holds the club's last units, each once, and every unit sent is answered
// once, right, in order.
func TestLeaguePruneSoak(t *testing.T) {
	start := time.Now()
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hubPort, leafPort, httpPort := proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\nclub_max_bytes = \"16MiB\"\n\n[[club]]\nname = \"north\"\ntoken = \"token-north\"\n",
		hubPort, leafPort, httpPort, filepath.Join(root, "hub")), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)

	t.Setenv("SCOREBOARD_HUB_TOKEN", "token-north")
	pt := runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	run := proctest.Start(t, bin, "run", "--hub-url", fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort), "--hub-club", "north",
		"--nats-listen", addr, "--http", "off", "--state-dir", filepath.Join(root, "north"), "--history-max-bytes", "64MiB",
		"--port", pt.Path, "--problem", "replay", "--baud", "115200", "--error-line")
	runWaitOpened(t, pt, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	own := historyJetStream(t, "nats://"+addr)
	hjs := historyJetStream(t, fmt.Sprintf("nats://127.0.0.1:%d", hubPort))
	name := league.ClubStream("north")

	f := newPruneFeed(pt)
	full := f.fill(t, pruneShare, func() (jetstream.StreamState, bool, string) {
		o, err := streamState(own, "SCOREBOARD")
		if err != nil {
			return o, false, "the club's stream: " + err.Error()
		}
		h, err := streamState(hjs, name)
		if err != nil {
			return h, false, name + ": " + err.Error()
		}
		return h, h.LastSeq >= o.LastSeq, fmt.Sprintf("the club's stream's last sequence %d, %s's %d", o.LastSeq, name, h.LastSeq)
	})
	t.Logf("%d units sent in %v; %s: %d messages, %d bytes, first %d (High %d)",
		len(f.want), time.Since(start).Round(time.Millisecond), name, full.Msgs, full.Bytes, full.FirstSeq, prune.High(pruneShare))
	st := waitPruned(t, hjs, name, pruneShare, fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort), "scoreboard_league_pruned_messages_total", full)

	// The club's units at the hub: its last ones, each once; the oldest dropped.
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	dumps, results := map[string][]string{}, map[string][]string{}
	if !clubUnits(t, ctx, hjs, name, dumps, results) {
		t.Fatalf("%s could not be read", name)
	}
	first, bad := pruneUnitsOnce(dumps["north"], results["north"], len(f.want))
	counts := fmt.Sprintf("%s: %d dumps and %d results (%d messages), units %d-%d of the %d sent", name, len(dumps["north"]), len(results["north"]), st.Msgs, first, len(f.want), len(f.want))
	t.Log(counts)
	if len(bad) > 0 || first <= 1 || uint64(len(dumps["north"])+len(results["north"])) != st.Msgs {
		t.Errorf("the club's units at the hub are not its last ones, each once: %s; %s", counts, strings.Join(bad[:min(len(bad), 10)], "; "))
	}
	faulttest.Tally("club's stream at its share", f.want, f.got.String()).Check(t)
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}

// pruneUnitsOnce checks a stream's dumps and results ("origin seq", one port) of a
// port that sent units 1..n: the dumps are first..n in order, each once, and the
// results each once, every one of first..n there (a result may outlive its dump
// by a few: a purge cuts at a sequence, and a result follows its dump).
func pruneUnitsOnce(dumps, results []string, n int) (first int, bad []string) {
	seq := func(u string) int {
		_, s, _ := strings.Cut(u, " ")
		k, _ := strconv.Atoi(s)
		return k
	}
	if len(dumps) == 0 {
		return 0, []string{"no dumps"}
	}
	first = seq(dumps[0])
	origin, _, _ := strings.Cut(dumps[0], " ")
	for i, u := range dumps {
		if o, _, _ := strings.Cut(u, " "); o != origin || seq(u) != first+i {
			bad = append(bad, fmt.Sprintf("dump %d is %q, want %s %d", i, u, origin, first+i))
		}
	}
	if last := seq(dumps[len(dumps)-1]); last != n {
		bad = append(bad, fmt.Sprintf("the last dump is unit %d, want %d", last, n))
	}
	seen := map[int]int{}
	for _, u := range results {
		if o, _, _ := strings.Cut(u, " "); o != origin || seq(u) < 1 || seq(u) > n {
			bad = append(bad, fmt.Sprintf("result %q: no unit sent", u))
		}
		seen[seq(u)]++
	}
	for k := range seen {
		if seen[k] > 1 {
			bad = append(bad, fmt.Sprintf("unit %d's result %d times", k, seen[k]))
		}
	}
	for k := first; k <= n; k++ {
		if seen[k] == 0 {
			bad = append(bad, fmt.Sprintf("unit %d's result missing", k))
		}
	}
	return first, bad
}
