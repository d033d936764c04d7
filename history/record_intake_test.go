package history_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
)

// A burst larger than the stream's intake: nats-server (2.11 on) holds at most
// StreamMaxBufferedMsgs messages (100,000 by default) and StreamMaxBufferedSize
// bytes (128 MiB) waiting to be stored in a stream, and drops what comes beyond,
// logging one line and counting nothing; a publish with a reply is answered
// 429 Too Many Requests, one without is gone. A copy of the bus published into
// the stream without acks (the league benchmark's stand-in clubs did so) is short
// of the burst then; the recorder, the daemon's one path into the history, is
// refused, sends again, and stores every message once. The server here holds 8
// waiting (the default's bytes are a flood of the largest capture units, 1,024 of
// which the recorder has in flight), so that a burst of 200 8 KiB dumps is one.
func TestRecorderStoresABurstBeyondTheStreamsIntake(t *testing.T) {
	ns, err := server.NewServer(&server.Options{DontListen: true, NoSigs: true, NoLog: true, JetStream: true,
		StoreDir: t.TempDir(), StreamMaxBufferedMsgs: 8})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(bustest.Long) {
		t.Fatal("the server is not ready")
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	const prefix, burst = "intake", 200
	subj := bus.Subjects{Prefix: prefix}
	ctx := context.Background()
	if _, err := history.Setup(ctx, js, history.Config{Prefix: prefix, MaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, subj.Stream())
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(strings.Repeat("+ @ O + + + + + + + + + + + + + + + + +\n", 8<<10/41))
	// held is how many messages of port the stream holds, once it has stopped
	// taking more: every message published is stored or dropped by then.
	held := func(port string) uint64 {
		var n, last uint64
		bustest.Wait(t, "the stream's count settled", func() (bool, string) {
			info, err := stream.Info(ctx, jetstream.WithSubjectFilter(subj.Dump("goscore", port)))
			if err != nil {
				return false, err.Error()
			}
			last, n = n, info.State.Subjects[subj.Dump("goscore", port)]
			return n == last && n > 0, fmt.Sprintf("%d then %d", last, n)
		})
		return n
	}
	dump := func(port, origin string, k int) *nats.Msg {
		m := nats.NewMsg(subj.Dump("goscore", port))
		m.Data = data
		m.Header.Set(bus.HeaderMsgID, bus.DumpID(origin, uint64(k)))
		return m
	}

	// Without acks, as the stand-in clubs copied the bus into the stream.
	origin := bus.NewOrigin()
	for k := 1; k <= burst; k++ {
		m := dump("core", origin, k)
		m.Subject = subj.Repair(m.Subject)
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.FlushTimeout(bustest.Long); err != nil {
		t.Fatal(err)
	}
	core := held("core")

	// The daemon's recorder, on the same server and stream.
	rec, err := history.NewRecorder(nc, prefix, bustest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rec.Run(rctx, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	origin = bus.NewOrigin()
	for k := 1; k <= burst; k++ {
		rec.Record(dump("rec", origin, k))
	}
	bustest.Wait(t, "the recorder has everything stored", func() (bool, string) {
		return rec.Held() == 0, fmt.Sprintf("%d held, %d stored, %d sent again, %d given up", rec.Held(), rec.Stored(), rec.Resent(), rec.Dropped())
	})
	recorded := held("rec")
	t.Logf("a burst of %d 8 KiB dumps into a stream that holds %d waiting: core publishes %d stored; the recorder %d stored (%d acks, %d sent again, %d given up)",
		burst, 8, core, recorded, rec.Stored(), rec.Resent(), rec.Dropped())
	if rec.Resent() == 0 {
		t.Errorf("the stream never refused the recorder: the burst did not overflow its intake, and this test shows nothing")
	}
	if recorded != burst || rec.Dropped() != 0 {
		t.Errorf("the recorder stored %d of a burst of %d (gave up %d): the daemon's history lost what its ports read", recorded, burst, rec.Dropped())
	}
}
