package bus_test

import (
	"strings"
	"testing"

	"github.com/goclub/scoreboard/bus"
)

// Issue 41: a dump's port token must be a port name, as the settings' are.
func TestParseDumpRefusesNoPortName(t *testing.T) {
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	for _, c := range []struct {
		subject, why string // why: "" when the subject is a dump's
	}{
		{"scoreboard.dump.goscore.hall", ""},
		{"scoreboard.dump.goscore." + strings.Repeat("p", bus.MaxToken), ""},
		{"scoreboard.dump.goscore.*", `port "*" is no name`},
		{"scoreboard.dump.goscore.>", `port ">" is no name`},
		{"scoreboard.dump.*.hall", `problem "*" is no name`},
		{"scoreboard.dump.goscore.", `port "" is no name`},
		{"scoreboard.dump..hall", `problem "" is no name`},
		{"scoreboard.dump.goscore." + strings.Repeat("p", bus.MaxToken+1), "is no name: want 1 to 64"},
		{"scoreboard.dump.goscore." + strings.Repeat("p", 4096), "is no name"},
		{"scoreboard.dump.goscore.Hall", "is no name"},
		{"scoreboard.dump.goscore.a.b", "want scoreboard.dump.<problem>.<port>"},
		{"scoreboard.result.goscore.hall", "want scoreboard.dump.<problem>.<port>"},
	} {
		problem, port, err := s.ParseDump(c.subject)
		switch {
		case c.why == "" && (err != nil || problem != "goscore" || port == ""):
			t.Errorf("%.60s: %q %q %v", c.subject, problem, port, err)
		case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
			t.Errorf("%.60s: error %v, want one saying %q", c.subject, err, c.why)
		case err != nil && len(err.Error()) > 300:
			t.Errorf("%.60s: an error of %d bytes quotes too much", c.subject, len(err.Error()))
		}
	}
}

// FuzzParseDump: a subject is a dump's only with a problem and a port that are names
// (bus.ValidToken), and then builds back to itself; an error never quotes more than
// a few hundred bytes of it.
func FuzzParseDump(f *testing.F) {
	for _, s := range []string{"scoreboard.dump.goscore.hall", "scoreboard.dump.goscore.*", "scoreboard.dump.goscore.>",
		"scoreboard.dump..", "scoreboard.dump.goscore." + strings.Repeat("x", 4096), "scoreboard.dump.a.b.c", "_INBOX.x"} {
		f.Add(s)
	}
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	f.Fuzz(func(t *testing.T, subject string) {
		problem, port, err := s.ParseDump(subject)
		if err != nil {
			if len(err.Error()) > 400 {
				t.Fatalf("an error of %d bytes", len(err.Error()))
			}
			return
		}
		if !bus.ValidToken(problem) || !bus.ValidToken(port) || s.Dump(problem, port) != subject {
			t.Fatalf("%q: problem %q port %q", subject, problem, port)
		}
	})
}

// FuzzReplyInbox: a reply subject a worker answers on is a literal subject under
// _INBOX., never one of the daemon's own.
func FuzzReplyInbox(f *testing.F) {
	for _, s := range []string{"_INBOX.abc", "_INBOX.abc.1", "_INBOX.>", "_INBOX.*", "_INBOX", "_INBOX.", "$KV.SCOREBOARD_BOARDS.hall",
		"scoreboard.result.goscore.hall", "_INBOX..x", "_INBOX.a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		if !bus.ReplyInbox(reply) {
			return
		}
		if !strings.HasPrefix(reply, bus.InboxPrefix) || len(reply) > bus.MaxReply || strings.ContainsAny(reply, "*> \t\r\n") ||
			strings.Contains(reply, "..") || strings.HasSuffix(reply, ".") {
			t.Fatalf("%q taken for an inbox", reply)
		}
	})
}
