package history_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
)

// recordEnv is a stream as Setup makes a replicated one (the Repair subjects only,
// stored under the original ones, with acks), on one server under a prefix of its
// own, and a recorder for it. away and back make the stream stop and start taking
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
	if err := e.r.Subscribe(); err != nil {
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

// publish publishes units from..to of origin as a daemon and a worker do: a dump
// and its result, each with its id.
func (e *recordEnv) publish(t *testing.T, origin string, from, to int) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		s := strconv.Itoa(seq)
		dump := &nats.Msg{Subject: e.subj.Dump("goscore", "lobby"), Data: []byte("unit " + s),
			Header: nats.Header{bus.HeaderSeq: {s}, bus.HeaderOrigin: {origin}, bus.HeaderMsgID: {bus.DumpID(origin, uint64(seq))}}}
		res := &nats.Msg{Subject: e.subj.Result("goscore", "lobby"), Data: []byte(`{"seq":` + s + `}`),
			Header: nats.Header{bus.HeaderMsgID: {bus.ResultID(origin, uint64(seq))}}}
		for _, m := range []*nats.Msg{dump, res} {
			if err := e.nc.PublishMsg(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
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
// message the bus carried twice (a worker answering a unit again) is stored once.
// No subscriber of the bus sees the recorder's copies.
func TestRecorderStoresEverythingThroughLeaderlessSpells(t *testing.T) {
	e := startRecord(t, "recordtest")
	var dumpsSeen, resultsSeen atomic.Int64
	for s, n := range map[string]*atomic.Int64{e.subj.Prefix + ".dump.>": &dumpsSeen, e.subj.AllResults(): &resultsSeen} {
		if _, err := e.nc.Subscribe(s, func(*nats.Msg) { n.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}

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
	// Every message the bus carried reached its subscribers once: the copies go
	// to the Repair subjects, which nobody else takes.
	if want := int64(units + 2); dumpsSeen.Load() != want || resultsSeen.Load() != want {
		t.Errorf("subscribers saw %d dumps and %d results, want %d and %d", dumpsSeen.Load(), resultsSeen.Load(), want, want)
	}
}

// A dump by hand (no Nats-Msg-Id) is recorded too, once.
func TestRecorderStoresADumpByHand(t *testing.T) {
	e := startRecord(t, "recordhand")
	if err := e.nc.Publish(e.subj.Dump("goscore", "desk"), []byte("by hand")); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the dump by hand stored", func() (bool, string) {
		_, total := e.held(t)
		return total == 1, fmt.Sprintf("%d messages held", total)
	})
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
	if err := e.nc.PublishMsg(big); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "o", 1, 20)
	e.want(t, "o", 1, 20)
	bustest.Wait(t, "the large dump given up", func() (bool, string) {
		return e.r.Dropped() == 1 && e.r.Held() == 0, fmt.Sprintf("dropped %d, held %d, resent %d", e.r.Dropped(), e.r.Held(), e.r.Resent())
	})
	if got := e.r.Resent(); got != 0 {
		t.Errorf("the recorder sent %d publishes again; a refusal for good is not sent again", got)
	}
}
