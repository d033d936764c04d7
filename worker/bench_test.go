package worker_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/worker"
)

// BenchmarkRequest measures requests per second and p50/p99 latency through
// scoreboard.solve.goscore, beside a bare NATS echo responder answering the same
// 742-byte board, in the same run: with every connection in-process, and with every
// connection over loopback TCP; with 1 and 16 concurrent requesters, each on its own
// connection.
func BenchmarkRequest(b *testing.B) {
	in, _ := sample(b, "goscore")
	board := []byte(strings.Join(strings.Split(string(in), "\n")[:20], "\n") + "\n")
	if len(board) != 742 {
		b.Fatalf("board is %d bytes, want 742", len(board))
	}
	for _, transport := range []string{"inproc", "tcp"} {
		nop := zerolog.Nop()
		// Over TCP each side has its role: the responders are a worker, the
		// requesters tools.
		srv := bustest.Start(b, bustest.Options{Log: &nop, Workers: true})
		dial := func() *nats.Conn {
			if transport == "tcp" {
				return srv.Tool()
			}
			return srv.Daemon()
		}
		responder := srv.Daemon()
		if transport == "tcp" {
			responder = srv.Worker()
		}
		w, err := worker.Start(responder, worker.Options{Problems: []string{"goscore"}}, zerolog.Nop())
		if err != nil {
			b.Fatal(err)
		}
		echo, err := responder.QueueSubscribe(echoSubject, bus.QueueGroup, func(m *nats.Msg) { _ = m.Respond(m.Data) })
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []int{1, 16} {
			conns := make([]*nats.Conn, c)
			for i := range conns {
				conns[i] = dial()
			}
			b.Run(fmt.Sprintf("%s/c%d", transport, c), func(b *testing.B) {
				benchPair(b, conns, board)
			})
			for _, nc := range conns {
				nc.Close()
			}
		}
		_ = echo.Unsubscribe()
		_ = w.Stop()
		responder.Close()
		srv.Shutdown()
	}
}

// echoSubject is the bare responder's: a solve subject, which a worker may answer
// and a tool may request, as the service's own.
var echoSubject = bus.Subjects{Prefix: bus.DefaultPrefix}.Solve("echo")

// benchPair sends b.N requests to the service and b.N to the echo responder, in
// alternating rounds, so that whatever else the machine does weighs on both alike, and
// reports both and their ratio.
func benchPair(b *testing.B, conns []*nats.Conn, payload []byte) {
	targets := []*series{{subject: "scoreboard.solve.goscore"}, {subject: echoSubject}}
	for _, t := range targets {
		for _, nc := range conns { // warm up each connection's response subscription
			if _, err := nc.Request(t.subject, payload, 5*time.Second); err != nil {
				b.Fatal(err)
			}
		}
	}
	const round = 2000
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		n := min(round, b.N-done)
		for _, t := range targets {
			t.run(b, conns, n, payload)
		}
	}
	b.StopTimer()
	svc, echo := targets[0], targets[1]
	b.ReportMetric(svc.rate(), "svc-req/s")
	b.ReportMetric(echo.rate(), "echo-req/s")
	b.ReportMetric(svc.rate()/echo.rate(), "svc/echo")
	b.ReportMetric(svc.quantile(0.50), "svc-p50-µs")
	b.ReportMetric(svc.quantile(0.99), "svc-p99-µs")
	b.ReportMetric(echo.quantile(0.50), "echo-p50-µs")
	b.ReportMetric(echo.quantile(0.99), "echo-p99-µs")
	b.ReportMetric(0, "ns/op") // two requests an iteration: the rates say it better
}

// series is the requests sent to one subject: their latencies and the time they took.
type series struct {
	subject string
	lat     []time.Duration
	elapsed time.Duration
}

// run sends n requests, spread over the connections, each connection one requester.
func (s *series) run(b *testing.B, conns []*nats.Conn, n int, payload []byte) {
	lat := make([][]time.Duration, len(conns))
	var wg sync.WaitGroup
	start := time.Now()
	for i, nc := range conns {
		k := n / len(conns)
		if i < n%len(conns) {
			k++
		}
		lat[i] = make([]time.Duration, 0, k)
		wg.Go(func() {
			for range k {
				t0 := time.Now()
				if _, err := nc.Request(s.subject, payload, 5*time.Second); err != nil {
					b.Error(err)
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	s.elapsed += time.Since(start)
	s.lat = slices.Concat(append([][]time.Duration{s.lat}, lat...)...)
}

func (s *series) rate() float64 { return float64(len(s.lat)) / s.elapsed.Seconds() }

func (s *series) quantile(q float64) float64 {
	if len(s.lat) == 0 {
		return 0
	}
	slices.Sort(s.lat)
	return float64(s.lat[int(q*float64(len(s.lat)-1))].Nanoseconds()) / 1e3
}
