package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// The in-process connection to an embedded server that is not running yet (as one
// too loaded to answer the pipe's handshake) is tried again until it is, and then
// carries messages.
func TestConnectWaitInProcess(t *testing.T) {
	ns, err := server.NewServer(&server.Options{DontListen: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	var logs proctest.Buffer
	log := zerolog.New(&logs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := bus.ConnectWait(ctx, bus.ConnOptions{Server: bus.WrapServer(ns), Name: "test"}, log)
		done <- result{nc, err}
	}()
	for !strings.Contains(logs.String(), `"attempts":1,`) {
		select {
		case r := <-done:
			t.Fatalf("ConnectWait returned (%v) before the server started", r.err)
		case <-ctx.Done():
			t.Fatalf("no retry logged: %s", logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	go ns.Start()
	r := <-done
	if r.err != nil {
		t.Fatalf("after the server started: %v\n%s", r.err, logs.String())
	}
	defer r.nc.Close()
	sub, err := r.nc.SubscribeSync("x")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.nc.Publish("x", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(30 * time.Second); err != nil || string(m.Data) != "y" {
		t.Fatalf("round trip: %v, %v", m, err)
	}
	if n := strings.Count(logs.String(), "nats not reachable yet"); n < 1 || n > 3 {
		t.Errorf("%d retry lines, want the first and every tenth:\n%s", n, logs.String())
	}
}

// A server that answers no (wrong credentials) is not waited for.
func TestConnectWaitRefusedAtOnce(t *testing.T) {
	s := bustest.Start(t, bustest.Options{Token: "right"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := bus.ConnectWait(ctx, bus.ConnOptions{URL: s.URL(), Token: "wrong"}, zerolog.Nop())
	if !errors.Is(err, nats.ErrAuthorization) || ctx.Err() != nil {
		t.Errorf("wrong token: %v (context: %v), want an authorization error at once", err, ctx.Err())
	}
}

// Stopped while waiting, it says so.
func TestConnectWaitStopped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	url := fmt.Sprintf("nats://127.0.0.1:%d", proctest.FreePort(t))
	_, err := bus.ConnectWait(ctx, bus.ConnOptions{URL: url}, zerolog.Nop())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the context's end", err)
	}
}
