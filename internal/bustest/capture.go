package bustest

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
)

// CaptureHistory stands for a daemon's ports in a test of the history's readers:
// the history stream takes only the daemon's recorder's copies, on the Repair
// subjects (history.Setup), and these tests publish dumps and results on the bus as
// a port and a worker do. Every dump and result published under prefix from now on
// is copied onto its Repair subject, in the order nc receives them (a dump before
// its result), so the stream stores it under its own subject. nc must have the
// daemon's rights.
func CaptureHistory(t testing.TB, nc *nats.Conn, prefix string) {
	t.Helper()
	s := bus.Subjects{Prefix: prefix}
	dumps, results := prefix+".dump.", prefix+".result."
	// One subscription, so that the copies keep the order the server delivered
	// the messages in (a dump before its result), as the recorder keeps a port's.
	sub, err := nc.Subscribe(prefix+".>", func(m *nats.Msg) {
		if strings.HasPrefix(m.Subject, dumps) || strings.HasPrefix(m.Subject, results) {
			_ = nc.PublishMsg(&nats.Msg{Subject: s.Repair(m.Subject), Header: m.Header, Data: m.Data})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}
