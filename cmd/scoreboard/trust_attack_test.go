package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/serialio"
)

// The attacks of issue 9, each by an independent nats.go client against a real
// `scoreboard run` process with a pseudo-terminal port while units flow: nothing the
// forger says reaches the port, and every unit is answered right.

const (
	trustPort   = "hall"
	trustToken  = "worker-t0ken"
	forgedText  = "FORGED"
	hugeAnswer  = 1536 << 10 // 1.5 MB, within every server's max payload
	hugeForgery = 20         // huge answers sent, at most
)

// trustEnv is a daemon under attack: its process, its port's flow, and where a
// forger connects.
type trustEnv struct {
	run *proctest.Process
	pt  *serialio.PTY
	url string
	// quiesce, if set, runs once every unit is answered and before the daemon stops:
	// what else the attack drives must end while the daemon still serves.
	quiesce func()
}

// startTrustEnv starts `scoreboard run` with a goscore port: on its embedded server
// (loopback listener with worker credentials), or, with open, on an external
// nats-server without any authorization, where a forger may publish anything and
// only the display's own checks stand.
func startTrustEnv(t *testing.T, open bool) *trustEnv {
	t.Helper()
	pt := runPTY(t)
	args := []string{"run", "--port", pt.Path, "--port-name", trustPort, "--problem", "goscore", "--baud", "115200",
		"--error-line", "--request-timeout", "500ms"}
	var url string
	if open {
		// Room for the huge answers: nats-server's default max payload is 1 MB.
		conf := filepath.Join(t.TempDir(), "nats-server.conf")
		if err := os.WriteFile(conf, []byte("max_payload: 4MB\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		url = proctest.StartNATS(t, proctest.NATSOptions{Config: conf}).URL()
		args = append(args, "--nats-url", url)
	} else {
		addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
		url = "nats://" + addr
		args = append(args, "--nats-listen", addr, "--nats-listen-token", trustToken)
	}
	run := proctest.Start(t, proctest.Scoreboard(t), args...)
	runWaitOpened(t, pt, run)
	run.WaitOutput("scoreboard running", 30*time.Second)
	return &trustEnv{run: run, pt: pt, url: url}
}

// forger is an attacker's connection, counting what it sent and what the server
// refused.
type forger struct {
	nc      *nats.Conn
	sent    atomic.Int64
	refused atomic.Int64
}

func newForger(t *testing.T, url string, opts ...nats.Option) *forger {
	t.Helper()
	f := &forger{}
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			f.refused.Add(1)
		}
	}))
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	f.nc = nc
	return f
}

// forge publishes a forged result for the dump m: on the results subject and on the
// dump's reply subject.
func (f *forger) forge(m *nats.Msg, res result.Record) {
	data, _ := json.Marshal(res)
	for _, subj := range []string{bus.Subjects{Prefix: bus.DefaultPrefix}.Result("goscore", trustPort), m.Reply} {
		if subj != "" && f.nc.Publish(subj, data) == nil {
			f.sent.Add(1)
		}
	}
}

// seen is the dump m as a forger reads it: its seq and origin.
func seen(m *nats.Msg) result.Record {
	seq, _ := strconv.ParseUint(m.Header.Get(bus.HeaderSeq), 10, 64)
	return result.Record{Problem: "goscore", Port: trustPort, Seq: seq, Origin: m.Header.Get(bus.HeaderOrigin), Worker: "forger"}
}

// attack runs the flow of units while the forger does its work on every dump of the
// port it sees, then checks the port: no forged text, every unit answered right.
func (e *trustEnv) attack(t *testing.T, scenario string, f *forger, onDump func(*nats.Msg)) faulttest.Counts {
	t.Helper()
	var wg sync.WaitGroup
	sub, err := f.nc.Subscribe(bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", trustPort), func(m *nats.Msg) {
		if m.Header.Get(bus.HeaderOrigin) != "" && m.Header.Get("Forged") == "" {
			wg.Go(func() { onDump(m) })
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	flow := startFaultFlow(t, e.pt, 2*time.Millisecond)
	bustest.Wait(t, "300 units sent", func() (bool, string) {
		n := flow.sent.Load()
		return n >= 300, fmt.Sprintf("%d sent", n)
	})
	flow.drain(t, scenario, e.run)
	if e.quiesce != nil {
		e.quiesce()
	}
	c := flow.finish(t, scenario, e.run)
	_ = sub.Unsubscribe()
	wg.Wait()
	flow.mu.Lock()
	forged := strings.Count(flow.got.String(), forgedText)
	flow.mu.Unlock()
	t.Logf("%s: forged messages sent %d, refused by the server %d, forged texts on the port %d", c, f.sent.Load(), f.refused.Load(), forged)
	c.Check(t)
	if forged != 0 {
		t.Errorf("%d forged texts reached the port", forged)
	}
	if f.sent.Load() == 0 {
		t.Error("the forger sent nothing: the test proved nothing")
	}
	return c
}

// (a) Results with no origin, on the port's results subject and on the reply subject
// of each dump. A tool is refused by the server; on a server without authorization
// the display refuses them itself (no origin, no digest).
func TestTrustForgedNoOrigin(t *testing.T) {
	for _, open := range []bool{false, true} {
		t.Run(map[bool]string{false: "tool", true: "open-server"}[open], func(t *testing.T) {
			e := startTrustEnv(t, open)
			f := newForger(t, e.url)
			e.attack(t, "forged-no-origin", f, func(m *nats.Msg) {
				res := seen(m)
				res.Origin, res.Answer = "", forgedText+"\n"
				f.forge(m, res)
			})
			if !open && f.refused.Load() == 0 {
				t.Error("the server refused none of the tool's results")
			}
			if open && !strings.Contains(e.run.Output(), "not the answer to its dump") {
				t.Error("the display logged no refused answer: the forgeries never reached its check")
			}
		})
	}
}

// (b) Results with the origin and seq copied from the dumps, on the results subject
// and the reply subject; and dumps forged with the same headers and reply subject
// but another board, which a real worker then answers on the display's inbox. The
// display refuses them all: the forged answers carry no digest or another unit's.
func TestTrustForgedCopiedOrigin(t *testing.T) {
	for _, open := range []bool{false, true} {
		t.Run(map[bool]string{false: "tool", true: "open-server"}[open], func(t *testing.T) {
			e := startTrustEnv(t, open)
			f := newForger(t, e.url)
			var k atomic.Int64
			// The real workers' answers to the forged dumps, seen on the port's inbox
			// (a tool may read inboxes): they are what the display has to refuse.
			var forgedDigests sync.Map
			var reached atomic.Int64
			if _, err := f.nc.Subscribe("_INBOX.>", func(m *nats.Msg) {
				var r result.Record
				if json.Unmarshal(m.Data, &r) == nil {
					if _, ok := forgedDigests.Load(r.UnitDigest); ok {
						reached.Add(1)
					}
				}
			}); err != nil {
				t.Fatal(err)
			}
			e.attack(t, "forged-copied-origin", f, func(m *nats.Msg) {
				res := seen(m)
				res.Answer = forgedText + "\n"
				f.forge(m, res)
				// The same dump, another board: its true answer is no answer of the
				// flow's boards (those are numbered from 0).
				board, _ := faulttest.GoscoreBoard(20000 + int(k.Add(1)))
				forgedDigests.Store(bus.UnitDigest([]byte(board)), true)
				d := nats.NewMsg(m.Subject)
				d.Header, d.Reply, d.Data = maps.Clone(m.Header), m.Reply, []byte(board)
				d.Header.Set("Forged", "1") // not for this forger to forge again
				if f.nc.PublishMsg(d) == nil {
					f.sent.Add(1)
				}
			})
			// Only an answer that comes while its seq is still in flight is compared
			// with the unit's digest and logged; a later one is dropped unlogged. Either
			// way none is written (forged = 0 above): what must hold is that the attack
			// reached the port's inbox at all.
			t.Logf("real answers to forged dumps on the port's inbox: %d", reached.Load())
			if reached.Load() == 0 {
				t.Error("no real worker answered a forged dump on the port's inbox: the attack proved nothing")
			}
		})
	}
}

// (c) A rogue client joins the queue group scoreboard-workers on the dumps and on
// the solve endpoints, answering each with forged text. A tool is refused by the
// server, and the solve requests are answered by the real workers only. With worker
// credentials it is let in; its answers, without the unit's digest, are refused by
// the display, and the units are published again for the real workers.
func TestTrustRogueQueueMember(t *testing.T) {
	for _, worker := range []bool{false, true} {
		t.Run(map[bool]string{false: "tool", true: "worker-credentials"}[worker], func(t *testing.T) {
			e := startTrustEnv(t, false)
			var opts []nats.Option
			if worker {
				opts = append(opts, nats.Token(trustToken))
			}
			f := newForger(t, e.url, opts...)
			s := bus.Subjects{Prefix: bus.DefaultPrefix}
			// At most 20 dumps answered by the rogue, so that no unit meets it on all
			// of its attempts.
			var answered atomic.Int64
			var dumps *nats.Subscription
			dumps, err := f.nc.QueueSubscribe(s.AllDumps(), bus.QueueGroup, func(m *nats.Msg) {
				if answered.Add(1) > 20 {
					_ = dumps.Unsubscribe()
					return
				}
				res := seen(m)
				res.Answer = forgedText + "\n"
				f.forge(m, res)
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.nc.QueueSubscribe(s.Solve("goscore"), bus.QueueGroup, func(m *nats.Msg) {
				if m.Respond([]byte(forgedText+"\n")) == nil {
					f.sent.Add(1)
				}
			}); err != nil {
				t.Fatal(err)
			}
			if !worker {
				f.sent.Add(2) // the attack is the two subscriptions: nothing comes to answer
			}
			// Solve requests from a tool, beside the flow: the real workers' answers only.
			in, want := busSample(t, "goscore")
			client := busConnect(t, e.url)
			var solved, forgedSolves atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					m, err := client.Request(s.Solve("goscore"), []byte(in), 10*time.Second)
					switch {
					case err != nil:
						t.Errorf("solve request: %v", err)
						return
					case string(m.Data) == want:
						solved.Add(1)
					default:
						forgedSolves.Add(1)
					}
				}
			})
			e.quiesce = func() {
				close(stop)
				wg.Wait()
			}
			c := e.attack(t, "rogue-queue-member", f, func(*nats.Msg) {})
			t.Logf("solve requests: %d answered right, %d forged", solved.Load(), forgedSolves.Load())
			switch {
			case !worker && (f.refused.Load() < 2 || forgedSolves.Load() != 0 || solved.Load() == 0):
				t.Errorf("tool: %d subscriptions refused (want 2), %d solve requests answered right, %d forged (want 0)",
					f.refused.Load(), solved.Load(), forgedSolves.Load())
			case worker && answered.Load() == 0:
				t.Error("the rogue worker took no dump: the test proved nothing")
			}
			_ = c
		})
	}
}

// (d) A huge answer (1.5 MB) to a goscore unit, with the origin and seq copied and
// even the right unit digest: a tool is refused by the server; on a server without
// authorization the display refuses it for its length.
func TestTrustHugeAnswer(t *testing.T) {
	for _, open := range []bool{false, true} {
		t.Run(map[bool]string{false: "tool", true: "open-server"}[open], func(t *testing.T) {
			e := startTrustEnv(t, open)
			f := newForger(t, e.url)
			huge := strings.Repeat(forgedText+" ", hugeAnswer/len(forgedText+" "))
			var n atomic.Int64
			e.attack(t, "huge-answer", f, func(m *nats.Msg) {
				if n.Add(1) > hugeForgery {
					return
				}
				res := seen(m)
				res.Answer, res.UnitDigest = huge, bus.UnitDigest(m.Data)
				f.forge(m, res)
			})
			if !open && f.refused.Load() == 0 {
				t.Error("the server refused none of the tool's huge results")
			}
			if open && !strings.Contains(e.run.Output(), "longer than any answer of the problem") {
				t.Error("the display logged no answer refused for its length")
			}
		})
	}
}
