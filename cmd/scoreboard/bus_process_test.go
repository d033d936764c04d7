package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

func busSample(t *testing.T, name string) (in, out string) {
	t.Helper()
	b, c := samples.Pair(t, samples.Case{File: name})
	return string(b), string(c)
}

func busConnect(t *testing.T, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// startWork starts a 'scoreboard work' process and waits until its service answers.
func busStartWork(t *testing.T, nc *nats.Conn, args ...string) *proctest.Process {
	t.Helper()
	before := len(busStats(t, nc, 0))
	p := proctest.Start(t, proctest.Scoreboard(t), append([]string{"work"}, args...)...)
	p.WaitOutput("scoreboard worker running", faultPatience)
	bustest.Wait(t, "the new worker's $SRV.PING", func() (bool, string) {
		n := len(busStats(t, nc, before+1))
		return n > before, fmt.Sprintf("%d instances, %d before", n, before)
	})
	return p
}

// busStats asks every instance of the service (one per process) for its stats,
// waiting for want answers (or a short while, when want is 0), keyed by instance id.
func busStats(t *testing.T, nc *nats.Conn, want int) map[string]micro.Stats {
	t.Helper()
	stats := map[string]micro.Stats{}
	for _, data := range proctest.Gather(t, nc, "$SRV.STATS.scoreboard", want, 2*time.Second) {
		var s micro.Stats
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("stats %s: %v", data, err)
		}
		stats[s.ID] = s
	}
	return stats
}

func busRequests(stats micro.Stats) int {
	n := 0
	for _, e := range stats.Endpoints {
		n += e.NumRequests
	}
	return n
}

// solveRequests sends n requests of the goscore sample and checks every answer.
func busSolveRequests(t *testing.T, nc *nats.Conn, n int) {
	t.Helper()
	in, want := busSample(t, "goscore")
	for i := range n {
		msg, err := nc.Request("scoreboard.solve.goscore", []byte(in), 10*time.Second)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if string(msg.Data) != want {
			t.Fatalf("request %d: %q, want %q", i, msg.Data, want)
		}
	}
}

// The "done when": 'scoreboard run' serves requests from another process on
// its loopback listener, its $SRV.INFO lists five endpoints, and a 'scoreboard work'
// process with the worker credentials joins and shares the load.
func TestBusRunServesAndWorkJoins(t *testing.T) {
	port := proctest.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	t.Setenv("SCOREBOARD_NATS_LISTEN_TOKEN", "worker-t0ken")
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr)
	run.WaitOutput("scoreboard running", 30*time.Second)
	nc := busConnect(t, "nats://"+addr)

	var id string
	for id = range busStats(t, nc, 1) {
	}
	msg, err := nc.Request("$SRV.INFO.scoreboard."+id, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info micro.Info
	if err := json.Unmarshal(msg.Data, &info); err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, e := range info.Endpoints {
		subjects = append(subjects, e.Subject)
	}
	if len(info.Endpoints) != 5 || len(engine.Names()) != 5 {
		t.Errorf("$SRV.INFO lists %d endpoints (%v), want 5", len(info.Endpoints), subjects)
	}
	for _, name := range engine.Names() {
		in, want := busSample(t, name)
		msg, err := nc.Request("scoreboard.solve."+name, []byte(in), 10*time.Second)
		if err != nil || string(msg.Data) != want {
			t.Errorf("%s: %q, %v; want %q", name, msg.Data, err, want)
		}
	}

	busStartWork(t, nc, "--nats-url", "nats://"+addr, "--nats-token", "worker-t0ken")
	busSolveRequests(t, nc, 64)
	stats := busStats(t, nc, 2)
	if len(stats) != 2 {
		t.Fatalf("%d instances answered $SRV.STATS, want 2", len(stats))
	}
	for id, s := range stats {
		if busRequests(s) == 0 {
			t.Errorf("instance %s served no request of 64", id)
		}
	}
	// Each process is one instance: the work process's, under the worker role,
	// answers every $SRV request once, on the connection that takes the dumps.
	if n := len(proctest.Gather(t, nc, "$SRV.STATS.scoreboard", 2, 2*time.Second)); n != 2 {
		t.Errorf("%d answers to $SRV.STATS.scoreboard from 2 processes, want 2", n)
	}
	if err := run.Stop(); err != nil {
		t.Errorf("run after SIGTERM: %v, want exit 0", err)
	}
}

// Two 'scoreboard work' processes on an external nats-server both serve.
func TestBusTwoWorkers(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{})
	nc := busConnect(t, s.URL())
	busStartWork(t, nc, "--nats-url", s.URL())
	busStartWork(t, nc, "--nats-url", s.URL())
	busSolveRequests(t, nc, 64)
	stats := busStats(t, nc, 2)
	if len(stats) != 2 {
		t.Fatalf("%d instances answered $SRV.STATS, want 2", len(stats))
	}
	total := 0
	for id, st := range stats {
		if busRequests(st) == 0 {
			t.Errorf("worker %s served no request of 64", id)
		}
		total += busRequests(st)
	}
	if total != 64 {
		t.Errorf("the workers served %d requests in all, want 64: one each", total)
	}
}

// Requests keep being answered across a restart of the external server: the worker
// and the client both reconnect.
func TestBusWorkAcrossServerRestart(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{})
	nc := busConnect(t, s.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	work := busStartWork(t, nc, "--nats-url", s.URL())
	busSolveRequests(t, nc, 3)

	s.Restart()
	in, want := busSample(t, "goscore")
	bustest.Wait(t, "answer after the restart", func() (bool, string) {
		msg, err := nc.Request("scoreboard.solve.goscore", []byte(in), time.Second)
		if err != nil {
			return false, fmt.Sprintf("request: %v", err)
		}
		return string(msg.Data) == want, fmt.Sprintf("answer %q", msg.Data)
	})
	busSolveRequests(t, nc, 3)
	work.WaitOutput("nats reconnected", 10*time.Second)
	if !strings.Contains(work.Output(), "nats disconnected") {
		t.Errorf("the worker did not log the disconnect:\n%s", work.Output())
	}
}

// A server that requires credentials refuses a client without them, clearly, and
// serves one with them; secrets come from flags or the environment.
func TestBusAuth(t *testing.T) {
	in, want := busSample(t, "goscore")
	for _, c := range []struct {
		name      string
		opts      proctest.NATSOptions
		workFlags []string
		env       map[string]string
		flags     []string
	}{
		{
			name:      "token",
			opts:      proctest.NATSOptions{Token: "t0ken"},
			workFlags: []string{"--nats-token", "t0ken"},
			env:       map[string]string{"SCOREBOARD_NATS_TOKEN": "t0ken"},
		},
		{
			name:      "user-password",
			opts:      proctest.NATSOptions{User: "club", Password: "pa55"},
			workFlags: []string{"--nats-user", "club", "--nats-password", "pa55"},
			env:       map[string]string{"SCOREBOARD_NATS_PASSWORD": "pa55"},
			flags:     []string{"--nats-user", "club"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := proctest.StartNATS(t, c.opts)
			code, out, errs := runCmd(t, in, "solve", "--nats-url", s.URL(), "goscore")
			if code != 1 || out != "" || !strings.Contains(errs, "Authorization Violation") || !strings.Contains(errs, "credentials") {
				t.Fatalf("without credentials: exit %d, stdout %q, stderr %q; want 1 and an authorization error", code, out, errs)
			}
			work := proctest.Start(t, proctest.Scoreboard(t), append([]string{"work", "--nats-url", s.URL()}, c.workFlags...)...)
			work.WaitOutput("scoreboard worker running", 30*time.Second)
			bad := proctest.Start(t, proctest.Scoreboard(t), "work", "--nats-url", s.URL())
			if err := bad.Err(); err == nil || !strings.Contains(bad.Output(), "Authorization Violation") {
				t.Errorf("work without credentials: %v\n%s", err, bad.Output())
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			args := append(append([]string{"solve", "--nats-url", s.URL()}, c.flags...), "goscore")
			code, out, errs = runCmd(t, in, args...)
			if code != 0 || out != want {
				t.Errorf("with credentials: exit %d, stdout %q, stderr %q; want %q", code, out, errs, want)
			}
		})
	}
}

// The tools talk to a daemon's embedded server through its loopback listener.
func TestBusSolveRemoteErrors(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{})
	in, _ := busSample(t, "goscore")
	code, _, errs := runCmd(t, in, "solve", "--nats-url", s.URL(), "goscore")
	if code != 1 || !strings.Contains(errs, "no worker serves it") {
		t.Errorf("no workers: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCmd(t, in, "solve", "--nats-url", fmt.Sprintf("nats://127.0.0.1:%d", proctest.FreePort(t)), "goscore")
	if code != 1 || !strings.Contains(errs, "no servers") {
		t.Errorf("no server: exit %d, stderr %q", code, errs)
	}
}
