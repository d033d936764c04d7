package worker

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
)

// FuzzDump: any dump, whatever its subject tokens, headers and body, gets exactly one
// result that names its problem and port and has either an answer or an error.
func FuzzDump(f *testing.F) {
	w := &Workers{subj: bus.Subjects{Prefix: bus.DefaultPrefix}, log: zerolog.Nop(), id: "fuzz", warn: logging.NewSampler(10, time.Second, 100)}
	f.Fuzz(func(t *testing.T, problem, port, seq, line string, unit []byte) {
		if !bus.ValidToken(problem) || !bus.ValidToken(port) {
			t.Skip() // the subscription's wildcard only lets such subjects in
		}
		msg := nats.NewMsg(w.subj.Dump(problem, port))
		msg.Header.Set(bus.HeaderSeq, seq)
		msg.Header.Set(bus.HeaderLine, line)
		msg.Data = unit
		r := w.solveDump(msg)
		if r.Problem != problem || r.Port != port || r.Worker != "fuzz" {
			t.Fatalf("result %+v for %s/%s", r, problem, port)
		}
		if (r.Error == "") == (r.Answer == "" && len(r.Result) == 0) {
			t.Fatalf("result %+v: want an answer or an error", r)
		}
		if _, ok := engine.Lookup(problem); ok && r.Error != "" && !strings.HasPrefix(r.Error, problem+": ") {
			t.Fatalf("error %q does not name its problem", r.Error)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}

func TestHeaderSafe(t *testing.T) {
	if got := headerSafe("a\r\nb\nc"); got != "a  b c" {
		t.Errorf("headerSafe kept line breaks: %q", got)
	}
	long := strings.Repeat("é", maxErrorHeader)
	got := headerSafe(long)
	if len(got) > maxErrorHeader+3 || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Errorf("headerSafe(long) = %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

// A result carries its dump's origin back, cut to 64 bytes; a dump without one gets a
// result without one.
func TestDumpOrigin(t *testing.T) {
	w := &Workers{subj: bus.Subjects{Prefix: bus.DefaultPrefix}, log: zerolog.Nop(), id: "test", warn: logging.NewSampler(10, time.Second, 100)}
	long := strings.Repeat("o", 100)
	for origin, want := range map[string]string{"": "", "9f86d081884c7d65": "9f86d081884c7d65", long: long[:64]} {
		msg := nats.NewMsg(w.subj.Dump("goscore", "hall"))
		if origin != "" {
			msg.Header.Set(bus.HeaderOrigin, origin)
		}
		msg.Data = []byte("garbage")
		if r := w.solveDump(msg); r.Origin != want || r.UnitDigest != bus.UnitDigest(msg.Data) {
			t.Errorf("origin %q: result origin %q, digest %q; want %q and the unit's digest", origin, r.Origin, r.UnitDigest, want)
		}
	}
}
