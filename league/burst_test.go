package league_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/result"
)

// TestLeagueJunkBurstPage: clubs whose streams at the hub hold large junk (dumps
// of 1 MiB, over any goscore unit, on many ports' subjects, 120 MB) as the boards keeper
// starts reading them do not get the hub's connection closed, nor stall the page
// of a club that plays. The keeper's followers of the clubs' streams shared the
// hub's one connection and each took a batch of 500 messages: all of this junk
// at once (4 MB of the league benchmark's 8 KiB fillers), which together
// passed the server's max_pending of 64 MiB on that connection; the server closed
// it as a slow consumer, dropping every follower, the page's watch of the boards
// and the boards' writes, again as each follower took its batch anew (the league
// benchmark's p99 of 21-27 s at the streams' limits, after its top-up of 8 KiB
// fillers: BENCHMARKS.md, "Memory budget"). Each follower now reads on its own
// connection, readerBatch messages at a time.
func TestLeagueJunkBurstPage(t *testing.T) {
	t.Parallel() // its time is mostly the intakes' back-pressure on the junk
	const noisy, ports, junkBytes = 10, 12, 1 << 20
	clubs := []league.Club{{Name: "quiet", Token: "tq", MaxBytes: "64MiB"}}
	for i := range noisy {
		clubs = append(clubs, league.Club{Name: fmt.Sprintf("n%02d", i), Token: fmt.Sprintf("t%02d", i), MaxBytes: "64MiB"})
	}
	began := time.Now()
	h := startHub(t, clubs...)
	conns := map[string]*nats.Conn{}
	for _, c := range clubs {
		_, conns[c.Name] = startClub(t, h.LeafURL(), c.Name, c.Token)
	}
	bustest.Wait(t, "every club's link up", func() (bool, string) {
		up := 0
		for _, ok := range h.Links() {
			if ok {
				up++
			}
		}
		return up == len(clubs), fmt.Sprintf("%d of %d links up", up, len(clubs))
	})
	// Each noisy club's junk: one dump of 8 KiB on each of its ports, the last of
	// each subject, which a reader starting on the stream takes first.
	junk := []byte(strings.Repeat(" + @ O + + + + + + + + + + + + + + + +\n", junkBytes/39+1))[:junkBytes]
	var wg sync.WaitGroup
	for i := range noisy {
		nc := conns[fmt.Sprintf("n%02d", i)]
		wg.Go(func() {
			for p := range ports {
				if err := nc.Publish(fmt.Sprintf("scoreboard.dump.goscore.j%d", p), junk); err != nil {
					t.Error(err)
					return
				}
			}
			if err := nc.Flush(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	js, _ := jetstream.New(h.Conn())
	bustest.Wait(t, "the noisy clubs' junk in their streams at the hub", func() (bool, string) {
		behind := 0
		for i := range noisy {
			s, err := js.Stream(context.Background(), league.ClubStream(fmt.Sprintf("n%02d", i)))
			if err != nil || s.CachedInfo().State.Msgs < ports {
				behind++
			}
		}
		return behind == 0, fmt.Sprintf("%d of %d streams without their %d junk dumps", behind, noisy, ports)
	})

	t.Logf("the junk at the hub %v after the test began", time.Since(began).Round(time.Millisecond))
	// The readers start on streams holding the junk: the quiet club's results
	// reach the bucket within a bound, and the hub's connection stays up.
	ctx, cancel := context.WithCancel(context.Background())
	var run sync.WaitGroup
	t.Cleanup(func() { cancel(); run.Wait() })
	reconnects, slow := h.Conn().Stats().Reconnects, league.Server(h).NumSlowConsumersClients()
	run.Go(func() { _ = h.RunBoards(ctx) })
	var kv jetstream.KeyValue
	bustest.Wait(t, "the hub's bucket", func() (bool, string) {
		var err error
		kv, err = js.KeyValue(ctx, league.Bucket)
		return err == nil, fmt.Sprint(err)
	})
	quiet, origin := conns["quiet"], bus.NewOrigin()
	const units = 10
	var slowest time.Duration
	for seq := uint64(1); seq <= units; seq++ {
		u, a := faulttest.GoscoreBoard(int(seq))
		d := nats.NewMsg("scoreboard.dump.goscore.t1")
		d.Data = []byte(u)
		d.Header.Set(bus.HeaderOrigin, origin)
		d.Header.Set(bus.HeaderSeq, strconv.FormatUint(seq, 10))
		res, _ := json.Marshal(result.Record{Problem: "goscore", Port: "t1", Seq: seq, Answer: a, Origin: origin, UnitDigest: bus.UnitDigest([]byte(u))})
		r := nats.NewMsg("scoreboard.result.goscore.t1")
		r.Data = res
		sent := time.Now()
		if err := quiet.PublishMsg(d); err != nil {
			t.Fatal(err)
		}
		if err := quiet.PublishMsg(r); err != nil {
			t.Fatal(err)
		}
		var shown uint64
		for deadline := time.Now().Add(time.Minute); shown < seq && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if en, err := kv.Get(ctx, "quiet.t1"); err == nil {
				var k result.Kept
				if json.Unmarshal(en.Value(), &k) == nil {
					shown = k.Seq
				}
			}
		}
		slowest = max(slowest, time.Since(sent))
		if shown < seq {
			t.Fatalf("the quiet club's unit %d is not on the page within a minute (it shows %d); the hub's connection reconnected %d times",
				seq, shown, h.Conn().Stats().Reconnects-reconnects)
		}
	}
	// The noisy clubs' junk read to its end: whatever it does to a connection is done.
	bustest.Wait(t, "the noisy clubs' junk read", func() (bool, string) {
		n := uint64(0)
		for k, v := range h.Junk() {
			if strings.HasPrefix(k.Club, "n") {
				n += v
			}
		}
		return n >= noisy*ports, fmt.Sprintf("%d of %d junk dumps read", n, noisy*ports)
	})
	got, closed := h.Conn().Stats().Reconnects-reconnects, league.Server(h).NumSlowConsumersClients()-slow
	t.Logf("%d noisy clubs, %d junk dumps of %d bytes each: the quiet club's %d results on the page, the slowest in %v; the server closed %d connections as slow consumers, the hub's reconnected %d times",
		noisy, ports, junkBytes, units, slowest.Round(time.Millisecond), closed, got)
	if closed > 0 || got > 0 || slowest > 10*time.Second {
		t.Fatalf("with %d clubs' junk (%d MB) to read, the server closed %d connections as slow consumers, the hub's reconnected %d times, and the quiet club's slowest result took %v to the page; want none, none, within 10 s",
			noisy, noisy*ports*junkBytes>>20, closed, got, slowest.Round(time.Millisecond))
	}
}
