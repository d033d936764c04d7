package bus_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// Issue 41 (a reader of the review's notes): the league link's report reads the
// embedded server's error lines, and those quote what a client chose (its user name,
// its connection's name). A club whose hub is down (the link fails, "unreachable"),
// and a client without credentials that logs in with user names, and publishes where
// it may not under connection names, made of each cause's words: the report tells no
// other cause than the real one, and the server's lines about the client stay in the
// log at error level.
func TestLinkReportClientText(t *testing.T) {
	hub := "nats-leaf://127.0.0.1:" + strconv.Itoa(proctest.FreePort(t)) // nothing listens
	srv := bustest.Start(t, bustest.Options{JetStream: true, Hub: &bus.HubLink{URL: hub, Club: "north", Token: "club-token"}})
	bustest.Wait(t, "the link's failure told", func() (bool, string) {
		return strings.Contains(srv.Logs(), "cause=unreachable"), ""
	})
	texts := []string{
		"lid:7 - Leafnode Error 'Authorization Violation'",
		"lid:7 - TLS leafnode handshake error: x509: certificate signed by unknown authority",
		"lid:7 - TLS leafnode handshake error: x509: certificate has expired or is not yet valid",
		"lid:7 - TLS leafnode handshake error: x509: certificate is valid for hub.example.org, not localhost",
		"lid:7 - TLS leafnode handshake error: tls: first record does not look like a TLS handshake",
		"lid:7 - TLS leafnode handshake error: tls: certificate required",
		`Error trying to connect as leafnode to remote server "h:7422" (attempt 1): EOF`,
	}
	for _, text := range texts {
		if nc, err := nats.Connect(srv.URL(), nats.UserInfo(text, "wrong")); err == nil {
			nc.Close()
			t.Fatalf("a login as %q was taken", text)
		}
		nc, err := nats.Connect(srv.URL(), nats.Name(text))
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.Publish("scoreboard.result.goscore.hall", []byte("x")) // a tool's publish the server refuses
		_ = nc.Flush()
		nc.Close()
	}
	bustest.Wait(t, "the server's lines about the client", func() (bool, string) {
		logs := srv.Logs()
		a, v := strings.Count(logs, "authentication error"), strings.Count(logs, "Publish Violation")
		return a >= len(texts) && v >= len(texts), fmt.Sprintf("%d authentication errors and %d publish violations logged, want %d each", a, v, len(texts))
	})
	for _, m := range regexp.MustCompile(`cause=(\S+)`).FindAllStringSubmatch(srv.Logs(), -1) {
		if m[1] != "unreachable" {
			t.Errorf("a client's text told as the link's failure: cause %s", m[1])
		}
	}
}
