package bus

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestLinkReportOncePerCause: the server's line of a failed link, every attempt,
// is one line of the report's per cause: again after linkReportEvery attempts, at
// once for a new cause or after the link was up; lines not about the link are not
// taken.
func TestLinkReportOncePerCause(t *testing.T) {
	var out strings.Builder
	r := &linkReport{l: zerolog.New(&out).Level(zerolog.InfoLevel), link: &HubLink{URL: "tls://hub.example.org:7422", Club: "north", TLSCA: "/etc/scoreboard/ca.crt"}}
	expired := "1.2.3.4:7422 - lid:5 - TLS leafnode handshake error: tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time"
	plain := "1.2.3.4:7422 - lid:6 - TLS leafnode handshake error: tls: first record does not look like a TLS handshake"
	count := func() int { return strings.Count(out.String(), "league hub link failed") }
	for range 10 {
		if !r.saw(expired, expired) {
			t.Fatal("the expired certificate's line not taken")
		}
	}
	if n := count(); n != 1 || !strings.Contains(out.String(), `"cause":"tls_expired"`) {
		t.Fatalf("10 attempts of one cause: %d lines, want 1 of tls_expired:\n%s", n, out.String())
	}
	r.saw(plain, plain)
	r.saw(plain, plain)
	if n := count(); n != 2 || !strings.Contains(out.String(), `"cause":"tls_none"`) {
		t.Fatalf("a new cause: %d lines in all, want 2:\n%s", n, out.String())
	}
	for range linkReportEvery - 2 {
		r.saw(plain, plain)
	}
	if n := count(); n != 3 || !strings.Contains(out.String(), `"attempts":150`) {
		t.Fatalf("%d attempts of one cause: %d lines in all, want 3:\n%s", linkReportEvery, n, out.String())
	}
	r.up()
	r.saw(plain, plain)
	if n := count(); n != 4 {
		t.Fatalf("after the link was up: %d lines in all, want 4", n)
	}
	if r.saw("%s", "Leafnode Error 'Permissions Violation for Publish to \"x\"'") || r.saw("1.2.3.4:5 - cid:7 - Client Error %s", "1.2.3.4:5 - cid:7 - Client Error 'Authorization Violation'") {
		t.Error("took a line that is no failure of the link")
	}
	for line, cause := range map[string]string{
		"x509: certificate is valid for hub.example.org, not localhost":                  "tls_wrong_name",
		"x509: certificate signed by unknown authority":                                  "tls_unknown_ca",
		"1.2.3.4:7422 - lid:7 - Leafnode Error 'Authorization Violation'":                "refused",
		`Error trying to connect as leafnode to remote server "h:7422" (attempt 1): EOF`: "unreachable",
	} {
		msg := line
		if strings.HasPrefix(cause, "tls") {
			msg = "1.2.3.4:7422 - lid:7 - TLS leafnode handshake error: tls: failed to verify certificate: " + line
		}
		out.Reset()
		if !r.saw(msg, msg) || !strings.Contains(out.String(), `"cause":"`+cause+`"`) {
			t.Errorf("%q: want cause %s, got %s", msg, cause, out.String())
		}
	}
}
