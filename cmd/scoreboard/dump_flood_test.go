package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// maxSizeCapture is a valid capture unit as large as the problem allows a line to
// make it: every coordinate padded with zeros to the longest line.
func maxSizeCapture() []byte {
	const side, moves = 300, 25000
	r := rand.New(rand.NewPCG(3, 9))
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d\n", side, moves)
	for _, p := range r.Perm(side * side)[:moves] {
		fmt.Fprintf(&b, "%031d %032d\n", p%side, p/side)
	}
	return []byte(b.String())
}

// A local tool floods another port's dump subject of a real `run` process while the
// scoreboard on its pseudo-terminal port dumps boards: every real unit is answered
// right, in order, with no error; the flood's excess gets error results, counted by
// the workers; the process's peak RSS stays bounded. Three floods: small junk dumps
// as fast as a client publishes them, dumps larger than their problem's largest unit
// (refused before any copy), and valid capture units of the largest size allowed,
// 20 a second (unpaced, under -race on a busy 2-core machine, the workers' dump
// subscription falls behind and nats.go drops every port's dumps: RELIABILITY.md).
func TestFaultDumpFlood(t *testing.T) {
	units := envInt(t, "SCOREBOARD_FLOOD_UNITS", 300)
	rate := envInt(t, "SCOREBOARD_FLOOD_RATE", 100000) // junk dumps a second
	oversize := make([]byte, bus.MaxPayload-64<<10)    // goscore's largest unit is 2,452 bytes
	for i := range oversize {
		oversize[i] = " @O+\n"[i%5]
	}
	capture, _ := engine.Lookup("capture")
	big := maxSizeCapture()
	if len(big) > capture.Limits().MaxUnit || len(big) < capture.Limits().MaxUnit*9/10 {
		t.Fatalf("max-size capture unit of %d bytes, the limit is %d", len(big), capture.Limits().MaxUnit)
	}
	for _, c := range []struct {
		name, subject string
		data          []byte
		perSecond     int // 0: as fast as the client publishes
		maxHWM        int // KiB
	}{
		// The bounds are from when the history kept every dump the flood published
		// up to the largest unit of any problem (the oversize ones it refused:
		// history.MaxMsgSize), and nats-server held each block of the stream it
		// wrote in memory for 10 s after the history's reader last read it: 20
		// max-size dumps a second peaked at 309 to 393 MB, with four busy loops on
		// the two cores; the oversize ones' flood at 402 to 445 MB before the stream
		// refused them, then 147 to 150 MB, like the junk flood. The history now
		// keeps nothing a tool publishes (issue 41, F12).
		{"junk", "scoreboard.dump.goscore.other", []byte("junk\n"), rate, 192 << 10},
		{"oversize", "scoreboard.dump.goscore.other", oversize, 0, 256 << 10},
		{"max-size", "scoreboard.dump.capture.other", big, 20, 512 << 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			pt := runPTY(t)
			addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
			run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr, "--port", pt.Path,
				"--problem", "goscore", "--baud", "115200", "--error-line")
			runWaitOpened(t, pt, run)
			run.WaitOutput("scoreboard running", 30*time.Second)
			_, rssStart := memory(t, run.PID())

			// The flood: an independent client, publishing as fast as it can.
			flooder := busConnect(t, "nats://"+addr, nats.MaxReconnects(0))
			var flooded atomic.Int64
			stop, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				// At perSecond: a hundredth of it each 10 ms, or one each 1/perSecond s.
				every := max(10*time.Millisecond, time.Second/time.Duration(max(c.perSecond, 1)))
				tick := time.NewTicker(every)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					default:
					}
					for range max(c.perSecond*int(every/time.Millisecond)/1000, 1) {
						if flooder.Publish(c.subject, c.data) != nil {
							return
						}
						flooded.Add(1)
					}
					if c.perSecond > 0 {
						<-tick.C
					}
				}
			}()
			bustest.Wait(t, "the flood to start", func() (bool, string) {
				n := flooded.Load()
				return n >= 100, fmt.Sprintf("%d of 100 flooded", n)
			})

			flow := startFaultFlow(t, pt, time.Millisecond)
			bustest.Wait(t, fmt.Sprintf("%d real units sent", units), func() (bool, string) {
				n := flow.sent.Load()
				return n >= int64(units), fmt.Sprintf("%d sent", n)
			})
			// Every real unit answered under the flood, then the memory it took; finish
			// stops the daemon.
			flow.waitAnswered(t, "dump-flood-"+c.name, units, run)
			close(stop)
			<-done
			if err := flooder.Flush(); err != nil {
				t.Logf("flush the flood: %v", err)
			}
			hwm, rss := memory(t, run.PID())
			counts := flow.finish(t, "dump-flood-"+c.name, run)
			w := logLines(run.Output(), "workers stopped")
			t.Logf("counts: scenario=dump-flood-%s flooded=%d per-second=%d bytes-each=%d real-sent=%d real-right=%d real-failed=%d rss-start-kib=%d rss-end-kib=%d hwm-kib=%d workers=%v",
				c.name, flooded.Load(), c.perSecond, len(c.data), counts.Sent, counts.Right, counts.Sent-counts.Right, rssStart, rss, hwm, w)
			counts.Check(t)
			if counts.Errors != 0 {
				t.Errorf("%d real units failed under the flood", counts.Errors)
			}
			if hwm > c.maxHWM {
				t.Errorf("peak RSS %d KiB, want at most %d KiB", hwm, c.maxHWM)
			}
			if len(w) != 1 {
				t.Fatalf("no worker counts in the output")
			}
		})
	}
}
