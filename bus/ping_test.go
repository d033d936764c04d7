package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
)

// PingSolver is answered by a worker's solve instance, not by its dumps' instance
// alone: with the connection that takes the dumps gone and the stats connection up,
// a ping is still answered (by the dumps' instance), and PingSolver fails.
func TestPingSolver(t *testing.T) {
	srv := bustest.Start(t, bustest.Options{Off: true})
	dumps := srv.Conn(bus.ConnOptions{Server: srv.Server, Name: "worker"})
	stats := srv.Conn(bus.ConnOptions{Server: srv.Server, Name: "worker stats"})
	tool := srv.Conn(bus.ConnOptions{Server: srv.Server, Name: "health"})
	w, err := bus.StartWorkers(dumps, bus.WorkerOptions{StatsConn: stats}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	ping := "$SRV.PING." + bus.ServiceName
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bus.PingSolver(ctx, tool, ping); err != nil {
		t.Fatalf("both instances up: %v", err)
	}

	dumps.Close() // the worker's dumps connection gone; its stats connection stays
	if _, err := tool.Request(ping, nil, 30*time.Second); err != nil {
		t.Fatalf("the dumps' instance should still answer a ping: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := bus.PingSolver(ctx, tool, ping); err == nil {
		t.Error("PingSolver passed with only the dumps' instance answering")
	}
}
