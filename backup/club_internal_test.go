package backup

import (
	"testing"

	"github.com/nats-io/nats.go"
)

// A hub's copy of a club's message becomes the club's own: the sequence number
// its Nats-Stream-Source header gives (not the hub's), its subject under the
// club's prefix, the club's time for a result, and no source header.
func TestAsClubs(t *testing.T) {
	h := nats.Header{}
	h.Set(sourceHeader, "SCOREBOARD:3ef9a1 17 > > scoreboard.result.goscore.hall")
	h.Set("Scoreboard-Time", "2026-11-28T08:00:00.123456789Z")
	h.Set("Nats-Msg-Id", "r.o.5")
	m, err := asClubs(Message{Seq: 4, Time: 99, Subject: "league.north.result.goscore.hall", Header: h},
		Options{Prefix: "scoreboard", SourcePrefix: "league.north"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Seq != 17 || m.Subject != "scoreboard.result.goscore.hall" || m.Time != 1795852800123456789 ||
		m.Header.Get(sourceHeader) != "" || m.Header.Get("Nats-Msg-Id") != "r.o.5" {
		t.Errorf("got %+v", m)
	}
	for _, bad := range []string{"", "SCOREBOARD", "SCOREBOARD:x zero", "SCOREBOARD:x 0"} {
		h := nats.Header{}
		if bad != "" {
			h.Set(sourceHeader, bad)
		}
		if _, err := asClubs(Message{Subject: "league.north.dump.a.b", Header: h}, Options{Prefix: "scoreboard", SourcePrefix: "league.north"}); err == nil {
			t.Errorf("source header %q: no error", bad)
		}
	}
	h.Set(sourceHeader, "S:x 3 > >")
	if _, err := asClubs(Message{Subject: "league.south.dump.a.b", Header: h}, Options{Prefix: "scoreboard", SourcePrefix: "league.north"}); err == nil {
		t.Error("another club's subject: no error")
	}
}
