package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
)

// TestRunPageDelayed: a real 'scoreboard run --http-delay 2s' says its delay on
// /api/status and holds a unit sent with 'scoreboard send' from /api/boards until
// its board was stored 2 s ago, then shows it: the setting reaches the page.
func TestRunPageDelayed(t *testing.T) {
	const delay = 2 * time.Second
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	natsAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	httpAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", natsAddr, "--http", httpAddr, "--http-delay", delay.String())
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

	in, _ := busSample(t, "goscore")
	if code, out, errs := runCmd(t, in, "send", "--nats-url", "nats://"+natsAddr, "--port-name", "desk", "goscore"); code != 0 {
		t.Fatalf("send: exit %d\n%s\n%s", code, out, errs)
	}
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
