package history_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
)

// tailEnv is a stream of the history written by hand, as ports, workers and a
// restarted daemon would have it: no worker runs, so the test chooses when each
// result comes, or whether.
type tailEnv struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	tool jetstream.JetStream // through the listener, with a tool's read-only rights
	srv  *bustest.Bus
	subj bus.Subjects
}

func startTail(t *testing.T) *tailEnv {
	t.Helper()
	b := bustest.Start(t, bustest.Options{JetStream: true})
	e := &tailEnv{nc: b.Daemon(), srv: b, subj: bus.Subjects{Prefix: bus.DefaultPrefix}}
	var err error
	if e.js, err = history.NewJetStream(e.nc); err != nil {
		t.Fatal(err)
	}
	if e.tool, err = history.NewJetStream(b.Tool()); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Setup(context.Background(), e.js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	return e
}

// problemOf is each port's problem: the filters by problem select some ports.
func problemOf(port string) string {
	if port == "desk" {
		return "othello"
	}
	return "goscore"
}

func (e *tailEnv) dump(t *testing.T, port, origin string, seq uint64) {
	t.Helper()
	// On its Repair subject, as the daemon's recorder stores a port's.
	m := nats.NewMsg(e.subj.Repair(e.subj.Dump(problemOf(port), port)))
	m.Data = []byte(fmt.Sprintf("unit %s %s %d\n", port, origin, seq))
	bus.DumpHeader{Port: port, Seq: seq, Line: int64(seq), Origin: origin}.Put(m.Header)
	if err := e.nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
}

// result publishes unit seq's result; a late second one (again) has no id, so
// that the stream keeps it as a worker's late answer beyond its window would be.
func (e *tailEnv) result(t *testing.T, port, origin string, seq uint64, again bool) {
	t.Helper()
	m := nats.NewMsg(e.subj.Repair(e.subj.Result(problemOf(port), port)))
	m.Data = []byte(`{"problem":"` + problemOf(port) + `","port":"` + port + `","seq":` + strconv.FormatUint(seq, 10) +
		`,"origin":"` + origin + `","answer":"` + strconv.FormatBool(again) + "\\n" + `"}`)
	if !again && seq > 0 {
		m.Header.Set(bus.HeaderMsgID, bus.ResultID(origin, seq))
	}
	if err := e.nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
}

func (e *tailEnv) stored(t *testing.T) {
	t.Helper()
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !e.srv.WaitStored(ctx) {
		t.Fatal("not stored within 30s")
	}
}

// fill writes n units over three ports, from run (a daemon's run: each port's
// display is an origin of its own), with every
// kind of history: results at once and late (behind up to 150 messages of other
// units), none (read, unanswered), two, a result without its dump (an oversize
// unit), and units by hand (no number).
func (e *tailEnv) fill(t *testing.T, r *rand.Rand, run string, n int) {
	t.Helper()
	ports := []string{"hall", "hall", "hall", "lab", "desk"}
	seqs := map[string]uint64{}
	type late struct {
		at         int
		port       string
		seq        uint64
		again      bool
		withoutOne bool
	}
	var lates []late
	for i := range n {
		for j := 0; j < len(lates); j++ {
			if l := lates[j]; l.at <= i {
				e.result(t, l.port, run+"-"+l.port, l.seq, l.again)
				lates = append(lates[:j], lates[j+1:]...)
				j--
			}
		}
		port := ports[r.IntN(len(ports))]
		seqs[port]++
		seq, origin := seqs[port], run+"-"+port
		switch k := r.IntN(20); {
		case k == 0: // by hand
			e.dump(t, port, "", 0)
			e.result(t, port, "", 0, false)
		case k == 1: // too large to keep: its error result only
			e.result(t, port, origin, seq, false)
		case k == 2: // never answered
			e.dump(t, port, origin, seq)
		case k == 3: // answered twice, the second late
			e.dump(t, port, origin, seq)
			e.result(t, port, origin, seq, false)
			lates = append(lates, late{at: i + 1 + r.IntN(30), port: port, seq: seq, again: true})
		case k < 8: // answered late
			e.dump(t, port, origin, seq)
			lates = append(lates, late{at: i + 1 + r.IntN(75), port: port, seq: seq})
		default:
			e.dump(t, port, origin, seq)
			e.result(t, port, origin, seq, false)
		}
	}
	for _, l := range lates {
		e.result(t, l.port, run+"-"+l.port, l.seq, l.again)
	}
	e.stored(t)
}

// entryText is everything of an entry that anything prints.
func entryText(es []*history.Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s unitseq=%d %s\n", e.JSON(nil), e.UnitSeq, e.Line())
	}
	return b.String()
}

func readWith(t *testing.T, js jetstream.JetStream, read func(context.Context, jetstream.JetStream, string, history.Query, func(*history.Entry) error) error, q history.Query) []*history.Entry {
	t.Helper()
	var got []*history.Entry
	if err := read(context.Background(), js, bus.DefaultPrefix, q, func(en *history.Entry) error {
		got = append(got, en)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// The last N units read from the tail (with a tool's rights) are the last N of
// the whole history, byte for byte, by port, by problem and from a time: with
// results that come late,
// twice or never, results whose dump was not kept, units by hand, and a daemon
// restarted (its ports number their units from 1 again).
func TestTailIsTheWholeReadsEnd(t *testing.T) {
	e := startTail(t)
	r := rand.New(rand.NewPCG(33, 1))
	e.fill(t, r, "run1", 400)
	mid := time.Now()
	e.fill(t, r, "run2", 400)
	until := time.Now()
	// A port that sent its last units long before the end: its tail is far back.
	e.dump(t, "old", "run0", 1)
	e.result(t, "old", "run0", 1, false)
	e.fill(t, r, "run3", 300)
	n := 0
	for _, port := range []string{"", "hall", "lab", "desk", "old", "none"} {
		for _, last := range []int{1, 20, 50, 5000} {
			for _, q := range []history.Query{
				{Port: port, Last: last},
				{Port: port, Last: last, Since: mid},
				{Problem: "othello", Port: port, Last: last},
				{Port: port, Last: last, Until: until},
				{Port: port, Last: last, Since: mid, Until: until},
			} {
				want := entryText(readWith(t, e.js, history.ReadWhole, q))
				got := entryText(readWith(t, e.tool, history.Read, q))
				if got != want {
					t.Fatalf("%+v: the tail read differs from the whole read's end:\n got %s\nwant %s", q, got, want)
				}
				n += strings.Count(want, "\n")
			}
		}
	}
	if n < 2000 {
		t.Errorf("compared %d entries in all: the stream lacks units", n)
	}
}

// watch --last N: the tail's last N results, then the live ones, none twice and
// none missed, as the whole read gives them.
func TestTailFollow(t *testing.T) {
	e := startTail(t)
	r := rand.New(rand.NewPCG(33, 2))
	e.fill(t, r, "run1", 300)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	follow := func(read func(context.Context, jetstream.JetStream, string, history.Query, func(*history.Entry) error) error) (chan *history.Entry, chan error) {
		got, done := make(chan *history.Entry, 64), make(chan error, 1)
		go func() {
			done <- read(ctx, e.js, bus.DefaultPrefix, history.Query{Port: "hall", Last: 10, Follow: true}, func(en *history.Entry) error {
				got <- en
				return nil
			})
		}()
		return got, done
	}
	next := func(name string, got chan *history.Entry, done chan error, n int) []*history.Entry {
		var es []*history.Entry
		for len(es) < n {
			select {
			case en := <-got:
				es = append(es, en)
			case err := <-done:
				t.Fatalf("%s: Read ended after %d entries of %d: %v", name, len(es), n, err)
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: %d entries after 30s, want %d", name, len(es), n)
			}
		}
		return es
	}
	tailGot, tailDone := follow(history.Read)
	wholeGot, wholeDone := follow(history.ReadWhole)
	tailEs, wholeEs := next("tail", tailGot, tailDone, 10), next("whole", wholeGot, wholeDone, 10)
	// Live: a result first (its unit too large to keep: right after the tail), a
	// unit answered, a unit of the tail answered again, another answered.
	e.result(t, "hall", "run1-hall", 999, false)
	e.dump(t, "hall", "run1-hall", 1000)
	e.result(t, "hall", "run1-hall", 1000, false)
	var answered uint64
	for _, en := range tailEs {
		if en.Seq > 0 {
			answered = en.Seq
		}
	}
	e.result(t, "hall", "run1-hall", answered, true)
	e.dump(t, "hall", "run1-hall", 1001)
	e.result(t, "hall", "run1-hall", 1001, false)
	e.stored(t)
	tailEs, wholeEs = append(tailEs, next("tail", tailGot, tailDone, 3)...), append(wholeEs, next("whole", wholeGot, wholeDone, 3)...)
	if got, want := entryText(tailEs), entryText(wholeEs); got != want {
		t.Fatalf("followed from the tail:\n%s\nfrom the whole history:\n%s", got, want)
	}
	if tailEs[10].Seq != 999 || tailEs[11].Seq != 1000 || tailEs[12].Seq != 1001 {
		t.Errorf("live after the tail: #%d, #%d, #%d, want #999, #1000, #1001", tailEs[10].Seq, tailEs[11].Seq, tailEs[12].Seq)
	}
	cancel()
	for _, done := range []chan error{tailDone, wholeDone} {
		if err := <-done; err != nil {
			t.Errorf("Read after cancel: %v", err)
		}
	}
	// A reader that has enough within the tail (watch --last 10 --count 3) ends
	// there, with no error.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := history.Read(ctx, e.js, bus.DefaultPrefix, history.Query{Port: "hall", Last: 10, Follow: true}, func(*history.Entry) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if err != nil || n != 10 {
		t.Errorf("cancelled at the tail's third entry: %v, after %d entries (the tail's 10 are handed on)", err, n)
	}
}
