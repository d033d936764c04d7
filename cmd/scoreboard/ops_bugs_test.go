package main

import (
	"net"
	"strings"
	"testing"
)

// run on a NATS listen address already taken: one error with what to do instead,
// exit 1, and no "ready".
func TestRunNATSListenTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errs := runLocked(t, "", "run", "--nats-listen", ln.Addr().String(), "--history=false", "--http", "off", "--log-format", "json")
	if code != 1 || strings.Contains(errs, `"message":"ready"`) || strings.Contains(errs, "Server is ready") || strings.Count(errs, "is taken") != 1 ||
		!strings.Contains(errs, "--nats-listen 127.0.0.1:0") || !strings.Contains(errs, "--nats-listen off") || !strings.Contains(errs, "--nats-url") {
		t.Errorf("exit %d, stderr:\n%s\nwant 1, one error suggesting --nats-listen 127.0.0.1:0, --nats-listen off or --nats-url, and no ready", code, errs)
	}
}
