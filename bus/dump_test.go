package bus_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
)

// A dump's headers read back as they were put, with the dump's id; a field at its
// zero value is left out; a header reused for the next dump (a port's one message)
// holds the next dump's values only.
func TestDumpHeaderRoundTrip(t *testing.T) {
	hdr := nats.Header{}
	h := bus.DumpHeader{Port: "hall", Seq: 12, Line: 240, Origin: "o1", Attempt: 2}
	h.Put(hdr)
	if got, bad := bus.ReadDump(hdr); got != h || bad != "" {
		t.Errorf("ReadDump = %+v (bad seq %q), want %+v", got, bad, h)
	}
	if id := hdr.Get(bus.HeaderMsgID); id != bus.DumpID("o1", 12) {
		t.Errorf("Nats-Msg-Id %q, want %q", id, bus.DumpID("o1", 12))
	}
	seqSlice := hdr[bus.HeaderSeq]
	next := bus.DumpHeader{Port: "hall", Seq: 13, Line: 260, Origin: "o1", Attempt: 1}
	next.Put(hdr)
	if got, _ := bus.ReadDump(hdr); got != next {
		t.Errorf("after the next dump: %+v, want %+v", got, next)
	}
	if &hdr[bus.HeaderSeq][0] != &seqSlice[0] {
		t.Errorf("Put made a new slice for a header it had: a port's reused message allocates every dump")
	}

	// By hand: no headers at all, and none written for zero values.
	empty := nats.Header{}
	bus.DumpHeader{Port: "desk"}.Put(empty)
	if len(empty) != 1 || empty.Get(bus.HeaderPort) != "desk" {
		t.Errorf("a dump with only a port: headers %v", empty)
	}
	if got, bad := bus.ReadDump(nil); got != (bus.DumpHeader{}) || bad != "" {
		t.Errorf("no headers: %+v, %q", got, bad)
	}

	// A bad seq is said, and reads 0; a long origin is cut as a result carries it.
	bad := nats.Header{bus.HeaderSeq: {"x1"}, bus.HeaderOrigin: {strings.Repeat("o", 100)}, bus.HeaderLine: {"-3"}}
	got, badSeq := bus.ReadDump(bad)
	if badSeq != "x1" || got.Seq != 0 || got.Line != 0 || len(got.Origin) != bus.MaxOrigin {
		t.Errorf("bad headers: %+v, bad seq %q", got, badSeq)
	}
}
