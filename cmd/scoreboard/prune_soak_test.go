package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
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
	"github.com/goclub/scoreboard/prune"
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

// pruneScrape is a sample of the /metrics page at web, -1 when it is not there.
func pruneScrape(web, name string) float64 {
	resp, err := http.Get("http://" + web + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	v, ok := metric(string(page), name)
	if !ok {
		return -1
	}
	return v
}

// TestHistoryPruneSoak: `run` with the least history (max_bytes 16 MiB), a replay
// port sent 20 KiB units until the stream holds more than 15/16 of it. Within a
// few looks of run's keeper (every 10 s) the stream is pruned to at most High,
// its first sequence past 1, and scoreboard_history_pruned_units_total is the
// messages missing from its start: the server's limit dropped none. Every unit
// sent is answered once, right, in order.
func TestHistoryPruneSoak(t *testing.T) {
	start := time.Now()
	const maxBytes = 16 << 20
	pt := runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	web := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr, "--http", web,
		"--state-dir", filepath.Join(t.TempDir(), "state"), "--history-max-bytes", "16MiB",
		"--port", pt.Path, "--problem", "replay", "--baud", "115200", "--error-line")
	runWaitOpened(t, pt, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	js := historyJetStream(t, "nats://"+addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*bustest.Long)
	defer cancel()
	state := func() (jetstream.StreamState, error) {
		s, err := js.Stream(ctx, "SCOREBOARD")
		if err != nil {
			return jetstream.StreamState{}, err
		}
		return s.CachedInfo().State, nil
	}

	var got proctest.Buffer
	go func() { _, _ = io.Copy(&got, pt.Master) }()
	var want []string
	// A batch of 16 units is some 330 KiB: the stream is stopped within it of High,
	// well short of the limit a sixteenth above.
	const batch = 16
	var st jetstream.StreamState
	for st.Bytes <= uint64(prune.High(maxBytes)) && st.FirstSeq <= 1 {
		var in bytes.Buffer
		for range batch {
			u, a := pruneReplayUnit(t, len(want))
			in.WriteString(u)
			want = append(want, a)
		}
		if _, err := pt.Master.Write(in.Bytes()); err != nil {
			t.Fatal(err)
		}
		// An answer is written once its result is stored (daemon.Stored): the
		// stream holds every unit answered.
		bustest.Wait(t, "the batch's answers", func() (bool, string) {
			n := strings.Count(got.String(), "\n")
			return n >= len(want), fmt.Sprintf("%d of %d answers", n, len(want))
		})
		var err error
		if st, err = state(); err != nil {
			t.Fatal(err)
		}
		if len(want) > 4000 {
			t.Fatalf("the history holds %d bytes after %d units: it does not fill", st.Bytes, len(want))
		}
	}
	full := st
	t.Logf("%d units sent in %v; the stream: %d messages, %d bytes, first %d (High %d)",
		len(want), time.Since(start).Round(time.Millisecond), st.Msgs, st.Bytes, st.FirstSeq, prune.High(maxBytes))

	var pruned float64
	bustest.WaitWithin(t, 4*prune.DefaultEvery+bustest.Long/4, "run's keeper to prune the history", func() (bool, string) {
		var err error
		if st, err = state(); err != nil {
			return false, err.Error()
		}
		pruned = pruneScrape(web, "scoreboard_history_pruned_units_total")
		return st.FirstSeq > 1 && st.Bytes <= uint64(prune.High(maxBytes)) && pruned > 0,
			fmt.Sprintf("the stream: %d messages, %d bytes, sequences %d-%d (at its fullest %d bytes, High %d); pruned units %v",
				st.Msgs, st.Bytes, st.FirstSeq, st.LastSeq, full.Bytes, prune.High(maxBytes), pruned)
	})
	counts := fmt.Sprintf("%d units sent; the stream: %d messages, %d bytes, sequences %d-%d, %d deleted; scoreboard_history_pruned_units_total %v",
		len(want), st.Msgs, st.Bytes, st.FirstSeq, st.LastSeq, st.NumDeleted, pruned)
	t.Log(counts)
	if uint64(pruned) != st.FirstSeq-1 || st.Msgs+uint64(pruned) != st.LastSeq {
		t.Errorf("the history lost messages its keeper did not drop (the server's limit took them): %s", counts)
	}
	if st.Bytes < uint64(prune.Low(maxBytes))-(1<<20) {
		t.Errorf("the history was pruned below %d bytes: %s", prune.Low(maxBytes)-(1<<20), counts)
	}
	faulttest.Tally("history at its limit", want, got.String()).Check(t)
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}
