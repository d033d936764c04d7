package bus

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
)

// clientFormat is how nats-server's client.Errorf puts a client in front of a format
// (client.go: c.format).
func clientFormat(format string) string {
	return fmt.Sprintf("%s - %s", "127.0.0.1:56478 - cid:141", format)
}

// errAuthentication is nats-server's ErrAuthentication's text.
var errAuthentication = errors.New("authentication error")

// F9 of the club review: only the store's own error lines count as a full disk,
// whatever text a client puts in the server's other error lines.
func TestStoreOutOfSpaceOnlyTheStore(t *testing.T) {
	full := &os.PathError{Op: "write", Path: "/var/lib/scoreboard/jetstream/$G/streams/SCOREBOARD/msgs/1.blk", Err: syscall.ENOSPC}
	for _, c := range []struct {
		format string
		v      []any
		want   bool
	}{
		{"Filestore [SCOREBOARD] Critical write error: %v", []any{full}, true},
		{"Filestore [KV_SCOREBOARD_BOARDS] Critical write error: %v", []any{errors.New("write x: no space left on device")}, true},
		{"JetStream out of space, will be DISABLED", nil, true},
		{"Filestore [SCOREBOARD] Critical write error: %v", []any{errors.New("permission denied")}, false},
		{"Filestore [SCOREBOARD] Critical write error: %v", []any{"no space left on device"}, false},
		{clientFormat("%v - %s"), []any{errAuthentication, `User "no space left on device"`}, false},
		{clientFormat("%v - %s"), []any{errAuthentication, `User "Filestore [X] Critical write error: no space left on device"`}, false},
		{clientFormat("Publish Violation - %s, Subject %q"), []any{`User "tool"`, "no space left on device"}, false},
		{clientFormat("JetStream out of space, will be DISABLED"), nil, false},
	} {
		if got := storeOutOfSpace(c.format, c.v); got != c.want {
			t.Errorf("storeOutOfSpace(%q, %q) = %v, want %v", c.format, c.v, got, c.want)
		}
	}
}

// FuzzServerLoggerClientText: whatever a client names itself, or whatever subject the
// server quotes back, the logger never counts a full disk.
func FuzzServerLoggerClientText(f *testing.F) {
	for _, s := range []string{"no space left on device", "Filestore [SCOREBOARD] Critical write error: no space left on device",
		"JetStream out of space, will be DISABLED", "%v %s %%", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		l := &serverLogger{l: zerolog.Nop()}
		l.Errorf(clientFormat("%v - %s"), errAuthentication, fmt.Sprintf("User %q", text))
		l.Errorf(clientFormat("%v - %s"), errAuthentication, text)
		l.Errorf(clientFormat("Publish Violation - %s, Subject %q"), `User "tool"`, text)
		l.Errorf("%s - %s", clientFormat("parser"), errors.New(text)) // Server.Errors
		if n := l.noSpace.Load(); n != 0 {
			t.Fatalf("client text %q counted as a full disk %d times", text, n)
		}
	})
}
