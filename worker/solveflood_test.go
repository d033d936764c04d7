package worker_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/worker"
)

// Issue 41, review F6: a tool (over TCP, no credentials) publishes 100 solve
// requests of 1 MB each at once on one problem's endpoint, faster than it solves
// them. What the endpoint's subscription holds before its handler takes it stays
// within worker.PendingSolveBytes and one request (nats.go's default let it hold 64 MB a problem),
// the excess is dropped and counted, and the endpoint still answers afterwards.
func TestSolveFloodPendingBounded(t *testing.T) {
	in, want := sample(t, "capture")
	srv := bustest.Start(t, bustest.Options{})
	wnc := srv.Daemon()
	met := metrics.New()
	// The endpoint's subscription is micro's own; nats.go hands it to the
	// connection's error handler when it drops a message (a slow consumer).
	w := bustest.StartWorkers(t, wnc, worker.Options{Problems: []string{"capture"}, Concurrency: 1, Metrics: met}, bustest.Logger(t))
	var solveSub atomic.Pointer[nats.Subscription]
	next := wnc.ErrorHandler()
	wnc.SetErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
		if sub != nil && errors.Is(err, nats.ErrSlowConsumer) && sub.Subject == "scoreboard.solve.capture" {
			solveSub.Store(sub)
		}
		next(nc, sub, err)
	})

	tool := srv.Tool()
	big := captureGames(1 << 20)
	const n = 100
	for range n {
		// A reply inbox the tool never reads: the flood does not wait.
		if err := tool.PublishRequest("scoreboard.solve.capture", "_INBOX.flood.x", big); err != nil {
			t.Fatal(err)
		}
	}
	if err := tool.FlushTimeout(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	var sub *nats.Subscription
	waitFor(t, "the endpoint to drop part of the flood", func() bool { sub = solveSub.Load(); return sub != nil })
	_, maxBytes, err := sub.MaxPending()
	if err != nil {
		t.Fatal(err)
	}
	dropped, _ := sub.Dropped()
	t.Logf("%d requests of %d bytes: the endpoint held at most %d bytes pending, dropped %d", n, len(big), maxBytes, dropped)
	// nats.go drops a message once the list is past its bound: it may hold one
	// message more.
	if bound := worker.PendingSolveBytes + bus.MaxPayload; maxBytes > bound {
		t.Errorf("the solve endpoint held %d bytes pending, want at most %d", maxBytes, bound)
	}
	waitFor(t, "the flood to be through", func() bool { m, _, _ := sub.Pending(); return m == 0 })
	waitFor(t, "the workers to count the dropped requests", func() bool { return w.SolveDropped() > 0 })
	if got, _ := sub.Dropped(); w.SolveDropped() != int64(got) {
		t.Errorf("the workers count %d solve requests dropped, the subscription %d", w.SolveDropped(), got)
	}
	rec := httptest.NewRecorder()
	met.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	series := fmt.Sprintf(`scoreboard_solve_requests_dropped_total{problem="capture"} %d`, w.SolveDropped())
	if !strings.Contains(rec.Body.String(), series) {
		t.Errorf("/metrics has no %s", series)
	}
	// Once the flood is through, a request is answered.
	r, err := tool.Request("scoreboard.solve.capture", in, 30*time.Second)
	if err != nil {
		t.Fatalf("a request after the flood: %v", err)
	}
	if string(r.Data) != string(want) {
		t.Fatalf("a request after the flood: %q, want %q", r.Data, want)
	}
}

// captureGames is capture games of 25,000 moves on distinct points of a 158-wide
// field, in a random order (captures among them), at least n bytes: 45 MB/s of
// solving on the machine it was written on, far below a publisher's pace.
func captureGames(n int) []byte {
	var b bytes.Buffer
	r := rand.New(rand.NewPCG(1, 2))
	for b.Len() < n {
		b.WriteString("1000 25000\n")
		for _, i := range r.Perm(25000) {
			fmt.Fprintf(&b, "%d %d\n", i%158, i/158)
		}
	}
	return b.Bytes()
}
