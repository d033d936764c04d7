package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
)

// TestRolesToolOnRunsHistory: the tool role (no credentials, loopback) against a
// real `run` process's embedded server with its history on: `history`, `watch
// --since`, `web --nats-url` (its bucket watch is a push consumer with flow
// control) and nats.go's jetstream (bucket get and watch, an ordered consumer on
// the stream) all read it; purging or deleting the stream, and putting or deleting
// a key, are refused, and the history is unchanged after the attempts.
func TestRolesToolOnRunsHistory(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	url := "nats://" + addr
	pt := runPTY(t)
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--state-dir", t.TempDir(), "--nats-listen", addr, "--http", "off",
		"--port", pt.Path, "--port-name", "hall", "--problem", "goscore", "--baud", "115200")
	runWaitOpened(t, pt, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	if _, err := pt.Master.Write(in); err != nil {
		t.Fatal(err)
	}
	if got := runReadAnswers(t, pt, len(want), run); string(got) != string(want) {
		t.Fatalf("the port's answers %q, want %q", got, want)
	}
	bustest.Wait(t, "history as a tool", func() (bool, string) {
		recs := historyJSON(t, url)
		return len(recs) == 2 && recs[1].Answer == "177 175\n", strconv.Itoa(len(recs)) + " records"
	})
	if code, out, errs := runLocked(t, "", "watch", "--nats-url", url, "--since", "1h", "--count", "2"); code != 0 || !strings.Contains(out, "hall goscore #2 177 175\n") {
		t.Errorf("watch --since 1h as a tool: exit %d, %q: %s", code, out, errs)
	}

	js := historyJetStream(t, url)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, "SCOREBOARD_BOARDS")
	if err != nil {
		t.Fatalf("a tool's bucket: %v", err)
	}
	bustest.Wait(t, "the bucket's value", func() (bool, string) {
		e, err := kv.Get(ctx, "hall")
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(string(e.Value()), `"seq":2`), string(e.Value())
	})
	w, err := kv.Watch(ctx, "hall")
	if err != nil {
		t.Fatalf("a tool's bucket watch: %v", err)
	}
	select {
	case e := <-w.Updates():
		if e == nil || !strings.Contains(string(e.Value()), "177 175") {
			t.Errorf("a tool's bucket watch: %v", e)
		}
	case <-time.After(20 * time.Second):
		t.Error("a tool's bucket watch: nothing within 20s")
	}
	_ = w.Stop()
	st, err := js.Stream(ctx, "SCOREBOARD")
	if err != nil {
		t.Fatalf("a tool's stream info: %v", err)
	}
	oc, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatalf("a tool's ordered consumer: %v", err)
	}
	if m, err := oc.Next(jetstream.FetchMaxWait(20 * time.Second)); err != nil || !strings.HasPrefix(m.Subject(), "scoreboard.dump.goscore.hall") {
		t.Errorf("a tool's ordered consumer's first message: %v", err)
	}

	// web --nats-url: the page's bucket watch serves the port's board.
	webAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	web := proctest.Start(t, proctest.Scoreboard(t), "web", "--nats-url", url, "--http", webAddr)
	bustest.Wait(t, "web's boards as a tool", func() (bool, string) {
		resp, err := http.Get("http://" + webAddr + "/api/boards")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var boards []struct {
			Port string `json:"port"`
			Seq  int    `json:"seq"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&boards)
		return len(boards) == 1 && boards[0].Port == "hall" && boards[0].Seq == 2, resp.Status
	})
	_ = web.Stop()

	// Writing is refused, each attempt; the history is what it was.
	before := st.CachedInfo().State.Msgs
	for _, c := range []struct {
		what string
		do   func(context.Context) error
	}{
		{"purge the stream", func(ctx context.Context) error { return st.Purge(ctx) }},
		{"delete a message", func(ctx context.Context) error { return st.DeleteMsg(ctx, 1) }},
		{"delete the stream", func(ctx context.Context) error { return js.DeleteStream(ctx, "SCOREBOARD") }},
		{"put a key", func(ctx context.Context) error { _, err := kv.Put(ctx, "hall", []byte("forged")); return err }},
		{"delete a key", func(ctx context.Context) error { return kv.Delete(ctx, "hall") }},
		{"purge a key", func(ctx context.Context) error { return kv.Purge(ctx, "hall") }},
		{"delete the bucket", func(ctx context.Context) error { return js.DeleteKeyValue(ctx, "SCOREBOARD_BOARDS") }},
	} {
		sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
		if err := c.do(sctx); err == nil {
			t.Errorf("a tool could %s", c.what)
		}
		scancel()
	}
	info, err := st.Info(ctx)
	if err != nil || info.State.Msgs != before || before != 4 {
		t.Errorf("the stream after the tool's attempts: %v, %d messages, %d before, want 4", err, info.State.Msgs, before)
	}
	if e, err := kv.Get(ctx, "hall"); err != nil || !strings.Contains(string(e.Value()), "177 175") {
		t.Errorf("the bucket after the tool's attempts: %v", err)
	}
}
