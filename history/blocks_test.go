package history_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/prune"
)

// TestHistoryBlocks: the history, at its default 1 GiB, is stored in blocks of at
// most 4 MiB, as its files on disk show, its max_bytes the daemon's keeper's. With
// the server's max_bytes its blocks were 8 MiB, and a Pi's `run` held the last
// one's 8 MiB cache and loaded 8 MiB blocks to purge (RELIABILITY.md, "Long runs"):
// 6 MiB of units were one block file, not two.
func TestHistoryBlocks(t *testing.T) {
	store := t.TempDir()
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true, StoreDir: store})
	js, err := history.NewJetStream(b.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	if _, err := history.Setup(ctx, js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: history.DefaultMaxBytes}); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, subj.Stream())
	if err != nil {
		t.Fatal(err)
	}
	if c := s.CachedInfo().Config; c.MaxBytes > 0 || prune.MaxBytes(c) != history.DefaultMaxBytes {
		t.Fatalf("the history's max_bytes %d, the keeper's %d; want none, %d", c.MaxBytes, prune.MaxBytes(c), history.DefaultMaxBytes)
	}
	pad := []byte(strings.Repeat("x", 16<<10))
	const n = 6 << 20 / (16 << 10)
	for i := range n {
		if _, err := js.Publish(ctx, subj.Repair(bus.DefaultPrefix+".dump.goscore.t1"), pad); err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
	}
	blocks := bustest.BlockFiles(t, store, subj.Stream())
	if len(blocks) < 2 || blocks[0] > bustest.BlockMax {
		t.Fatalf("%s's %d units of 16 KiB are in %d block files of %v bytes: want blocks of at most 4 MiB", subj.Stream(), n, len(blocks), blocks)
	}
	t.Logf("%d units of 16 KiB in %d block files: %v bytes", n, len(blocks), blocks)
}
