package main

import (
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
)

// The attack of issue 20, by a tool (no credentials) against `run` with a goscore
// port: it reads every dump of the port and publishes it again, body, headers and
// reply subject, on the port's name under every other problem and under a problem
// nobody serves, so that workers of another problem answer the port's inbox first
// with an error for the same seq, origin and digest. With and without a flood of
// junk goscore dumps on the port's own subject keeping the real workers busy. The
// display refuses every answer that is not for its own problem and port: every unit
// is answered right, no error line, and the copies cost the port nothing.
func TestFaultTrustCopiedDumpOtherSubjects(t *testing.T) {
	for _, flood := range []bool{false, true} {
		t.Run(map[bool]string{false: "quiet", true: "junk-flood"}[flood], func(t *testing.T) {
			e := startTrustEnv(t, false)
			f := newForger(t, e.url)
			s := bus.Subjects{Prefix: bus.DefaultPrefix}
			var targets []string
			for _, name := range engine.Names() {
				if name != "goscore" {
					targets = append(targets, s.Dump(name, trustPort))
				}
			}
			targets = append(targets, s.Dump("nosuch", trustPort))
			var junk atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if flood {
				// Junk goscore dumps without a reply, on the port's own subject, paced
				// by a round trip every 200: the workers take each and give it its
				// error result.
				wg.Go(func() {
					body := []byte(strings.Repeat("x ", 361) + "\n")
					for {
						for range 200 {
							if f.nc.Publish(s.Dump("goscore", trustPort), body) != nil {
								return
							}
						}
						junk.Add(200)
						if f.nc.Flush() != nil {
							return
						}
						select {
						case <-stop:
							return
						default:
						}
					}
				})
				e.quiesce = func() {
					close(stop)
					wg.Wait()
				}
			}
			e.attack(t, "copied-dump-other-subjects", f, func(m *nats.Msg) {
				for _, subj := range targets {
					d := nats.NewMsg(subj)
					d.Header, d.Reply, d.Data = maps.Clone(m.Header), m.Reply, m.Data
					if f.nc.PublishMsg(d) == nil {
						f.sent.Add(1)
					}
				}
			})
			select {
			case <-stop:
			default:
				close(stop)
			}
			wg.Wait()
			out := e.run.Output()
			refused := strings.Count(out, "answers a copy of the dump published on another subject")
			t.Logf("counts: scenario=copied-dump-other-subjects flood=%v copies=%d junk=%d refused-logged=%d slow-consumers=%d",
				flood, f.sent.Load(), junk.Load(), refused, slowConsumers(out, ""))
			if refused == 0 {
				t.Error("the display refused no answer to a copy: the attack never reached it")
			}
			if n := slowConsumers(out, ""); n != 0 {
				t.Errorf("%d slow consumers in the daemon", n)
			}
		})
	}
}
