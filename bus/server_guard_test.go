package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/logging"
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
		"JetStream out of space, will be DISABLED", "%v %s %%", "",
		"lid:7 - Leafnode Error 'Authorization Violation'", "1.2.3.4:7422 - lid:7 - TLS leafnode handshake error: x509: certificate signed by unknown authority",
		`Error trying to connect as leafnode to remote server "h:7422" (attempt 1): EOF`, strings.Repeat(`"\x`, 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var out strings.Builder
		log := zerolog.New(&out)
		l := &serverLogger{l: log, link: &linkReport{l: log, link: &HubLink{URL: "nats-leaf://hub:7422", Club: "north"}}}
		l.Errorf(clientFormat("%v - %s"), errAuthentication, fmt.Sprintf("User %q", text))
		l.Errorf(clientFormat("%v - %s"), errAuthentication, text)
		l.Errorf(clientFormat("Publish Violation - %s, Subject %q"), `User "tool"`, text)
		l.Errorf("%s - %s", clientFormat("parser"), errors.New(text))           // Server.Errors
		l.Errorf(clientFormat(fmt.Sprintf("%q - Client Error %%s", text)), "x") // its connection's name
		if n := l.noSpace.Load(); n != 0 {
			t.Fatalf("client text %q counted as a full disk %d times", text, n)
		}
		for line := range strings.Lines(out.String()) {
			if strings.Contains(line, "league hub link failed") {
				t.Fatalf("client text %q told as the hub link's failure: %s", text, line)
			}
			// The JSON envelope may escape each byte of the line (\u00XX: 6 bytes).
			if len(line) > 6*(logging.MaxLine+30)+100 {
				t.Fatalf("client text of %d bytes made a log line of %d bytes", len(text), len(line))
			}
		}
	})
}

// audit is an API audit as nats-server publishes it, for a request by user.
func audit(user, subject string, resp any) []byte {
	r, _ := json.Marshal(resp)
	b, _ := json.Marshal(server.JSAPIAudit{Client: &server.ClientInfo{User: user}, Subject: subject, Response: string(r), TypedEvent: server.TypedEvent{Time: time.Now()}})
	return b
}

func created(stream, name string, cfg server.ConsumerConfig, at time.Time) server.JSApiConsumerCreateResponse {
	return server.JSApiConsumerCreateResponse{ConsumerInfo: &server.ConsumerInfo{Stream: stream, Name: name, Created: at, Config: &cfg}}
}

// The guard's decisions (review-club F7, F2, F8): what a tool may keep, and what it
// deletes.
func TestConsumerGuardDecides(t *testing.T) {
	var deleted []string
	g := newConsumerGuard(func(key string) error { deleted = append(deleted, key); return nil }, zerolog.Nop())
	now := time.Now()
	g.audit(audit(RoleDaemon, "$JS.API.CONSUMER.CREATE.SCOREBOARD.mine.scoreboard.result.>", created("SCOREBOARD", "mine", server.ConsumerConfig{}, now)))
	for _, c := range []struct {
		name string
		cfg  server.ConsumerConfig
		at   time.Time
		keep bool
	}{
		{"ordered", server.ConsumerConfig{InactiveThreshold: 5 * time.Minute, MemoryStorage: true}, now, true},
		{"watch", server.ConsumerConfig{DeliverSubject: "_INBOX.x"}, now, true},
		{"pager", server.ConsumerConfig{Durable: "pager", InactiveThreshold: time.Hour, MemoryStorage: true}, now, true},
		{"mine", server.ConsumerConfig{}, now, false},
		{"disk", server.ConsumerConfig{Durable: "disk", InactiveThreshold: time.Minute}, now, false},
		{"forever", server.ConsumerConfig{Durable: "forever", MemoryStorage: true}, now, false},
		{"solve", server.ConsumerConfig{DeliverSubject: "scoreboard.solve.goscore", DeliverGroup: QueueGroup}, now, false},
		{"group", server.ConsumerConfig{DeliverSubject: "_INBOX.y", DeliverGroup: "g"}, now, false},
		{"elsewhere", server.ConsumerConfig{DeliverSubject: "scoreboard.x"}, now, false},
		{"idle", server.ConsumerConfig{InactiveThreshold: 2 * time.Hour}, now, false},
		{"old", server.ConsumerConfig{}, now.Add(-time.Minute), false},
	} {
		deleted = deleted[:0]
		g.audit(audit(RoleTool, "$JS.API.CONSUMER.CREATE.SCOREBOARD."+c.name, created("SCOREBOARD", c.name, c.cfg, c.at)))
		if kept := len(deleted) == 0; kept != c.keep {
			t.Errorf("a tool's consumer %s (%+v): kept %v, want %v", c.name, c.cfg, kept, c.keep)
		}
	}
	deleted = deleted[:0]
	g.audit(audit(RoleDaemon, "$JS.API.CONSUMER.CREATE.SCOREBOARD.other", created("SCOREBOARD", "other", server.ConsumerConfig{Durable: "other"}, now)))
	g.audit(audit(RoleTool, "$JS.API.CONSUMER.CREATE.SCOREBOARD.x", map[string]any{"error": map[string]any{"code": 400}}))
	if len(deleted) != 0 {
		t.Errorf("the daemon's own consumer, or a refused request, deleted: %v", deleted)
	}
}

// FuzzConsumerGuardAudit: any audit, whatever its JSON, neither panics the guard nor
// deletes a consumer for a request that was not a tool's.
func FuzzConsumerGuardAudit(f *testing.F) {
	f.Add(audit(RoleTool, "$JS.API.CONSUMER.CREATE.SCOREBOARD.a", created("SCOREBOARD", "a", server.ConsumerConfig{Durable: "a"}, time.Now())))
	f.Add(audit(RoleTool, "$JS.API.CONSUMER.DELETE.SCOREBOARD.a", map[string]any{"success": true}))
	f.Add([]byte(`{"client":{"user":"tool"},"subject":"$JS.API.CONSUMER.CREATE.S.n","response":"{\"name\":\"n\",\"config\":null}"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a server.JSAPIAudit
		tool := json.Unmarshal(data, &a) == nil && a.Client != nil && a.Client.User == RoleTool
		g := newConsumerGuard(func(key string) error {
			if !tool {
				t.Fatalf("deleted %q for an audit not of a tool's request: %q", key, data)
			}
			return nil
		}, zerolog.Nop())
		g.audit(data)
	})
}
