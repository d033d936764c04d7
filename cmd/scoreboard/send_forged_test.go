package main

import (
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
)

// Issue 40: `send` takes only an answer whose problem and port are its own dump's,
// as a port's display writer does. A forger with the rights to answer (the daemon's
// connection here, a rogue worker's anywhere) answers each dump of a real `send`
// process with its origin, seq and unit digest copied, but another port or problem:
// send prints none of it, warns of each (sampled), and ends with no result.
func TestBusSendRefusesOtherDumpsAnswer(t *testing.T) {
	srv, url := busDaemon(t, false)
	nc := srv.Daemon()
	var forged atomic.Int64
	sub, err := nc.Subscribe(bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", "hall"), func(m *nats.Msg) {
		seq, _ := strconv.ParseUint(m.Header.Get(bus.HeaderSeq), 10, 64)
		r := result.Record{Problem: "goscore", Port: "lobby", Seq: seq, Origin: m.Header.Get(bus.HeaderOrigin),
			UnitDigest: bus.UnitDigest(m.Data), Answer: "FORGED\n", Worker: "forger"}
		if seq%2 == 0 {
			r.Problem, r.Port = "othello", "hall"
		}
		if m.Respond(r.AppendJSON(nil)) == nil {
			forged.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	in, _ := busSample(t, "goscore")
	cmd := exec.Command(proctest.Scoreboard(t), "send", "--nats-url", url, "--port-name", "hall", "--timeout", "2s", "goscore")
	cmd.Stdin = strings.NewReader(in)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	t.Logf("forged answers sent %d; send exit %d (%v)", forged.Load(), code, err)
	if forged.Load() < 2 {
		t.Fatalf("the forger answered %d dumps: the test proved nothing", forged.Load())
	}
	if out.String() != "" || code != 1 || !strings.Contains(errs.String(), "no result within 2s for unit(s) 1, 2 of 2") ||
		strings.Count(errs.String(), "published on another subject") != 2 {
		t.Errorf("send took a forged answer: exit %d, stdout %q, stderr %q; want nothing printed, each refused, and no result", code, out.String(), errs.String())
	}
}
