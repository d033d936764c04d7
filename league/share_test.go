package league_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/prune"
	"github.com/nats-io/nats.go/jetstream"
)

// TestLeagueClubStreamBlocks: a club's stream at the hub, with the default 1 GiB
// share, is stored in blocks of at most 4 MiB, as the files on disk show. With its
// share as the server's max_bytes it had 8 MiB blocks, and each club written to
// held a cache of 8 MiB (BENCHMARKS.md, "Memory budget"): 6 MiB of units were one
// block file, not two.
func TestLeagueClubStreamBlocks(t *testing.T) {
	store := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: store,
		Clubs: []league.Club{{Name: "north", Token: "tn"}}}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	pad := strings.Repeat("x", 16<<10)
	const n = 6 << 20 / (16 << 10)
	for i := 1; i <= n; i++ {
		if err := north.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d %s", i, pad)); err != nil {
			t.Fatal(err)
		}
	}
	if err := north.Flush(); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "north's units at the hub", func() (bool, string) {
		last, bytes, msgs := lastUnit(t, h.Conn(), "north")
		return msgs == n, fmt.Sprintf("%d of %d units (%d bytes), the last %.12q", msgs, n, bytes, last)
	})
	blocks := bustest.BlockFiles(t, store, league.ClubStream("north"))
	if len(blocks) < 2 || blocks[0] > bustest.BlockMax {
		t.Fatalf("%s's %d units of 16 KiB are in %d block files of %v bytes: want blocks of at most 4 MiB", league.ClubStream("north"), n, len(blocks), blocks)
	}
	t.Logf("%d units of 16 KiB in %d block files: %v bytes", n, len(blocks), blocks)
}

// TestLeagueClubStreamFromAnOlderHub: a club's stream as an older hub made it (its
// share the server's max_bytes) is given to the keeper when the hub starts on it:
// no max_bytes, the share in its metadata, and every unit kept.
func TestLeagueClubStreamFromAnOlderHub(t *testing.T) {
	store := t.TempDir()
	opts := league.Options{Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: store,
		Clubs: []league.Club{{Name: "north", Token: "tn", MaxBytes: "64MiB"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := league.Start(ctx, opts, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	const n = 50
	for i := 1; i <= n; i++ {
		if err := north.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	bustest.Wait(t, "north's units at the hub", func() (bool, string) {
		_, bytes, msgs := lastUnit(t, h.Conn(), "north")
		return msgs == n, fmt.Sprintf("%d of %d units (%d bytes)", msgs, n, bytes)
	})
	js, _ := jetstream.New(h.Conn())
	s, err := js.Stream(ctx, league.ClubStream("north"))
	if err != nil {
		t.Fatal(err)
	}
	old := s.CachedInfo().Config
	old.MaxBytes, old.MaxMsgsPerSubject, old.Metadata = 64<<20, -1, nil
	if _, err := js.UpdateStream(ctx, old); err != nil {
		t.Fatalf("the stream made as an older hub's: %v", err)
	}
	h.Shutdown()

	h, err = league.Start(ctx, opts, testLog(t))
	if err != nil {
		t.Fatalf("the hub on an older hub's stream: %v", err)
	}
	defer h.Shutdown()
	js, _ = jetstream.New(h.Conn())
	if s, err = js.Stream(ctx, league.ClubStream("north")); err != nil {
		t.Fatal(err)
	}
	cfg, st := s.CachedInfo().Config, s.CachedInfo().State
	if cfg.MaxBytes > 0 || prune.MaxBytes(cfg) != 64<<20 || st.Msgs != n {
		t.Fatalf("after the start: max_bytes %d, the keeper's share %d, %d units; want none, 67108864, %d", cfg.MaxBytes, prune.MaxBytes(cfg), st.Msgs, n)
	}
}
