package bus

import (
	"strconv"

	"github.com/nats-io/nats.go"
)

// DumpHeader is what a dump's headers say: which port's unit it is, who published
// it and which attempt it is. The one place they are written (Put) and read
// (ReadDump): by a daemon's ports, `scoreboard send`, the workers, the history and a
// league hub.
type DumpHeader struct {
	Port   string // the port's name, as in the subject
	Seq    uint64 // the port's number of the unit, from 1; 0: none (a dump by hand)
	Line   int64  // the stream line the unit started on; 0: none
	Origin string // who published it and waits for its result
	// Attempt is which attempt the dump is, from 1; 0 for a publisher that does
	// not publish it again (HeaderAttempt).
	Attempt int
}

// Put writes h into hdr, with the dump's Nats-Msg-Id (DumpID) when it has an
// origin and a seq; a field at its zero value is left out. Values already in hdr
// are overwritten in place: a port reuses one message, and its header's slices,
// for every dump.
func (h DumpHeader) Put(hdr nats.Header) {
	set := func(k, v string) {
		if s := hdr[k]; len(s) == 1 {
			s[0] = v
			return
		}
		hdr[k] = []string{v}
	}
	if h.Port != "" {
		set(HeaderPort, h.Port)
	}
	if h.Seq > 0 {
		set(HeaderSeq, strconv.FormatUint(h.Seq, 10))
	}
	if h.Line > 0 {
		set(HeaderLine, strconv.FormatInt(h.Line, 10))
	}
	if h.Origin != "" {
		set(HeaderOrigin, h.Origin)
	}
	if h.Attempt > 0 {
		set(HeaderAttempt, strconv.Itoa(h.Attempt))
	}
	if id := DumpID(h.Origin, h.Seq); id != "" {
		set(HeaderMsgID, id)
	}
}

// ReadDump reads a dump's headers. A header that is absent reads as its zero value;
// badSeq is the Scoreboard-Seq value when it is present but not a number (the seq
// then reads as 0), for the reader to warn about. The origin is cut to MaxOrigin.
func ReadDump(hdr nats.Header) (h DumpHeader, badSeq string) {
	h.Port = hdr.Get(HeaderPort)
	if s := hdr.Get(HeaderSeq); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			badSeq = s
		}
		h.Seq = n
	}
	if s := hdr.Get(HeaderLine); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			h.Line = n
		}
	}
	h.Origin = hdr.Get(HeaderOrigin)
	h.Origin = h.Origin[:min(len(h.Origin), MaxOrigin)]
	if s := hdr.Get(HeaderAttempt); s != "" {
		h.Attempt, _ = strconv.Atoi(s)
	}
	return h, badSeq
}
