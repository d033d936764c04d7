package prune_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/prune"
)

// TestKeeperPrunesASourcedStream is the hub's case: a club's stream takes its units
// from a source (the club's history), and the keeper purges it behind the
// sourcing's back. COPY sources ORIGIN, which is filled three times COPY's share,
// each unit numbered; COPY loses only what the keeper dropped. Then the server
// restarts, and the source resumes from what COPY holds, not from where it began:
// every unit published after it arrives once, and none from before it again. Each
// of COPY's sequences holds the unit of that number, so a unit sourced twice or
// skipped shows as the first sequence that does not. After the restart the
// source mostly resumes only at nats-server's next check of its sources (every
// 10 s): half this test's time under -race.
func TestKeeperPrunesASourcedStream(t *testing.T) {
	b := bustest.Start(t, bustest.Options{JetStream: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*bustest.Long)
	defer cancel()
	connect := func() jetstream.JetStream {
		js, err := jetstream.New(b.Daemon())
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	js := connect()
	origin := jetstream.StreamConfig{
		Name: "ORIGIN", Subjects: []string{"origin.>"}, Retention: jetstream.LimitsPolicy,
		Storage: jetstream.FileStorage,
	}
	cp := stream("COPY")
	cp.Subjects = nil
	cp.Sources = []*jetstream.StreamSource{{Name: "ORIGIN"}}
	for _, c := range []jetstream.StreamConfig{origin, cp} {
		if _, err := js.CreateStream(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	owns := func(s string) bool { return s == "COPY" }

	published := 0
	data := make([]byte, unit)
	// fill publishes n units on ORIGIN in mebibytes, and after each waits for COPY
	// to have taken them (its last sequence), then lets k look.
	fill := func(js jetstream.JetStream, k *prune.Keeper, n int) {
		t.Helper()
		const perLook = (1 << 20) / unit
		for n > 0 {
			for range min(perLook, n) {
				published++
				n--
				binary.BigEndian.PutUint64(data, uint64(published))
				if _, err := js.Publish(ctx, "origin.u", data); err != nil {
					t.Fatalf("publish %d: %v", published, err)
				}
			}
			bustest.Wait(t, "COPY to take ORIGIN's units", func() (bool, string) {
				st := copyState(ctx, t, js)
				return st.LastSeq >= uint64(published), fmt.Sprintf("published %d, COPY's last %d", published, st.LastSeq)
			})
			if err := k.Look(ctx); err != nil {
				t.Fatalf("look after %d units: %v", published, err)
			}
		}
	}
	// check says COPY holds units dropped+1 to published, each once and in order.
	check := func(js jetstream.JetStream, dropped, purges uint64, when string) {
		t.Helper()
		st := copyState(ctx, t, js)
		counts := fmt.Sprintf("%s: published %d; COPY: %d units, %d bytes, sequences %d-%d; the keeper dropped %d in %d purges",
			when, published, st.Msgs, st.Bytes, st.FirstSeq, st.LastSeq, dropped, purges)
		t.Log(counts)
		if st.Msgs+dropped != uint64(published) || st.FirstSeq != dropped+1 || st.LastSeq != uint64(published) {
			t.Fatalf("COPY lost units the keeper did not drop, or took some twice: %s", counts)
		}
		if st.Bytes > uint64(prune.High(share)) {
			t.Fatalf("COPY holds %d bytes, more than %d: %s", st.Bytes, prune.High(share), counts)
		}
		// Read in order by a consumer, not a request a sequence: 2,000 requests
		// take seconds under -race.
		c, err := js.OrderedConsumer(ctx, "COPY", jetstream.OrderedConsumerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		for seq := st.FirstSeq; seq <= st.LastSeq; seq++ {
			m, err := c.Next(jetstream.FetchMaxWait(bustest.Long))
			if err != nil {
				t.Fatalf("COPY's sequence %d: %v; %s", seq, err, counts)
			}
			meta, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			if got := binary.BigEndian.Uint64(m.Data()); meta.Sequence.Stream != seq || got != seq || len(m.Data()) != unit {
				t.Fatalf("COPY's sequence %d holds unit %d (%d bytes), want %d: a unit skipped or taken twice; %s",
					meta.Sequence.Stream, got, len(m.Data()), seq, counts)
			}
		}
	}

	k := prune.New(js, owns, bustest.Logger(t))
	fill(js, k, 3*share/unit)
	if k.Purges() < 2 {
		t.Fatalf("the keeper purged %d times (%d units) after %d units: want at least 2", k.Purges(), k.Dropped(), published)
	}
	check(js, k.Dropped(), k.Purges(), "before the restart")

	b.Restart()
	js = connect()
	k2 := prune.New(js, owns, bustest.Logger(t))
	fill(js, k2, share/4/unit)
	if k2.Purges() == 0 {
		t.Fatalf("the keeper did not purge after the restart (%d units published)", published)
	}
	check(js, k.Dropped()+k2.Dropped(), k.Purges()+k2.Purges(), "after the restart")
}

func copyState(ctx context.Context, t *testing.T, js jetstream.JetStream) jetstream.StreamState {
	t.Helper()
	s, err := js.Stream(ctx, "COPY")
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State
}
