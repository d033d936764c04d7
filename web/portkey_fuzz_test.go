package web

import (
	"strings"
	"testing"

	"github.com/goclub/scoreboard/bus"
)

// FuzzPortKey: a port key read from outside is a token or two, reads back as
// itself, and says what the hand-written split it replaced said.
func FuzzPortKey(f *testing.F) {
	for _, s := range []string{"hall", "north.hall", "a.b.c", ".hall", "hall.", "", "Hall", "north.hall-2_x", "a..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k, ok := parsePortKey(key)
		club, port, two := strings.Cut(key, ".")
		want := bus.ValidToken(key)
		if two {
			want = bus.ValidToken(club) && bus.ValidToken(port)
		}
		if ok != want {
			t.Fatalf("parsePortKey(%q) = %+v, %v; the split by hand said %v", key, k, ok, want)
		}
		if ok && (k.String() != key || splitPortKey(key) != k) {
			t.Fatalf("parsePortKey(%q) = %+v, which reads back as %q", key, k, k.String())
		}
	})
}

// FuzzPortState: a port state is taken only for the port its subject names, a
// port key of the page (on a league hub's page, of a club of its list), whatever
// the payload says.
func FuzzPortState(f *testing.F) {
	for _, c := range [][2]string{
		{"league.port.north.t1", `{"port":"north.t1","state":"linked","since":"2026-01-01T00:00:00Z"}`},
		{"league.port.north.t1", `{"port":"north.t2","state":"link down","since":"2020-01-01T00:00:00Z"}`},
		{"league.port.fake.x", `{"port":"ghostclub.board9","state":"pay at evil.example","since":"2026-01-01T00:00:00Z"}`},
		{"league.port.ghost.x", `{"port":"ghost.x","state":"x","since":"2026-01-01T00:00:00Z"}`},
		{"league.port.a_b.t1", `{"port":"a_b.t1","state":"linked","since":"2026-01-01T00:00:00Z"}`},
		{"league.port.north", `{"port":"north"}`},
		{"league.port.", `{"port":""}`},
		{"scoreboard.port.hall", `{"port":"hall"}`},
		{"league.port.north.t1.x", `{"port":"north.t1.x"}`},
		{"league.port.north.t1", `not json`},
	} {
		f.Add(c[0], c[1])
	}
	d := NewDelays(0, nil)
	d.SetLeague([]string{"north", "a-b"}, nil)
	s := &Server{subj: bus.Subjects{Prefix: "league"}, delays: d}
	f.Fuzz(func(t *testing.T, subject, data string) {
		st, ok := s.portState(subject, []byte(data))
		if !ok {
			return
		}
		key, _ := strings.CutPrefix(subject, "league.port.")
		k, valid := parsePortKey(key)
		if "league.port."+st.Port != subject || !valid || (k.club != "" && k.club != "north" && k.club != "a-b") {
			t.Fatalf("took %+v from %q: not the subject's port of a listed club", st, subject)
		}
	})
}
