package prune_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/prune"
)

// BenchmarkLook is a hub's keeper's look at 200 club streams below their marks:
// what it costs every prune.DefaultEvery (a stream list of 200, nothing purged).
func BenchmarkLook(b *testing.B) {
	bus := bustest.Start(b, bustest.Options{JetStream: true})
	ctx := context.Background()
	js, err := jetstream.New(bus.Daemon())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		c := stream(fmt.Sprintf("LEAGUE_C%d", i))
		c.MaxAge = 90 * 24 * 3600e9
		if _, err := js.CreateStream(ctx, c); err != nil {
			b.Fatal(err)
		}
		if _, err := js.Publish(ctx, fmt.Sprintf("league_c%d.u", i), make([]byte, unit)); err != nil {
			b.Fatal(err)
		}
	}
	k := prune.New(js, func(string) bool { return true }, bustest.Logger(b))
	b.ResetTimer()
	for b.Loop() {
		if err := k.Look(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if k.Purges() != 0 {
		b.Fatalf("%d purges of streams below their marks", k.Purges())
	}
}
