package worker_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/worker"
)

// Issue 41: on a real bus, with two solvers, a tool (over TCP, no credentials)
// floods a port's own dump subject as fast as the workers take it in, each dump under a fresh
// Scoreboard-Origin, while the port sends 300 dumps one after the other under its
// own: each is answered with its answer (none shed, while the flood's excess is),
// within 5 s at p99 (the flood's intake ahead of it; the queue adds a solve). It
// logs the p99s alone and under the flood.
func TestDumpFloodFreshOrigins(t *testing.T) {
	in, _ := sample(t, "goscore")
	board := []byte(strings.Join(strings.Split(string(in), "\n")[:20], "\n") + "\n")
	nop := zerolog.Nop()
	srv := bustest.Start(t, bustest.Options{Log: &nop})
	w, err := worker.Start(srv.Daemon(), worker.Options{Problems: []string{"goscore"}, Concurrency: 2}, nop)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	port := srv.Daemon()
	subject := bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", "hall")
	run := func(what string) (p99 time.Duration, bad int) {
		var lat []time.Duration
		for i := 1; i <= 300; i++ {
			m := &nats.Msg{Subject: subject, Data: board, Header: nats.Header{
				bus.HeaderOrigin: {"port"}, bus.HeaderSeq: {strconv.Itoa(i)}}}
			start := time.Now()
			r, err := port.RequestMsg(m, 5*time.Second)
			lat = append(lat, time.Since(start))
			if err != nil || !strings.Contains(string(r.Data), `"answer":"`) {
				if bad++; bad == 10 {
					break // enough to tell: a starved port would take 25 minutes
				}
			}
		}
		slices.Sort(lat)
		return lat[len(lat)*99/100], bad
	}
	alone, _ := run("alone")

	stop := make(chan struct{})
	var flood atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { floodFreshOrigins(srv.Tool(), w, subject, board, stop, &flood) })
	// The flood first fills the queue.
	bustest.Wait(t, "the flood queued", func() (bool, string) {
		c := w.Counts()
		return c.Taken > 5000, fmt.Sprint(c.Taken, " taken")
	})
	flooded, bad := run("flooded")
	close(stop)
	wg.Wait()
	c := w.Counts()
	t.Logf("port's p99 alone %v, under the flood %v; port's dumps not answered right %d of 300 (stops at 10); flood published %d, workers took %d, solved %d, shed %d",
		alone, flooded, bad, flood.Load(), c.Taken, c.Solved, c.Shed)
	// The queue serves the port first; what its p99 has beyond a solve is the
	// subscription's intake, in order, of the flood's dumps ahead of it (up to
	// 15,000: about 0.1 s, 1 s under -race), which no queue can reorder.
	if bad != 0 || flooded > 5*time.Second {
		t.Errorf("under a flood of fresh origins the port had %d of 300 dumps not answered right, p99 %v (alone %v)", bad, flooded, alone)
	}
	if c.Shed == 0 {
		t.Error("the flood shed nothing: it was no flood, and the test proved nothing")
	}
}

// floodFreshOrigins publishes board on subject, each time under a new origin, until
// stop, counting into flood.
func floodFreshOrigins(flooder *nats.Conn, w *worker.Workers, subject string, board []byte, stop chan struct{}, flood *atomic.Int64) {
	for k := 0; ; k++ {
		select {
		case <-stop:
			return
		default:
		}
		m := &nats.Msg{Subject: subject, Data: board, Header: nats.Header{bus.HeaderOrigin: {fmt.Sprintf("fresh%d", k)}}}
		if flooder.PublishMsg(m) == nil {
			flood.Add(1)
		}
		if k%1000 == 999 {
			_ = flooder.Flush()
		}
		// Paced to what the workers' subscription takes in, so that nats.go
		// drops nothing as a slow consumer (under -race it would, the port's
		// dumps with the flood's: a limit of its own, RELIABILITY.md): the
		// flood still comes far faster than it is solved.
		for flood.Load()-w.Counts().Taken > 15000 {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}
}
