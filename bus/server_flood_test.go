package bus

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// TestFloodKind: the server's lines one client may repeat at will are told by the
// server's own words; its other errors are not sampled.
func TestFloodKind(t *testing.T) {
	for _, c := range []struct {
		format string
		v      []any
		want   string
	}{
		{clientFormat("%v - %s"), []any{server.ErrAuthentication, `User "organiser"`}, "authentication error"},
		{clientFormat(server.ErrTooManyConnections.Error()), nil, "maximum connections"},
		{clientFormat("Publish Violation - Subject %q"), []any{"scoreboard.pairings.load"}, "publish violation"},
		{clientFormat("Subscription Violation - Subject \"x\", SID 1"), nil, "subscription violation"},
		{clientFormat("%v - %s"), []any{errAuthentication, `User "organiser"`}, ""}, // not the server's error
		{"Filestore [SCOREBOARD] Critical write error: %v", []any{"no space left on device"}, ""},
		{"JetStream out of space, will be DISABLED", nil, ""},
		{clientFormat("Client Error %s"), []any{"'x'"}, "client error"},
		{clientFormat("Slow Consumer Detected: MaxPending of %d Exceeded"), []any{64 << 20}, "slow consumer"},
		{clientFormat("Slow Consumer %s: WriteDeadline of %v exceeded with %d chunks of %d total bytes."), []any{"Detected", "10s", 3, 100}, "slow consumer"},
		{clientFormat("Slow Consumer Recovered: Flush took %.3fs with %d chunks of %d total bytes."), []any{1.0, 3, 100}, ""},
		// A client's text before the server's words is not the server's notice.
		{"127.0.0.1:56478 - cid:141 - \"x - Slow Consumer Detected: MaxPending of %d Exceeded\" - Client connection closed", nil, ""},
	} {
		if got := floodKind(c.format, c.v); got != c.want {
			t.Errorf("floodKind(%q, %v) = %q, want %q", c.format, c.v, got, c.want)
		}
	}
}

// FuzzFloodKind: a client's text in the arguments never makes a line of another
// kind than its format's.
func FuzzFloodKind(f *testing.F) {
	for _, s := range []string{"", `User "organiser"`, " - Publish Violation - ", "authentication error", "maximum connections exceeded"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if k := floodKind("Filestore [S] Critical write error: %v", []any{text}); k != "" {
			t.Fatalf("a store error with %q is %q", text, k)
		}
		if k := floodKind(clientFormat("%v - %s"), []any{server.ErrAuthentication, text}); k != "authentication error" {
			t.Fatalf("a failed login as %q is %q", text, k)
		}
		if k := floodKind(clientFormat("Publish Violation - Subject %q"), []any{text}); k != "publish violation" {
			t.Fatalf("a publish violation on %q is %q", text, k)
		}
	})
}
