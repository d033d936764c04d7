package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/result"
)

// hopPayloads are the messages of BenchmarkPipeline's boards as `run` sends them: each
// board's unit (the dump's data) and the result JSON a worker answers it with.
type hopPayloads struct {
	units, results [][]byte
}

// newHopPayloads frames in as `run` does and makes each unit's result as a worker
// does (the answer, the structured result, the unit's digest), once, before the
// clock starts: the relay below only carries them.
func newHopPayloads(tb testing.TB, in []byte, port, origin string) hopPayloads {
	tb.Helper()
	p, ok := engine.Lookup("goscore")
	if !ok {
		tb.Fatal("no goscore problem")
	}
	fr := p.NewFramer()
	var hp hopPayloads
	var frames []engine.Frame
	take := func() {
		for _, f := range frames {
			if f.Err != nil {
				tb.Fatalf("line %d: %v", f.Line, f.Err)
			}
			unit := append([]byte(nil), f.Unit...)
			ans, err := p.Solve(unit)
			if err != nil {
				tb.Fatal(err)
			}
			structured, err := json.Marshal(ans)
			if err != nil {
				tb.Fatal(err)
			}
			text, _ := p.Append(nil, unit)
			res := result.Record{
				Problem: "goscore", Port: port, Seq: uint64(len(hp.units) + 1), Line: int64(f.Line),
				Answer: string(text), Result: structured, SolveMicros: 1.5, Origin: origin,
				UnitDigest: bus.UnitDigest(unit), Worker: "NATSHOPBENCHWORKER0000",
			}
			hp.units = append(hp.units, unit)
			hp.results = append(hp.results, res.AppendJSON(nil))
		}
		frames = frames[:0]
	}
	for rest := in; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		frames = fr.Feed(frames, line)
		take()
	}
	frames = fr.End(frames)
	take()
	return hp
}

// natsHop is the NATS part of `run --port -` alone, the floor BenchmarkPipeline's
// run row is measured against: an embedded server with no listener, and two
// in-process connections as run has them (the port's, the workers'). The port's
// publishes each unit as a dump with the display's five headers and a reply subject
// on its inbox (one per slot of the 256 in flight), keeping at most 256 in flight,
// and takes the answers from its inbox through a channel; the workers' answers each
// dump in its subscription's callback (a queue subscription, as the workers') on the
// reply subject and publishes the same result on the public results subject. Three
// messages a board, as in run; nothing is solved, framed, hashed or written out.
// Like an op of run, an op is the whole file, start-up and shut-down included.
func natsHop(tb testing.TB, hp hopPayloads, origin string) {
	srv, err := bus.StartServerWith(bus.ServerOptions{Listen: bus.ListenOff}, zerolog.Nop())
	if err != nil {
		tb.Fatal(err)
	}
	defer srv.Shutdown()
	pnc, err := bus.Connect(bus.ConnOptions{Server: srv, Name: "hop ports"}, zerolog.Nop())
	if err != nil {
		tb.Fatal(err)
	}
	defer pnc.Close()
	wnc, err := bus.Connect(bus.ConnOptions{Server: srv, Name: "hop workers"}, zerolog.Nop())
	if err != nil {
		tb.Fatal(err)
	}
	defer wnc.Close()
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	port := daemon.DefaultName("-")
	resultSubj := subj.Result("goscore", port)
	if _, err := wnc.QueueSubscribe(subj.AllDumps(), bus.QueueGroup, func(m *nats.Msg) {
		seq, err := strconv.ParseUint(m.Header.Get(bus.HeaderSeq), 10, 64)
		if err != nil || seq == 0 || seq > uint64(len(hp.results)) {
			tb.Errorf("dump with seq header %q", m.Header.Get(bus.HeaderSeq))
			return
		}
		data := hp.results[seq-1]
		if err := m.Respond(data); err != nil {
			tb.Error(err)
		}
		if err := wnc.PublishMsg(&nats.Msg{Subject: resultSubj, Data: data,
			Header: nats.Header{bus.HeaderMsgID: {bus.ResultID(origin, seq)}}}); err != nil {
			tb.Error(err)
		}
	}); err != nil {
		tb.Fatal(err)
	}
	if err := wnc.Flush(); err != nil {
		tb.Fatal(err)
	}
	const inFlight = 256
	inbox := pnc.NewInbox()
	replies := make(chan *nats.Msg, 2*inFlight)
	sub, err := pnc.ChanSubscribe(inbox+".*", replies)
	if err != nil {
		tb.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := pnc.Flush(); err != nil {
		tb.Fatal(err)
	}
	m := &nats.Msg{Subject: subj.Dump("goscore", port), Header: nats.Header{
		bus.HeaderPort: {port}, bus.HeaderSeq: {""}, bus.HeaderLine: {""}, bus.HeaderOrigin: {origin}, bus.HeaderMsgID: {""},
	}}
	sent, got := 0, 0
	timeout := time.After(time.Minute)
	for got < len(hp.units) {
		for sent < len(hp.units) && sent-got < inFlight {
			seq := uint64(sent + 1)
			m.Data = hp.units[sent]
			m.Reply = inbox + "." + strconv.FormatUint(seq%inFlight, 10)
			m.Header[bus.HeaderMsgID][0] = bus.DumpID(origin, seq)
			m.Header[bus.HeaderSeq][0] = strconv.FormatUint(seq, 10)
			m.Header[bus.HeaderLine][0] = strconv.Itoa(20*sent + 1)
			if err := pnc.PublishMsg(m); err != nil {
				tb.Fatal(err)
			}
			sent++
		}
		select {
		case r := <-replies:
			if len(r.Data) == 0 {
				tb.Fatalf("empty answer on %s", r.Subject)
			}
			got++
		case <-timeout:
			tb.Fatalf("%d of %d answers after a minute (%d dumps sent)", got, len(hp.units), sent)
		}
	}
}
