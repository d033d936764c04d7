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
// 429 Too Many Requests, one without is gone. Core publishes into the stream are
// short of the burst then; the recorder, the daemon's one path into the history, is
// refused, sends again, and stores every message once. The server here holds 8
// waiting (the default's bytes are a flood of the largest capture units, 1,024 of
// which the recorder has in flight), so that a burst of 100 8 KiB dumps is one.
func TestRecorderStoresABurstBeyondTheStreamsIntake(t *testing.T) {
	const burst, intake = 100, 8
	e := startRawRecord(t, &server.Options{StreamMaxBufferedMsgs: intake})
	// Without acks, as the stand-in clubs copied the bus into the stream.
	origin := bus.NewOrigin()
	for k := 1; k <= burst; k++ {
		m := e.dump("core", origin, k)
		m.Subject = e.subj.Repair(m.Subject)
		if err := e.nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.nc.FlushTimeout(bustest.Long); err != nil {
		t.Fatal(err)
	}
	core := e.held(t, "core")

	// The daemon's recorder, on the same server and stream.
	rec := e.recorder(t)
	origin = bus.NewOrigin()
	for k := 1; k <= burst; k++ {
		rec.Record(e.dump("rec", origin, k))
	}
	bustest.Wait(t, "the recorder has everything stored", func() (bool, string) {
		return rec.Held() == 0, fmt.Sprintf("%d held, %d stored, %d sent again, %d given up", rec.Held(), rec.Stored(), rec.Resent(), rec.Dropped())
	})
	recorded := e.held(t, "rec")
	t.Logf("a burst of %d 8 KiB dumps into a stream that holds %d waiting: core publishes %d stored; the recorder %d stored (%d acks, %d sent again, %d given up)",
		burst, intake, core, recorded, rec.Stored(), rec.Resent(), rec.Dropped())
	if rec.Resent() == 0 {
		t.Errorf("the stream never refused the recorder: the burst did not overflow its intake, and this test shows nothing")
	}
	if recorded != burst || rec.Dropped() != 0 {
		t.Errorf("the recorder stored %d of a burst of %d (gave up %d): the daemon's history lost what its ports read", recorded, burst, rec.Dropped())
	}
}

// The server closes a client's connection (one it could not write to within its
// write deadline, a slow consumer: a process starved of CPU for 10 s; here the test
// closes it, halfway through a burst). What was on its way is gone: a copy of the
// bus into the stream over such a connection (the league benchmark's stand-in
// clubs, whose 200-club runs were 72 and 85 messages short) loses it without an
// error; the recorder, whose publishes wait for their acks and are sent again,
// stores every message once. The ports' connection subscribes to what it
// publishes, as the stand-ins' did, so that the server has something on its way
// to it.
func TestRecorderStoresEverythingThroughItsConnectionClosed(t *testing.T) {
	e := startRawRecord(t, &server.Options{})
	const units, window = 2000, 32
	// publish publishes units dumps of port on the bus, as a port does, record
	// taking each first; settle(n) waits until at most n are on their way, every
	// window dumps: the pace of the benchmark's fill. The server closes the
	// connection after the first half.
	publish := func(port string, record func(m *nats.Msg), settle func(n int)) (closed uint64) {
		origin := bus.NewOrigin()
		before := e.nc.Stats().Reconnects
		for k := 1; k <= units; k++ {
			m := e.dump(port, origin, k)
			record(m)
			_ = e.nc.PublishMsg(m)
			if k%window == 0 {
				settle(window)
			}
			if k == units/2 {
				if id, err := e.nc.GetClientID(); err != nil {
					t.Error(err)
				} else if err := e.ns.DisconnectClientByID(id); err != nil {
					t.Error(err)
				}
			}
		}
		settle(0)
		return e.nc.Stats().Reconnects - before
	}
	sub, err := e.nc.Subscribe(e.subj.Prefix+".>", func(m *nats.Msg) {
		// The stand-in's capture: every dump on the bus copied into the stream.
		if strings.HasPrefix(m.Subject, e.subj.Dump("goscore", "core")) {
			_ = e.nc.PublishMsg(&nats.Msg{Subject: e.subj.Repair(m.Subject), Header: m.Header, Data: m.Data})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		t.Fatal(err)
	}
	coreCloses := publish("core", func(*nats.Msg) {}, func(int) { _ = e.nc.FlushTimeout(bustest.Long) })
	core := e.held(t, "core")

	rec := e.recorder(t)
	closes := publish("rec", rec.Record, func(n int) {
		bustest.Wait(t, "the recorder's acks", func() (bool, string) {
			return rec.Held() <= n, fmt.Sprintf("%d held, %d stored, %d sent again, %d given up", rec.Held(), rec.Stored(), rec.Resent(), rec.Dropped())
		})
	})
	recorded := e.held(t, "rec")
	t.Logf("%d 8 KiB dumps, the connection closed halfway: the bus copied into the stream %d stored (%d reconnects); the recorder %d stored (%d acks, %d sent again, %d given up; %d reconnects)",
		units, core, coreCloses, recorded, rec.Stored(), rec.Resent(), rec.Dropped(), closes)
	if closes == 0 {
		t.Errorf("the recorder's connection was never closed: this test shows nothing")
	}
	if recorded != units || rec.Dropped() != 0 {
		t.Errorf("the recorder stored %d of %d (gave up %d) through its connection's close: the daemon's history lost what its ports read", recorded, units, rec.Dropped())
	}
}

// rawRecord is a stream as Setup makes it on a server of the nats-server library
// with the options bus.Server does not set (its limits), and the connection of
// the ports, reconnecting as bus.Connect's does.
type rawRecord struct {
	ns     *server.Server
	nc     *nats.Conn
	subj   bus.Subjects
	stream jetstream.Stream
	data   []byte
}

func startRawRecord(t *testing.T, o *server.Options) *rawRecord {
	t.Helper()
	o.DontListen, o.NoSigs, o.NoLog, o.JetStream, o.StoreDir = true, true, true, true, t.TempDir()
	ns, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(bustest.Long) {
		t.Fatal("the server is not ready")
	}
	e := &rawRecord{ns: ns, subj: bus.Subjects{Prefix: "rawrecord"},
		data: []byte(strings.Repeat("+ @ O + + + + + + + + + + + + + + + + +\n", 8<<10/41))}
	if e.nc, err = nats.Connect("", nats.InProcessServer(ns), nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.nc.Close)
	js, _ := jetstream.New(e.nc)
	ctx := context.Background()
	if _, err := history.Setup(ctx, js, history.Config{Prefix: e.subj.Prefix, MaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if e.stream, err = js.Stream(ctx, e.subj.Stream()); err != nil {
		t.Fatal(err)
	}
	return e
}

// dump is the k-th 8 KiB dump of port from origin, with its Nats-Msg-Id.
func (e *rawRecord) dump(port, origin string, k int) *nats.Msg {
	m := nats.NewMsg(e.subj.Dump("goscore", port))
	m.Data = e.data
	m.Header.Set(bus.HeaderMsgID, bus.DumpID(origin, uint64(k)))
	return m
}

// recorder is the daemon's recorder on the ports' connection, until the test ends.
func (e *rawRecord) recorder(t *testing.T) *history.Recorder {
	t.Helper()
	rec, err := history.NewRecorder(e.nc, e.subj.Prefix, bustest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	return rec
}

// held is how many dumps of port the stream holds, once its count has settled:
// what was published is stored or dropped by then.
func (e *rawRecord) held(t *testing.T, port string) uint64 {
	t.Helper()
	var n, last uint64
	bustest.Wait(t, "the stream's count settled", func() (bool, string) {
		info, err := e.stream.Info(context.Background(), jetstream.WithSubjectFilter(e.subj.Dump("goscore", port)))
		if err != nil {
			return false, err.Error()
		}
		last, n = n, info.State.Subjects[e.subj.Dump("goscore", port)]
		return n == last && n > 0, fmt.Sprintf("%d then %d", last, n)
	})
	return n
}
