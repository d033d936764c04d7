package league

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// FuzzSourcePosition: any Nats-Stream-Source header on a club's stream's last
// unit. Property: never a panic; a position only from a header that names the
// club's history stream or its intake (with or without the hash of its API
// prefix), then its sequence; and a new intake starts at the club's next
// sequence, numbered from it.
func FuzzSourcePosition(f *testing.F) {
	for _, s := range []string{
		"INTAKE_NORTH:WsTw3dxy 3 > > league.north.dump.goscore.t1 UbjmNJ51",
		"SCOREBOARD:5rd7Gbi5 24 scoreboard.> league.north.> scoreboard.dump.goscore.t1",
		"SCOREBOARD 7", "INTAKE_SOUTH:x 9 > >", "INTAKE_NORTH 18446744073709551615", "INTAKE_NORTH -1",
		"", " ", "SCOREBOARD:", ":: 1", "INTAKE_NORTH:a:b 5",
	} {
		f.Add(s)
	}
	c := Club{Name: "north"}
	f.Fuzz(func(t *testing.T, hdr string) {
		last := &jetstream.RawStreamMsg{Header: nats.Header{streamSourceHeader: []string{hdr}}, Time: time.Unix(1, 0)}
		clubSeq, intakeSeq := sourcePosition(last, c)
		fields := strings.Fields(hdr)
		if clubSeq > 0 || intakeSeq > 0 {
			name, _, _ := strings.Cut(fields[0], ":")
			want := map[string]uint64{"SCOREBOARD": clubSeq, IntakeStream("north"): intakeSeq}[name]
			if n, err := strconv.ParseUint(fields[1], 10, 64); want == 0 || err != nil || n != want || clubSeq > 0 && intakeSeq > 0 {
				t.Fatalf("header %q: club seq %d, intake seq %d", hdr, clubSeq, intakeSeq)
			}
		}
		start := startAfter(context.Background(), c, last, nil)
		cfg := intakeConfig(c, jetstream.StreamConfig{Name: ClubStream("north")}, start)
		src := cfg.Sources[0]
		want := uint64(0)
		switch {
		case clubSeq > 0 && clubSeq < ^uint64(0):
			want = clubSeq + 1
		case intakeSeq > 0 && intakeSeq < ^uint64(0):
			want = intakeSeq + 1 // this hub's intakes are numbered as the club's history
		}
		if start.next != want || start.since != nil || src.OptStartTime != nil {
			t.Fatalf("header %q: club seq %d, intake seq %d: starts at %d (since %v), want %d", hdr, clubSeq, intakeSeq, start.next, start.since, want)
		}
		if want > 1 && (src.OptStartSeq != want || cfg.FirstSeq != want) || want <= 1 && (src.OptStartSeq != 0 || cfg.FirstSeq != 0) {
			t.Fatalf("header %q: the intake starts at the club's %d, numbered from %d; want both %d", hdr, src.OptStartSeq, cfg.FirstSeq, want)
		}
	})
}
