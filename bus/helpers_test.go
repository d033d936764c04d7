package bus_test

import (
	"strings"
	"testing"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m) }

func startServer(t testing.TB, listen string) *bus.Server {
	t.Helper()
	srv, err := bus.StartServer(listen, bustest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

func TestStartServerErrors(t *testing.T) {
	srv := startServer(t, "127.0.0.1:0")
	addr := strings.TrimPrefix(srv.ClientURL(), "nats://")
	if _, err := bus.StartServer(addr, bustest.Logger(t)); err == nil {
		t.Errorf("a second server on %s started", addr)
	}
	for _, bad := range []string{"4222", "127.0.0.1:http", ":4222", "127.0.0.1:70000", ""} {
		if _, err := bus.StartServer(bad, bustest.Logger(t)); err == nil {
			t.Errorf("StartServer(%q) accepted", bad)
		}
	}
}

func TestSemVer(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.3":          "1.2.3",
		"1.2.3-rc.1":      "1.2.3-rc.1",
		"v0.4.0-3-gabc12": "0.4.0-3-gabc12",
		"dev":             "0.0.0-dev",
		"":                "0.0.0-unknown",
		"(devel)":         "0.0.0-devel",
		"1.2":             "0.0.0-1-2",
	} {
		if got := bus.SemVer(in); got != want {
			t.Errorf("SemVer(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConnectErrors(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{Token: "s3cret"})
	_, err := bus.Connect(bus.ConnOptions{URL: s.URL()}, bustest.Logger(t))
	if err == nil || !strings.Contains(err.Error(), "Authorization Violation") || !strings.Contains(err.Error(), "--nats-token") {
		t.Errorf("no token: %v, want an authorization error with a hint", err)
	}
	nc, err := bus.Connect(bus.ConnOptions{URL: s.URL(), Token: "s3cret"}, bustest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	_, err = bus.Connect(bus.ConnOptions{URL: "nats://bob:hunter2@127.0.0.1:1"}, bustest.Logger(t))
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "no servers") {
		t.Errorf("unreachable server: %v, want no servers, no password", err)
	}
	_, err = bus.Connect(bus.ConnOptions{URL: s.URL(), TLSCert: "cert.pem"}, bustest.Logger(t))
	if err == nil {
		t.Error("a TLS cert without a key was accepted")
	}
}

// The embedded server's max payload fits the largest unit of every problem with its
// headers, and little more: a flood of huge messages must cost little.
func TestMaxPayloadFitsLargestUnit(t *testing.T) {
	largest := engine.LargestUnit()
	const headers = 4 << 10
	if largest+headers > bus.MaxPayload || bus.MaxPayload > 2*largest {
		t.Fatalf("max payload %d bytes for a largest unit of %d bytes: want it to fit with %d bytes of headers, and be under twice the unit", bus.MaxPayload, largest, headers)
	}
}
