package history_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
)

// The notes of the results stored, which the display writers hold their answers for,
// come from a reader that starts at the stream's end (the start window has a reader
// of its own), and go on while the bucket's actor takes nothing (a slow look-up).
// Before, one reader read the window first and stopped 4,096 results ahead of an
// actor that did not take them: on a stream of large dumps under load every answer
// was held the whole StoreWait.
func TestNotesDoNotWaitForTheBucket(t *testing.T) {
	dir, err := history.OpenStateDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true, StoreDir: dir.Path})
	nc := b.Daemon()
	js, err := history.NewJetStream(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := history.Setup(ctx, js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	publish := func(origin string, seq uint64) {
		m := nats.NewMsg(subj.Result("goscore", "hall"))
		m.Data = fmt.Appendf(nil, `{"problem":"goscore","port":"hall","origin":%q,"seq":%d,"answer":"Black 1 White 0\n"}`, origin, seq)
		m.Header.Set(bus.HeaderMsgID, bus.ResultID(origin, seq))
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	const before, after = 100, 6000
	for seq := range uint64(before) {
		publish("before", seq+1)
	}
	stream, err := js.Stream(ctx, subj.Stream())
	if err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the results from before stored", func() (bool, string) {
		info, err := stream.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs == before, fmt.Sprintf("%d of %d stored", info.State.Msgs, before)
	})

	u := history.NewUpdater(nc, js, bus.DefaultPrefix, zerolog.Nop())
	if err := u.Subscribe(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	noted := map[string]int{}
	twice := 0
	seen := map[uint64]bool{}
	u.NoteStored(func(origin string, seq uint64) {
		mu.Lock()
		defer mu.Unlock()
		noted[origin]++
		if origin == "port" {
			twice += map[bool]int{true: 1}[seen[seq]]
			seen[seq] = true
		}
	})
	// The bucket's actor does not run: its reader stops updaterQueue results ahead.
	for seq := range uint64(after) {
		publish("port", seq+1)
	}
	counts := func() (int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return noted["port"], noted["before"], twice
	}
	bustest.Wait(t, "every result noted", func() (bool, string) {
		n, old, tw := counts()
		return n == after && old == 0 && tw == 0, fmt.Sprintf("%d of %d noted, %d of the %d stored before NoteStored, %d twice", n, after, old, before, tw)
	})
	// Run stops the notes' reader when it ends.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := u.Run(done); err != nil {
		t.Fatal(err)
	}
	publish("port", after+1)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the last result stored", func() (bool, string) {
		info, err := stream.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs == before+after+1, fmt.Sprintf("%d of %d stored", info.State.Msgs, before+after+1)
	})
	if n, old, tw := counts(); n != after || old != 0 || tw != 0 {
		t.Errorf("after Run ended: %d of %d noted (want no more), %d from before, %d twice", n, after, old, tw)
	}
}
