package league

import (
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
// prefix), then its sequence; and a new intake's config starts where it says.
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
		cfg := intakeConfig(c, jetstream.StreamConfig{Name: ClubStream("north")}, last)
		src := cfg.Sources[0]
		switch {
		case clubSeq > 0 && (clubSeq == ^uint64(0) || src.OptStartSeq != clubSeq+1 || cfg.FirstSeq != 0):
			if clubSeq != ^uint64(0) {
				t.Fatalf("header %q: intake starts at club seq %d, first seq %d", hdr, src.OptStartSeq, cfg.FirstSeq)
			}
		case intakeSeq > 0 && intakeSeq != ^uint64(0) && (cfg.FirstSeq != intakeSeq+1 || src.OptStartTime == nil):
			t.Fatalf("header %q: intake's first seq %d, start time %v", hdr, cfg.FirstSeq, src.OptStartTime)
		case clubSeq == 0 && intakeSeq == 0 && (src.OptStartSeq != 0 || src.OptStartTime != nil || cfg.FirstSeq != 0):
			t.Fatalf("header %q: no position, yet the intake starts at %d / %v / %d", hdr, src.OptStartSeq, src.OptStartTime, cfg.FirstSeq)
		}
	})
}
