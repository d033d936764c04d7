package prune_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/prune"
)

// share is a stream's max_bytes in these tests: the smallest nats-server gives its
// 8 MiB blocks (max_bytes/4 of 8 MiB or more), as a hub's and a club's 1 GiB does.
const share = 33 << 20

// unit is a stored unit's size here: larger than a board's, for fewer publishes.
const unit = 16 << 10

func stream(name string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: name, Subjects: []string{strings.ToLower(name) + ".>"},
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld,
		MaxBytes: share, Storage: jetstream.FileStorage,
	}
}

// startJS starts an embedded server with JetStream for the test, and gives a
// context that ends with it, bounded by bustest.Long.
func startJS(t *testing.T) (context.Context, jetstream.JetStream) {
	t.Helper()
	b := bustest.Start(t, bustest.Options{JetStream: true})
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	t.Cleanup(cancel)
	js, err := jetstream.New(b.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	return ctx, js
}

// TestKeeperDropsBeforeTheLimit fills a kept stream and a stream left to the
// server's limit three times over, looking after every mebibyte: each unit the
// kept stream lost, the keeper dropped (the server's limit never took one), and it
// holds from Low to High; the other lost its units to the server.
//
// SHARED is kept as KEPT, its share the keeper's alone (prune.WithShare: no
// max_bytes of the server's, so 4 MiB blocks): the same units are dropped, by the
// keeper only, and it is held as KEPT is.
func TestKeeperDropsBeforeTheLimit(t *testing.T) {
	ctx, js := startJS(t)
	for _, name := range []string{"KEPT", "LEFT", "OTHER", "SHARED"} {
		cfg := stream(name)
		if name == "SHARED" {
			cfg = prune.WithShare(cfg, cfg.MaxBytes)
		}
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	k := prune.New(js, func(s string) bool { return s == "KEPT" || s == "SHARED" }, bustest.Logger(t))
	data := make([]byte, unit)
	const perLook = (1 << 20) / unit
	published := 0
	for published < 3*share/unit {
		for range perLook {
			for _, s := range []string{"kept", "left", "other", "shared"} {
				if _, err := js.Publish(ctx, s+".u", data); err != nil {
					t.Fatalf("publish %d on %s: %v", published, s, err)
				}
			}
			published++
		}
		if err := k.Look(ctx); err != nil {
			t.Fatalf("look after %d units: %v", published, err)
		}
	}
	state := func(name string) jetstream.StreamState {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return s.CachedInfo().State
	}
	kept, left, shared := state("KEPT"), state("LEFT"), state("SHARED")
	counts := fmt.Sprintf("published %d a stream; kept: %d units, %d bytes, first %d; shared: %d units, first %d; the keeper dropped %d in %d purges; left: %d units, first %d",
		published, kept.Msgs, kept.Bytes, kept.FirstSeq, shared.Msgs, shared.FirstSeq, k.Dropped(), k.Purges(), left.Msgs, left.FirstSeq)
	t.Log(counts)
	if shared.Msgs != kept.Msgs || shared.FirstSeq != kept.FirstSeq {
		t.Fatalf("the stream whose share the keeper alone holds was not kept as the other: %s", counts)
	}
	if k.Purges() < 4 || kept.Msgs+shared.Msgs+k.Dropped() != uint64(2*published) || kept.FirstSeq+shared.FirstSeq != k.Dropped()+2 {
		t.Fatalf("the kept stream lost units the keeper did not drop: %s", counts)
	}
	if kept.Bytes > uint64(prune.High(share)) || kept.Bytes < uint64(prune.Low(share))-(1<<20) {
		t.Fatalf("the kept stream holds %d bytes, want %d-%d: %s", kept.Bytes, prune.Low(share)-(1<<20), prune.High(share), counts)
	}
	if left.FirstSeq == 1 || left.Bytes > share {
		t.Fatalf("the stream left to the server's limit: %s", counts)
	}
	if other := state("OTHER"); other.Msgs != left.Msgs || other.FirstSeq != left.FirstSeq {
		t.Fatalf("the keeper pruned a stream it does not own: %+v, the same one left alone %+v", other, left)
	}
}

// TestKeeperLeavesOthers: a stream the server does not trim unit by unit (in
// memory, discarding the new, or without max_bytes, all without a max_age) is not
// the keeper's, even when it owns its name.
func TestKeeperLeavesOthers(t *testing.T) {
	ctx, js := startJS(t)
	const small = 1 << 20
	mem, nw, none := stream("MEM"), stream("NEW"), stream("NONE")
	mem.Storage, mem.MaxBytes = jetstream.MemoryStorage, small
	nw.Discard, nw.MaxBytes = jetstream.DiscardNew, small
	none.MaxBytes = -1
	for _, c := range []jetstream.StreamConfig{mem, nw, none} {
		if _, err := js.CreateStream(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	data := make([]byte, unit)
	for i := range small/unit - 2 {
		for _, s := range []string{"mem", "new", "none"} {
			if _, err := js.Publish(ctx, s+".u", data); err != nil {
				t.Fatalf("publish %d on %s: %v", i, s, err)
			}
		}
	}
	k := prune.New(js, func(string) bool { return true }, bustest.Logger(t))
	if err := k.Look(ctx); err != nil {
		t.Fatal(err)
	}
	if k.Purges() != 0 {
		t.Fatalf("the keeper purged %d times (%d units) streams the server does not trim unit by unit", k.Purges(), k.Dropped())
	}
}

// TestKeeperRunStops: Run looks at once and on its tick, and ends with its context.
func TestKeeperRunStops(t *testing.T) {
	ctx, js := startJS(t)
	c := stream("RUN")
	c.MaxBytes = 1 << 20
	if _, err := js.CreateStream(ctx, c); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, unit)
	for i := range 62 { // past High (15/16 MiB), short of the limit (64 units)
		if _, err := js.Publish(ctx, "run.u", data); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	k := prune.New(js, func(string) bool { return true }, bustest.Logger(t))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { k.Run(runCtx, time.Millisecond); close(done) }()
	bustest.Wait(t, "the running keeper to prune", func() (bool, string) {
		return k.Purges() > 0, fmt.Sprintf("%d purges", k.Purges())
	})
	stop()
	select {
	case <-done:
	case <-time.After(bustest.Long):
		t.Fatal("Run did not end with its context")
	}
}

func TestKeepFrom(t *testing.T) {
	for _, c := range []struct{ first, last, bytes, low, want uint64 }{
		{1, 100, 1000, 1000, 1},  // at low: nothing
		{1, 100, 1000, 2000, 1},  // below low
		{1, 100, 1000, 900, 11},  // a tenth of 100 sequences
		{1, 100, 1000, 0, 100},   // everything but the last
		{51, 150, 1000, 875, 64}, // an eighth of 100, rounded up: 12.5 -> 13
		{5, 4, 1000, 10, 5},      // an empty span
		{1, 1 << 40, 1 << 40, 1 << 39, 1<<39 + 1},
	} {
		if got := prune.KeepFrom(c.first, c.last, c.bytes, c.low); got != c.want {
			t.Errorf("KeepFrom(%d, %d, %d, %d) = %d, want %d", c.first, c.last, c.bytes, c.low, got, c.want)
		}
	}
}

// TestKeeperDropsBeforeTheAge: of a stream with a max_age of 40 s, ten units
// stored first and ten 5 s later, the keeper drops the first ten once they are
// older than OldAge (37.5 s), before the server would expire them (40 s), and
// keeps the later ten (younger than YoungAge, 35 s, by 2.5 s).
func TestKeeperDropsBeforeTheAge(t *testing.T) {
	t.Parallel()
	ctx, js := startJS(t)
	const maxAge = 40 * time.Second
	c := stream("AGED")
	c.MaxBytes, c.MaxAge = -1, maxAge
	if _, err := js.CreateStream(ctx, c); err != nil {
		t.Fatal(err)
	}
	publish := func(what string) time.Time {
		for i := range 10 {
			if _, err := js.Publish(ctx, "aged.u", []byte(what)); err != nil {
				t.Fatalf("publish %s %d: %v", what, i, err)
			}
		}
		return time.Now()
	}
	first := time.Now()
	publish("first")
	time.Sleep(time.Until(first.Add(5 * time.Second))) // the later ten 5 s younger: time is what this test is about
	publish("later")
	k := prune.New(js, func(string) bool { return true }, bustest.Logger(t))
	looks := 0
	bustest.Wait(t, "the keeper to drop the first ten", func() (bool, string) {
		looks++
		if err := k.Look(ctx); err != nil {
			t.Fatalf("look %d: %v", looks, err)
		}
		return k.Purges() > 0, fmt.Sprintf("%d looks over %v, %d purges", looks, time.Since(first).Round(time.Millisecond), k.Purges())
	})
	s, err := js.Stream(ctx, "AGED")
	if err != nil {
		t.Fatal(err)
	}
	st := s.CachedInfo().State
	if since := time.Since(first); since < prune.OldAge(maxAge) || k.Dropped() != 10 || st.Msgs != 10 || st.FirstSeq != 11 {
		t.Fatalf("%v after the first unit: the keeper dropped %d units (want the first 10); the stream holds %d from %d (want 10 from 11)",
			since.Round(time.Millisecond), k.Dropped(), st.Msgs, st.FirstSeq)
	}
	m, err := s.GetMsg(ctx, st.FirstSeq)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "later" {
		t.Fatalf("the first unit kept is %q; want one of the later ten", m.Data)
	}
}

// TestKeeperPurgesMostUrgentFirst: six streams past High, each fuller than the
// one before: a look purges PurgesPerLook of them, the fullest, and the next look
// the rest.
func TestKeeperPurgesMostUrgentFirst(t *testing.T) {
	ctx, js := startJS(t)
	const small = 4 << 20 // High: 240 units of 16 KiB; the limit about 255
	data := make([]byte, unit)
	for i := range 6 {
		c := stream(fmt.Sprintf("S%d", i))
		c.MaxBytes = small
		if _, err := js.CreateStream(ctx, c); err != nil {
			t.Fatal(err)
		}
		for n := range 241 + 2*i {
			if _, err := js.Publish(ctx, fmt.Sprintf("s%d.u", i), data); err != nil {
				t.Fatalf("publish %d on S%d: %v", n, i, err)
			}
		}
	}
	k := prune.New(js, func(string) bool { return true }, bustest.Logger(t))
	firsts := func() (purged []int) {
		for i := range 6 {
			s, err := js.Stream(ctx, fmt.Sprintf("S%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if s.CachedInfo().State.FirstSeq > 1 {
				purged = append(purged, i)
			}
		}
		return purged
	}
	if err := k.Look(ctx); err != nil {
		t.Fatal(err)
	}
	if got := firsts(); !slices.Equal(got, []int{2, 3, 4, 5}) || k.Purges() != prune.PurgesPerLook {
		t.Fatalf("after one look, %d purges, the streams purged %v; want %d purges, of the fullest: [2 3 4 5]", k.Purges(), got, prune.PurgesPerLook)
	}
	if err := k.Look(ctx); err != nil {
		t.Fatal(err)
	}
	if got := firsts(); len(got) != 6 || k.Purges() != 6 {
		t.Fatalf("after two looks, %d purges, the streams purged %v; want 6, all", k.Purges(), got)
	}
}

// TestKeeperPurgesAllPastTheirShare: streams whose shares the keeper alone holds
// (prune.WithShare), all past them, are all purged in one look, beyond
// PurgesPerLook: without a server's limit they would grow on until their turn.
func TestKeeperPurgesAllPastTheirShare(t *testing.T) {
	ctx, js := startJS(t)
	const small, streams = 4 << 20, 2*prune.PurgesPerLook + 1
	data := make([]byte, unit)
	for i := range streams {
		c := stream(fmt.Sprintf("P%d", i))
		if _, err := js.CreateStream(ctx, prune.WithShare(c, small)); err != nil {
			t.Fatal(err)
		}
		for n := range small/unit + 1 + i {
			if _, err := js.Publish(ctx, fmt.Sprintf("p%d.u", i), data); err != nil {
				t.Fatalf("publish %d on P%d: %v", n, i, err)
			}
		}
	}
	k := prune.New(js, func(string) bool { return true }, bustest.Logger(t))
	if err := k.Look(ctx); err != nil {
		t.Fatal(err)
	}
	var held []string
	for i := range streams {
		s, err := js.Stream(ctx, fmt.Sprintf("P%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if st := s.CachedInfo().State; st.Bytes > uint64(prune.High(small)) {
			held = append(held, fmt.Sprintf("P%d: %d bytes", i, st.Bytes))
		}
	}
	if len(held) > 0 || k.Purges() != streams {
		t.Fatalf("after one look, %d purges of %d streams past their share; still past their High mark (%d): %v", k.Purges(), streams, prune.High(small), held)
	}
}
