package backup

import (
	"fmt"
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

// The cuts' order: a bucket's before the history's, and a stream that sources
// another before its source (a daemon's history sources its pairings' bucket);
// a source not backed up (a hub's club, over the link) changes nothing, and a
// cycle ends.
func TestCutOrder(t *testing.T) {
	for _, c := range []struct {
		names   []string
		sources map[string][]string
		want    []string
	}{
		{[]string{"KV_S_BOARDS", "S"}, nil, []string{"KV_S_BOARDS", "S"}},
		{[]string{"KV_S_BOARDS", "KV_S_PAIRINGS", "S"}, map[string][]string{"S": {"KV_S_PAIRINGS"}},
			[]string{"KV_S_BOARDS", "S", "KV_S_PAIRINGS"}},
		{[]string{"LEAGUE_NORTH", "LEAGUE_SOUTH"}, map[string][]string{"LEAGUE_NORTH": {"SCOREBOARD"}, "LEAGUE_SOUTH": {"SCOREBOARD"}},
			[]string{"LEAGUE_NORTH", "LEAGUE_SOUTH"}},
		{[]string{"A", "B"}, map[string][]string{"A": {"B"}, "B": {"A"}}, nil},
	} {
		got := cutOrder(c.names, c.sources)
		if c.want != nil && fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("cutOrder(%v, %v) = %v, want %v", c.names, c.sources, got, c.want)
		}
		if len(got) != len(c.names) {
			t.Errorf("cutOrder(%v) = %v: lost or added a stream", c.names, got)
		}
	}
}
