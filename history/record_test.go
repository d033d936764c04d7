package history_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
)

// recordEnv is a stream as Setup makes it (the Repair subjects only, stored under
// the original ones, with acks), on one server under a prefix of its own, and a
// recorder for it. away and back make the stream stop and start taking
// the Repair subjects: to a publisher that is what a stream without a leader is
// (no responder), and back is the election.
type recordEnv struct {
	nc     *nats.Conn
	subj   bus.Subjects
	stream jetstream.Stream
	r      *history.Recorder
	cfg    jetstream.StreamConfig
	js     jetstream.JetStream
	stop   func() error
}

func startRecord(t *testing.T, prefix string) *recordEnv {
	t.Helper()
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true, StoreDir: t.TempDir()})
	e := &recordEnv{nc: b.Daemon(), subj: bus.Subjects{Prefix: prefix}}
	var err error
	if e.js, err = jetstream.New(e.nc); err != nil {
		t.Fatal(err)
	}
	e.cfg = jetstream.StreamConfig{
		Name:             e.subj.Stream(),
		Subjects:         []string{e.subj.AllRepairs()},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: e.subj.AllRepairs(), Destination: prefix + ".>"},
		Duplicates:       history.RecordDuplicates,
	}
	if e.stream, err = e.js.CreateStream(context.Background(), e.cfg); err != nil {
		t.Fatal(err)
	}
	if e.r, err = history.NewRecorder(e.nc, prefix, bustest.Logger(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.r.Run(ctx, func() time.Time { return time.Now().Add(3 * time.Second) }) }()
	var stopped bool
	e.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() {
		if err := e.stop(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// subjects sets what the stream takes.
func (e *recordEnv) subjects(t *testing.T, s ...string) {
	t.Helper()
	cfg := e.cfg
	cfg.Subjects = s
	if len(s) == 0 || s[0] != e.subj.AllRepairs() {
		cfg.SubjectTransform = nil
	}
	if _, err := e.js.UpdateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}
func (e *recordEnv) away(t *testing.T) { e.subjects(t, e.subj.Prefix+".elsewhere") }
func (e *recordEnv) back(t *testing.T) { e.subjects(t, e.subj.AllRepairs()) }

// publish hands the recorder units from..to of origin as a daemon's port does: a
// dump and the result it took, each with its id.
func (e *recordEnv) publish(t *testing.T, origin string, from, to int) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		s := strconv.Itoa(seq)
		dump := &nats.Msg{Subject: e.subj.Dump("goscore", "lobby"), Data: []byte("unit " + s),
			Header: nats.Header{bus.HeaderSeq: {s}, bus.HeaderOrigin: {origin}, bus.HeaderMsgID: {bus.DumpID(origin, uint64(seq))}}}
		res := &nats.Msg{Subject: e.subj.Result("goscore", "lobby"), Data: []byte(`{"seq":` + s + `}`),
			Header: nats.Header{bus.HeaderMsgID: {bus.ResultID(origin, uint64(seq))}}}
		e.r.Record(dump)
		e.r.Record(res)
	}
}

// held counts what the stream holds by id, and fails on a message under a subject
// other than the original ones, or a dump without its headers.
func (e *recordEnv) held(t *testing.T) (ids map[string]int, total int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := e.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids = map[string]int{}
	if info.State.Msgs == 0 {
		return ids, 0
	}
	c, err := e.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for range info.State.Msgs {
		m, err := c.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("read the stream's %d messages: %v", info.State.Msgs, err)
		}
		id := m.Headers().Get(bus.HeaderMsgID)
		switch m.Subject() {
		case e.subj.Dump("goscore", "lobby"):
			if want := "unit " + m.Headers().Get(bus.HeaderSeq); string(m.Data()) != want || m.Headers().Get(bus.HeaderOrigin) == "" {
				t.Errorf("dump %s: %q, headers %v; want %q with its headers", id, m.Data(), m.Headers(), want)
			}
		case e.subj.Result("goscore", "lobby"), e.subj.Dump("goscore", "desk"):
		default:
			t.Errorf("the stream holds %q on %s", m.Data(), m.Subject())
		}
		ids[id]++
		total++
	}
	return ids, total
}

// want checks that the stream holds every unit of origin from..to once, dump and
// result, waiting for the recorder.
func (e *recordEnv) want(t *testing.T, origin string, from, to int) {
	t.Helper()
	bustest.Wait(t, "the stream holds every unit", func() (bool, string) {
		ids, total := e.held(t)
		missing := 0
		for seq := from; seq <= to; seq++ {
			for _, id := range []string{bus.DumpID(origin, uint64(seq)), bus.ResultID(origin, uint64(seq))} {
				if n := ids[id]; n > 1 {
					t.Fatalf("%s stored %d times", id, n)
				} else if n == 0 {
					missing++
				}
			}
		}
		return missing == 0, fmt.Sprintf("%d messages held, %d of units %d-%d missing; recorder: %d stored, %d resent, %d waiting, %d dropped",
			total, missing, from, to, e.r.Stored(), e.r.Resent(), e.r.Waiting(), e.r.Dropped())
	})
}

// A stream that does not take the recorder's publishes (no leader) for a while,
// twice, gets every dump and result once it does, each once, under its own subject
// with its headers: the recorder keeps what got no ack and sends it again, and a
// message handed twice is stored once. No subscriber of the dumps and results sees
// the recorder's copies; each result acked is noted (NoteStored), once.
func TestRecorderStoresEverythingThroughLeaderlessSpells(t *testing.T) {
	e := startRecord(t, "recordtest")
	var dumpsSeen, resultsSeen atomic.Int64
	for s, n := range map[string]*atomic.Int64{e.subj.Prefix + ".dump.>": &dumpsSeen, e.subj.AllResults(): &resultsSeen} {
		if _, err := e.nc.Subscribe(s, func(*nats.Msg) { n.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}

	var noted sync.Map
	var notes atomic.Int64
	e.r.NoteStored(func(origin string, seq uint64) {
		notes.Add(1)
		noted.Store(origin+"."+strconv.FormatUint(seq, 10), true)
	})

	const units = 50
	e.publish(t, "o", 1, 10)
	e.want(t, "o", 1, 10)

	for spell := range 2 {
		e.away(t)
		from := 11 + spell*20
		e.publish(t, "o", from, from+19)
		bustest.Wait(t, "the recorder refused by the stream", func() (bool, string) {
			return e.r.Resent() > 0 && e.r.Waiting() == 0, fmt.Sprintf("resent %d, waiting %d", e.r.Resent(), e.r.Waiting())
		})
		if _, total := e.held(t); total != 20+spell*40 {
			t.Fatalf("spell %d: the stream holds %d messages while it takes none, want %d", spell, total, 20+spell*40)
		}
		resent := e.r.Resent()
		e.back(t)
		e.want(t, "o", 1, from+19)
		t.Logf("spell %d: the recorder sent %d publishes again; the stream holds every unit once", spell, resent)
	}
	// A unit published again, and answered again, is stored once.
	e.publish(t, "o", units, units)
	e.publish(t, "o", units, units)
	e.want(t, "o", 1, units)
	bustest.Wait(t, "the recorder's last acks", func() (bool, string) {
		return e.r.Stored() >= 2*units+2 && e.r.Waiting() == 0, fmt.Sprintf("stored %d, waiting %d", e.r.Stored(), e.r.Waiting())
	})
	if _, total := e.held(t); total != 2*units {
		t.Errorf("the stream holds %d messages, want %d", total, 2*units)
	}
	if e.r.Dropped() != 0 {
		t.Errorf("the recorder dropped %d messages", e.r.Dropped())
	}
	// The copies go to the Repair subjects, which no worker or watcher takes.
	if dumpsSeen.Load() != 0 || resultsSeen.Load() != 0 {
		t.Errorf("subscribers saw %d dumps and %d results, want none", dumpsSeen.Load(), resultsSeen.Load())
	}
	// Each result acked is noted, a duplicate too (the stream acks it).
	for seq := 1; seq <= units; seq++ {
		if _, ok := noted.Load("o." + strconv.Itoa(seq)); !ok {
			t.Errorf("the result of unit %d was stored and never noted", seq)
		}
	}
	if n := notes.Load(); n != units+2 {
		t.Errorf("%d notes, want %d: one for each result acked (unit %d twice more), none for a dump", n, units+2, units)
	}
}

// A dump a client publishes on the bus (by hand, or a tool's with a port's origin
// and its id) is not recorded: the stream holds only what the ports hand over.
func TestRecorderTakesNothingOffTheBus(t *testing.T) {
	e := startRecord(t, "recordhand")
	if err := e.nc.Publish(e.subj.Dump("goscore", "desk"), []byte("by hand")); err != nil {
		t.Fatal(err)
	}
	forged := &nats.Msg{Subject: e.subj.Dump("goscore", "lobby"), Data: []byte("unit 1"),
		Header: nats.Header{bus.HeaderSeq: {"1"}, bus.HeaderOrigin: {"o"}, bus.HeaderMsgID: {bus.ResultID("o", 1)}}}
	if err := e.nc.PublishMsg(forged); err != nil {
		t.Fatal(err)
	}
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "o", 1, 1)
	e.want(t, "o", 1, 1)
	if _, total := e.held(t); total != 2 {
		t.Errorf("the stream holds %d messages, want the port's unit and its result only", total)
	}
}

// A stop while the stream takes nothing ends within its deadline, and counts what
// it could not store.
func TestRecorderStopCountsWhatItCouldNotStore(t *testing.T) {
	e := startRecord(t, "recordstop")
	e.away(t)
	e.publish(t, "o", 1, 5)
	bustest.Wait(t, "the recorder refused by the stream", func() (bool, string) {
		return e.r.Resent() > 0, fmt.Sprintf("resent %d", e.r.Resent())
	})
	begin := time.Now()
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 3*time.Second+recordStopSlack {
		t.Errorf("the stop took %v, want its 3 s deadline", took)
	}
	if got := e.r.Dropped(); got != 10 {
		t.Errorf("dropped %d, want the 10 messages the stream never took", got)
	}
}

// recordStopSlack is what a stop may take beyond its deadline: the acker's last
// publishes time out within recordAckWait, not waited for.
const recordStopSlack = 2 * time.Second

// A message the stream refuses for what it is (larger than its MaxMsgSize) is given
// up and counted at once: sent again and again, it would hold every other message
// back behind the back-off.
func TestRecorderGivesUpWhatTheStreamRefusesForGood(t *testing.T) {
	e := startRecord(t, "recordbig")
	cfg := e.cfg
	cfg.MaxMsgSize = 1024
	if _, err := e.js.UpdateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	big := &nats.Msg{Subject: e.subj.Dump("goscore", "lobby"), Data: make([]byte, 2048),
		Header: nats.Header{bus.HeaderSeq: {"1"}, bus.HeaderOrigin: {"big"}, bus.HeaderMsgID: {bus.DumpID("big", 1)}}}
	e.r.Record(big)
	e.publish(t, "o", 1, 20)
	e.want(t, "o", 1, 20)
	bustest.Wait(t, "the large dump given up", func() (bool, string) {
		return e.r.Dropped() == 1 && e.r.Held() == 0, fmt.Sprintf("dropped %d, held %d, resent %d", e.r.Dropped(), e.r.Held(), e.r.Resent())
	})
	if got := e.r.Resent(); got != 0 {
		t.Errorf("the recorder sent %d publishes again; a refusal for good is not sent again", got)
	}
}
