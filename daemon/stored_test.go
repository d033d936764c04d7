package daemon_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/serialio"
)

// answers reads what the daemon writes to a pseudo-terminal's master, as it comes.
func answers(t *testing.T, pt *serialio.PTY) <-chan string {
	ch := make(chan string, 1000)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := pt.Master.Read(buf)
			if n > 0 {
				ch <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// quiet fails the test if anything is written to the port within d: a hold is seen
// only as the absence of an answer, so d is a lower bound, never an ordering.
func quiet(t *testing.T, got <-chan string, d time.Duration, why string) {
	t.Helper()
	select {
	case s := <-got:
		t.Fatalf("%s: the port got %q", why, s)
	case <-time.After(d):
	}
}

// want reads the port until it has exactly the text of text, in order.
func want(t *testing.T, got <-chan string, text string) {
	t.Helper()
	var b strings.Builder
	deadline := time.After(long)
	for b.Len() < len(text) {
		select {
		case s := <-got:
			b.WriteString(s)
		case <-deadline:
			t.Fatalf("the port got %q, want %q", b.String(), text)
		}
	}
	if b.String() != text {
		t.Fatalf("the port got %q, want %q", b.String(), text)
	}
}

// With a history storing, a display writer holds each answer until the history says
// its unit's result is stored (Stored.Note), and then writes every stored one in
// order: a run of answers whose first result is stored last comes out at once, in
// order. While the history is not storing, nothing is held.
func TestAnswersWaitForTheirStoredResult(t *testing.T) {
	_, nc := startBus(t, true)
	res := results(t, nc)
	var storing atomic.Bool
	storing.Store(true)
	stored := daemon.NewStored(storing.Load)
	pt := newPTY(t)
	d := startDaemon(t, nc, daemon.Config{
		Ports:     []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", Line: serialio.LineSettings{Baud: 115200}}},
		Stored:    stored,
		StoreWait: long, // the bound has a test of its own
	})
	waitOpened(t, pt)
	got := answers(t, pt)
	next := func() result.Record {
		t.Helper()
		select {
		case r := <-res:
			return r
		case <-time.After(long):
			t.Fatal("no result on the bus")
		}
		panic("unreachable")
	}
	send := func(from, to int) (text string) {
		t.Helper()
		var in strings.Builder
		for k := from; k <= to; k++ {
			in.WriteString(board(k))
			text += goscoreAnswer(t, board(k))
		}
		if _, err := pt.Master.WriteString(in.String()); err != nil {
			t.Fatal(err)
		}
		return text
	}

	// One unit: answered on the bus, held until its result is stored.
	text := send(1, 1)
	r := next()
	quiet(t, got, 300*time.Millisecond, "unit 1 answered on the bus, its result not stored")
	stored.Note("another origin", 1)
	quiet(t, got, 300*time.Millisecond, "unit 1's seq stored by another publisher")
	stored.Note(r.Origin, 1)
	want(t, got, text)

	// A run of five: the later four stored first are held behind the first.
	text = send(2, 6)
	for range 5 {
		next()
	}
	for seq := uint64(6); seq >= 3; seq-- {
		stored.Note(r.Origin, seq)
	}
	quiet(t, got, 300*time.Millisecond, "units 3-6 stored, unit 2 not")
	stored.Note(r.Origin, 2)
	want(t, got, text)

	// The history not storing (a full disk): nothing held.
	storing.Store(false)
	want(t, got, send(7, 8))
	d.stop(t)
}

// A result the history does not report stored holds its answer StoreWait at most:
// then it is written, and the log says so.
func TestAnswerHeldForTheHistoryAtMostStoreWait(t *testing.T) {
	_, nc := startBus(t, true)
	pt := newPTY(t)
	d := startDaemon(t, nc, daemon.Config{
		Ports:     []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", Line: serialio.LineSettings{Baud: 115200}}},
		Stored:    daemon.NewStored(nil),
		StoreWait: 500 * time.Millisecond,
	})
	waitOpened(t, pt)
	got := answers(t, pt)
	start := time.Now()
	if _, err := pt.Master.WriteString(board(1) + board(2)); err != nil {
		t.Fatal(err)
	}
	want(t, got, goscoreAnswer(t, board(1))+goscoreAnswer(t, board(2)))
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Errorf("the answers came %v after the units, before the 500 ms bound", waited)
	}
	d.logs.wait(t, 1, map[string]any{"message": "the history has not stored the unit's result in time; its answer is written anyway"})
	d.stop(t)
}

// Past the drain bound nothing waits for the history: a stop writes the outcomes
// held for results never reported stored at the bound, not a StoreWait later (a
// stop under load took the drain, then a write timeout more, in CI's load stage:
// 8.65 s with a 6 s drain). StoreWait and the write timeout here are longer than the
// test waits for the stop, so a hold past the bound fails it.
func TestStopWritesHeldAnswersAtTheDrainBound(t *testing.T) {
	_, nc := startBus(t, true)
	pt := newPTY(t)
	d := startDaemon(t, nc, daemon.Config{
		Ports:     []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", Line: serialio.LineSettings{Baud: 115200}}},
		Stored:    daemon.NewStored(nil), // storing, and never a result reported stored
		StoreWait: 10 * long,
		Drain:     500 * time.Millisecond,
		// The hold used to end only when the stop stopped waiting for the device
		// too, a write timeout after the bound: as long as the test, here.
		WriteTimeout: 10 * long,
	})
	waitOpened(t, pt)
	got := answers(t, pt)
	if _, err := pt.Master.WriteString(board(1) + board(2) + board(3)); err != nil {
		t.Fatal(err)
	}
	// Answered on the bus and held: the workers' results come, the port stays quiet.
	d.logs.wait(t, 3, map[string]any{"message": "unit answered"})
	quiet(t, got, 300*time.Millisecond, "units answered, their results never stored")
	d.stop(t)
	want(t, got, goscoreAnswer(t, board(1))+goscoreAnswer(t, board(2))+goscoreAnswer(t, board(3)))
}
