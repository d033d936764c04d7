package history_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// BenchmarkStore is the floor of the history's cost: the embedded server taking a
// board's two messages (its dump, 800 bytes with the display's five headers, and
// its result with its Nats-Msg-Id) from one in-process connection, with no
// subscriber, beside the same with the SCOREBOARD stream storing them (the
// daemon's recorder handed a copy of each, as a port hands them, and publishing it
// on its Repair subject with an ack; deduplication and a file store in a temporary
// directory, as run sets them up), in the same run, at each --history-sync setting
// (the server's sync_interval: the default 2m, 1s, and always). One op is one
// board; each run of b.N boards ends when the server has taken them in (a flush)
// and, with the stream, acked them all to the recorder. The store is on the test's temporary directory's filesystem: run
// with TMPDIR on the disk of interest (an SD card) for its figures.
func BenchmarkStore(b *testing.B) {
	unit := []byte(goscore())
	for _, c := range []struct {
		name   string
		stream bool
		sync   history.Sync
	}{
		{"server", false, history.Sync{}},
		{"server+stream", true, history.Sync{}},
		{"server+stream/sync=1s", true, history.Sync{Interval: time.Second}},
		{"server+stream/sync=always", true, history.Sync{Always: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			// The server and the connection log nowhere, as before the move: the
			// logs are no part of what is measured.
			nop := zerolog.Nop()
			srv := bustest.Start(b, bustest.Options{Off: true, JetStream: c.stream, SyncAlways: c.sync.Always, SyncInterval: c.sync.Interval, Log: &nop})
			nc := srv.Conn(bus.ConnOptions{Server: srv.Server, Name: "bench"})
			var r *history.Recorder
			if c.stream {
				js, err := history.NewJetStream(nc)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := history.Setup(context.Background(), js, history.Config{
					Prefix: bus.DefaultPrefix, MaxAge: history.DefaultMaxAge, MaxBytes: history.DefaultMaxBytes, Duplicates: 12 * time.Second,
				}); err != nil {
					b.Fatal(err)
				}
				var err2 error
				if r, err2 = history.NewRecorder(srv.Conn(bus.ConnOptions{Server: srv.Server, Name: "bench history"}), bus.DefaultPrefix, nop); err2 != nil {
					b.Fatal(err2)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { _ = r.Run(ctx, nil); close(done) }()
				defer func() { cancel(); <-done }()
			}
			s := bus.Subjects{Prefix: bus.DefaultPrefix}
			origin := "bench" + strconv.Itoa(b.N)
			dump := &nats.Msg{Subject: s.Dump("goscore", "hall"), Data: unit, Reply: "_INBOX.bench.1", Header: nats.Header{
				bus.HeaderPort: {"hall"}, bus.HeaderSeq: {""}, bus.HeaderLine: {"1"}, bus.HeaderOrigin: {origin}, bus.HeaderMsgID: {""},
			}}
			result := &nats.Msg{Subject: s.Result("goscore", "hall"), Header: nats.Header{bus.HeaderMsgID: {""}}}
			var seq uint64
			cpu, start := proctest.CPUTime(), time.Now()
			for b.Loop() {
				seq++
				n := strconv.FormatUint(seq, 10)
				dump.Header[bus.HeaderSeq][0] = n
				dump.Header[bus.HeaderMsgID][0] = bus.DumpID(origin, seq)
				result.Header[bus.HeaderMsgID][0] = bus.ResultID(origin, seq)
				result.Data = []byte(`{"problem":"goscore","port":"hall","seq":` + n + `,"answer":"177 175\n","origin":"` + origin + `","worker":"w","unit_digest":"00112233445566778899aabbccddeeff"}`)
				if err := nc.PublishMsg(dump); err != nil {
					b.Fatal(err)
				}
				if err := nc.PublishMsg(result); err != nil {
					b.Fatal(err)
				}
				if r != nil {
					// The port's copies, as the display makes them.
					r.Record(&nats.Msg{Subject: dump.Subject, Header: copyHeader(dump.Header), Data: dump.Data})
					r.Record(&nats.Msg{Subject: result.Subject, Header: copyHeader(result.Header), Data: result.Data})
					// Paced by the stream's acks, as ports are by their answers: a
					// recorder handed more than it stores would drop the oldest.
					for r.Held() > benchHeld {
						time.Sleep(50 * time.Microsecond)
					}
				}
			}
			if err := nc.Flush(); err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if !srv.WaitStored(ctx) {
				b.Fatal("not stored within a minute")
			}
			for r != nil && r.Stored() < 2*seq && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			if r != nil && r.Stored() < 2*seq {
				b.Fatalf("%d of %d acked within a minute", r.Stored(), 2*seq)
			}
			b.ReportMetric(float64(proctest.CPUTime()-cpu)/1e3/float64(b.N), "cpu-µs/board")
			// Stored, not only published: b.Loop's timer stops before the wait.
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "stored-boards/s")
		})
	}
}

// benchHeld bounds the messages the benchmark's recorder holds: a few times its
// publishes in flight.
const benchHeld = 8192

// copyHeader is a header of its own: the loop's messages are reused.
func copyHeader(h nats.Header) nats.Header {
	c := make(nats.Header, len(h))
	for k, v := range h {
		c[k] = []string{v[0]}
	}
	return c
}
