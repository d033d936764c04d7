package bus

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// TestRequestRefusal: only a literal inbox with no JetStream header is served.
func TestRequestRefusal(t *testing.T) {
	for _, c := range []struct {
		reply, header string
		ok            bool
	}{
		{"_INBOX.abc.1", "", true},
		{"_INBOX.abc", "", true},
		{"", "", false},
		{"_INBOX", "", false},
		{"_INBOX.", "", false},
		{"_INBOX.>", "", false},
		{"_INBOX.a.*", "", false},
		{"_INBOX.a..b", "", false},
		{"$JS.ACK.SCOREBOARD.evil.1.1.1.1.0", "", false},
		{"$JS.API.STREAM.PURGE.SCOREBOARD", "", false},
		{"$KV.SCOREBOARD_BOARDS.hall", "", false},
		{"scoreboard.repair.result.goscore.hall", "", false},
		{"scoreboard.pairings.load", "", false},
		{"_INBOX.abc.1", nats.JSStream, false},
		{"_INBOX.abc.1", nats.JSSequence, false},
		{"_INBOX." + strings.Repeat("a", MaxReply), "", false},
	} {
		m := &nats.Msg{Subject: "scoreboard.pairings.load", Reply: c.reply}
		if c.header != "" {
			m.Header = nats.Header{}
			m.Header.Set(c.header, "SCOREBOARD")
		}
		if why := RequestRefusal(m); (why == "") != c.ok {
			t.Errorf("reply %q, header %q: refusal %q; want served %v", c.reply, c.header, why, c.ok)
		}
	}
}

// FuzzRequestRefusal: whatever the reply and a header, a request served has an
// inbox for its reply and no JetStream delivery header.
func FuzzRequestRefusal(f *testing.F) {
	for _, s := range []string{"_INBOX.a.1", "", "$JS.ACK.S.c.1.1.1.1.0", "_INBOX.>", "$KV.X.y", "_INBOX.a b"} {
		f.Add(s, "", "")
		f.Add(s, nats.JSStream, "S")
	}
	f.Fuzz(func(t *testing.T, reply, key, value string) {
		m := &nats.Msg{Reply: reply, Header: nats.Header{}}
		if key != "" {
			m.Header.Set(key, value)
		}
		if RequestRefusal(m) != "" {
			return
		}
		if !ReplyInbox(reply) || strings.HasPrefix(reply, "$JS.") || m.Header.Get(nats.JSStream) != "" || m.Header.Get(nats.JSSequence) != "" {
			t.Fatalf("served: reply %q, header %q=%q", reply, key, value)
		}
	})
}
