package league_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/league"
)

// BenchmarkGateLook: one look of the intakes' gate (gate.go) at a hub of 200 clubs
// (GATE_BENCH_CLUBS), none linked: each club's account's usage and the accounts'
// leaf bytes, in process. Its share of a core is its time over gateLook (250 ms).
func BenchmarkGateLook(b *testing.B) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("GATE_BENCH_CLUBS")); err == nil {
		n = v
	}
	clubs := make([]league.Club, n)
	for i := range clubs {
		clubs[i] = league.Club{Name: fmt.Sprintf("c%d", i), Token: fmt.Sprintf("t%d", i)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := league.Start(ctx, league.Options{
		Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: b.TempDir(), Clubs: clubs, MaxMemory: 128 << 20,
	}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Shutdown()
	league.GateLook(h) // the rooms set once
	b.ResetTimer()
	for b.Loop() {
		league.GateLook(h)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(250*time.Millisecond)*100, "%core")
}
