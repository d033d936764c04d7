package bus_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/proctest"
)

// A listen address already taken is an error that says what to do instead, and the
// server logs nothing of being ready.
func TestStartServerAddressTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var logs proctest.Buffer
	srv, err := bus.StartServerWith(bus.ServerOptions{Listen: ln.Addr().String()}, zerolog.New(&logs).Level(zerolog.TraceLevel))
	if err == nil {
		srv.Shutdown()
		t.Fatalf("started on %s, which is taken", ln.Addr())
	}
	for _, want := range []string{ln.Addr().String() + " is taken", "--nats-listen 127.0.0.1:0", "--nats-listen off", "--nats-url nats://" + ln.Addr().String()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !errors.Is(err, bus.ErrListenInUse) {
		t.Errorf("error %q is not ErrListenInUse", err)
	}
	if strings.Contains(logs.String(), "is ready") {
		t.Errorf("the server logged being ready:\n%s", logs.String())
	}
}
