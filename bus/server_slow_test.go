package bus_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/proctest"
)

// startLoggedServer is the daemon's server on a loopback port, its log at info.
func startLoggedServer(t *testing.T) (*bus.Server, *proctest.Buffer) {
	var logs proctest.Buffer
	srv, err := bus.StartServerWith(bus.ServerOptions{Listen: "127.0.0.1:0"}, zerolog.New(&logs).Level(zerolog.InfoLevel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv, &logs
}

// rawClient is a connection to srv that speaks the protocol by hand, its INFO read.
func rawClient(t *testing.T, srv *bus.Server) (net.Conn, *bufio.Reader) {
	raw, err := net.Dial("tcp", strings.TrimPrefix(srv.ClientURL(), "nats://"))
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(raw)
	if _, err := r.ReadString('\n'); err != nil { // INFO
		t.Fatal(err)
	}
	return raw, r
}

// TestServerWarnsOfASlowConsumer: a client that subscribes and then reads nothing is
// closed by the server as a slow consumer, and the daemon's log says so at warn (the
// server's notice, which the logger keeps at debug otherwise): an operator at the
// default level sees that a connection lost what it asked for.
func TestServerWarnsOfASlowConsumer(t *testing.T) {
	srv, logs := startLoggedServer(t)
	raw, r := rawClient(t, srv)
	defer raw.Close()
	fmt.Fprint(raw, "CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB scoreboard.dump.slowtest.> 1\r\nPING\r\n")
	raw.SetReadDeadline(time.Now().Add(30 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "PONG") {
		t.Fatalf("the reader's subscription: %q, %v (logs: %s)", line, err, logs.String())
	}
	// From here the raw client reads nothing.
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	payload := make([]byte, 64<<10)
	sent := 0
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(logs.String(), "Slow Consumer") && time.Now().Before(deadline) && sent*len(payload) < 256<<20 {
		for range 64 {
			if err := nc.Publish("scoreboard.dump.slowtest.x", payload); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	var warned, other []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "Slow Consumer") {
			if strings.Contains(line, `"level":"warn"`) {
				warned = append(warned, line)
			} else {
				other = append(other, line)
			}
		}
	}
	if len(warned) == 0 || len(other) > 0 {
		t.Fatalf("after %d MiB to a client that reads nothing, %d lines of a slow consumer at warn, %d at another level: %q", sent*len(payload)>>20, len(warned), len(other), append(warned, other...))
	}
	t.Logf("after %d MiB: %s", sent*len(payload)>>20, strings.TrimSpace(warned[0]))
}
