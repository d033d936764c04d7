package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/worker"
	"github.com/nats-io/nats.go"
)

// busDaemon starts an embedded server on a random loopback port, with the workers
// on it as 'scoreboard run' does, and returns it and its URL.
func busDaemon(t *testing.T, workers bool) (*bustest.Bus, string) {
	t.Helper()
	b := bustest.Start(t, bustest.Options{})
	if workers {
		b.Workers(worker.Options{})
	}
	return b, b.URL()
}

func TestBusSendSamples(t *testing.T) {
	_, url := busDaemon(t, true)
	for _, name := range []string{"goscore", "replay", "territory", "othello", "capture"} {
		in, want := busSample(t, name)
		code, out, errs := runCmd(t, in, "send", "--nats-url", url, name)
		if code != 0 || out != want {
			t.Errorf("send %s: exit %d, stdout %q, stderr %q; want %q", name, code, out, errs, want)
		}
	}
}

func TestBusSendBadUnits(t *testing.T) {
	_, url := busDaemon(t, true)
	in, want := busSample(t, "goscore")
	// The first board broken at its fifth line, then the sample's two boards.
	rows := strings.Split(in, "\n")[:20]
	rows[4] = " + + garbage"
	code, out, errs := runCmd(t, strings.Join(rows, "\n")+"\n"+in, "send", "--nats-url", url, "--port-name", "desk", "goscore")
	if code != 1 || out != want || !strings.Contains(errs, "line 5") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, %q, and an error naming line 5", code, out, errs, want)
	}
	code, _, errs = runCmd(t, in, "send", "--nats-url", url, "--port-name", "Desk", "goscore")
	if code != 2 || !strings.Contains(errs, "--port-name") {
		t.Errorf("a bad port name: exit %d, stderr %q; want 2, a mistake on the command line", code, errs)
	}
}

// Results of another publisher on the same port name (a daemon's port, another send)
// are not taken for send's own: with a taker of the dumps that never answers, send
// still waits for its own.
func TestBusSendIgnoresOthersResults(t *testing.T) {
	srv, url := busDaemon(t, false)
	nc := srv.Daemon()
	taker, err := nc.Subscribe(bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", "hall"), func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	defer taker.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		subject := bus.Subjects{Prefix: bus.DefaultPrefix}.Result("goscore", "hall")
		for seq := uint64(1); ; seq = seq%2 + 1 {
			data, _ := json.Marshal(result.Record{Problem: "goscore", Port: "hall", Seq: seq, Answer: "1 1\n", Origin: "someone-else"})
			_ = nc.Publish(subject, data)
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	in, _ := busSample(t, "goscore")
	code, out, errs := runCmd(t, in, "send", "--nats-url", url, "--port-name", "hall", "--timeout", "300ms", "goscore")
	if code != 1 || out != "" || !strings.Contains(errs, "no result within 300ms for unit(s) 1, 2 of 2") {
		t.Errorf("exit %d, stdout %q, stderr %q; want the others' results ignored", code, out, errs)
	}
}

func TestBusSendWithoutWorkers(t *testing.T) {
	_, url := busDaemon(t, false)
	in, _ := busSample(t, "goscore")
	// Long before the timeout: the bus says at once that nothing takes the dumps.
	code, out, errs := runCmd(t, in, "send", "--nats-url", url, "--timeout", "1h", "goscore")
	if want := "scoreboard send: scoreboard.dump.goscore.manual: no worker serves it (is 'scoreboard run' or 'scoreboard work' running there, with the same --nats-prefix?)\n"; code != 1 || out != "" || errs != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and only %q", code, out, errs, want)
	}
}

func TestBusWatch(t *testing.T) {
	srv, url := busDaemon(t, true)
	// The probe is a result: only the daemon's own parts (or a worker) may publish one.
	nc := srv.Daemon()
	in, _ := busSample(t, "goscore")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--port", "desk"}, []string{"desk goscore #1 5 3", "desk goscore #2 177 175"}},
		{[]string{"--json", "--problem", "goscore"}, []string{`"port":"desk","seq":1,`, `"port":"desk","seq":2,`, `"port":"hall","seq":2,`}},
	} {
		var out, errs proctest.Buffer
		done := make(chan int)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			args := append([]string{"watch", "--nats-url", url}, c.args...)
			done <- runMain(ctx, args, stdio{strings.NewReader(""), &out, &errs})
		}()
		// Once watch prints a probe, it is subscribed.
		probe, _ := json.Marshal(result.Record{Problem: "goscore", Port: "desk", Answer: "probe\n"})
		bustest.Wait(t, "probe printed by watch", func() (bool, string) {
			if err := nc.Publish("scoreboard.result.goscore.desk", probe); err != nil {
				t.Fatal(err)
			}
			o := out.String()
			return strings.Contains(o, "probe"), "watch printed:\n" + o
		})
		for _, port := range []string{"hall", "desk"} {
			if code, _, errs := runCmd(t, in, "send", "--nats-url", url, "--port-name", port, "goscore"); code != 0 {
				t.Fatalf("send: %s", errs)
			}
		}
		bustest.Wait(t, "results printed by watch", func() (bool, string) {
			o := out.String()
			for _, w := range c.want {
				if !strings.Contains(o, w) {
					return false, fmt.Sprintf("no %q; watch printed:\n%s", w, o)
				}
			}
			return true, ""
		})
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("watch %v: exit %d, stderr %q", c.args, code, errs.String())
		}
		if c.args[0] == "--port" && strings.Contains(out.String(), "hall") {
			t.Errorf("watch --port desk printed another port's results:\n%s", out.String())
		}
		if c.args[0] == "--json" {
			for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
				var r result.Record
				if err := json.Unmarshal([]byte(l), &r); err != nil || r.Problem != "goscore" || r.Answer == "" {
					t.Errorf("watch --json line %q: %+v, %v", l, r, err)
				}
			}
		}
	}
}
