package history_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
)

// tailBenchLayout names what tailStore writes: a store built by another is built
// again.
const tailBenchLayout = "old, then hall and lab, rare every 10,000"

// tailBenchDir is where BenchmarkTail keeps the stores it builds, one directory
// per size, for the next runs: a million units take a minute or more to write.
// Remove it to build them again.
func tailBenchDir(units int) string {
	return filepath.Join(os.TempDir(), "scoreboard-bench-tail", strconv.Itoa(units))
}

// BenchmarkTail is what a read of the history's last units costs, on a stream of
// 100 units and on one of 1,000,000 (about 1.3 GB on disk: more than the 1 GiB
// default holds), side by side: the last 50 units of one port, as the page's
// /api/history?port=hall asks (and `history --port hall --last 50`), and the last
// 20 of every port (`history --last 20`), the last 10 results and the start of the
// live ones (`watch --last 10`), each read from the stream's tail (Read)
// and, as before the tail read, from the stream's start (ReadWhole); and the worst
// cases of the tail read, the last 50 units of a port whose units are all at the
// stream's start (old), and of a port that sends one unit in 10,000 (rare), also
// each on a server just started again (-cold: its per-block subject indexes not
// yet read; the OS's page cache stays warm). The
// units are goscore boards, answered at once, alternating over two ports, hall and
// lab, after the 50 of the port old, published on the
// history's subjects with the display's headers as a port does; the stores are
// kept under $TMPDIR/scoreboard-bench-tail (tailBenchDir).
func BenchmarkTail(b *testing.B) {
	for _, units := range []int{100, 1_000_000} {
		b.Run("units="+strconv.Itoa(units), func(b *testing.B) {
			js, restart := tailStore(b, units)
			for _, c := range []struct {
				name string
				q    history.Query
				cold bool // each read on a server just started again
			}{
				{"port-last-50", history.Query{Port: "hall", Last: 50}, false},
				{"port-last-50-cold", history.Query{Port: "hall", Last: 50}, true},
				{"last-20", history.Query{Last: 20}, false},
				{"old-port-last-50", history.Query{Port: "old", Last: 50}, false},
				{"watch-last-10", history.Query{Last: 10, Follow: true}, false},
				{"rare-port-last-50", history.Query{Port: "rare", Last: 50}, false},
				{"rare-port-last-50-cold", history.Query{Port: "rare", Last: 50}, true},
			} {
				for _, r := range []struct {
					name string
					read func(context.Context, jetstream.JetStream, string, history.Query, func(*history.Entry) error) error
				}{{"tail", history.Read}, {"whole", history.ReadWhole}} {
					b.Run(c.name+"/"+r.name, func(b *testing.B) {
						want := min(c.q.Last, units/2)
						switch c.q.Port {
						case "":
							want = min(c.q.Last, units)
						case "old":
							want = 50
						case "rare":
							want = min(c.q.Last, units/10_000)
						}
						for b.Loop() {
							if c.cold {
								b.StopTimer()
								js = restart()
								b.StartTimer()
							}
							n := 0
							// watch's read goes on live: it is over once the tail is.
							ctx, cancel := context.WithCancel(context.Background())
							if err := r.read(ctx, js, bus.DefaultPrefix, c.q, func(e *history.Entry) error {
								if e.Unanswered || e.Unit == nil && !c.q.Follow {
									b.Fatalf("unit %s #%d: unanswered %v, unit %q", e.Port, e.Seq, e.Unanswered, e.Unit)
								}
								if n++; n == want && c.q.Follow {
									cancel()
								}
								return nil
							}); err != nil {
								b.Fatal(err)
							}
							cancel()
							if n != want {
								b.Fatalf("read %d units, want %d", n, want)
							}
						}
					})
				}
			}
		})
	}
}

// tailStore starts an embedded server on the store of units units, built now if
// it is not there from a run before. restart starts the server again, as after a
// daemon's restart: what it keeps in memory of the store (each block's subjects,
// dropped after 2 idle minutes) is to be read again.
func tailStore(b *testing.B, units int) (js jetstream.JetStream, restart func() jetstream.JetStream) {
	dir := tailBenchDir(units)
	done := filepath.Join(dir, "built")
	mark, err := os.ReadFile(done)
	built := err == nil && string(mark) == tailBenchLayout
	if !built {
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	nop := zerolog.Nop()
	srv := bustest.Start(b, bustest.Options{Off: true, JetStream: true, StoreDir: filepath.Join(dir, "store"), Log: &nop})
	nc := srv.Conn(bus.ConnOptions{Server: srv.Server, Name: "bench"})
	if js, err = history.NewJetStream(nc); err != nil {
		b.Fatal(err)
	}
	restart = func() jetstream.JetStream {
		srv.Restart()
		js, err := history.NewJetStream(srv.Conn(bus.ConnOptions{Server: srv.Server, Name: "bench"}))
		if err != nil {
			b.Fatal(err)
		}
		return js
	}
	if _, err := history.Setup(context.Background(), js, history.Config{
		Prefix: bus.DefaultPrefix, MaxAge: 10 * 365 * 24 * time.Hour, MaxBytes: 4 << 30,
	}); err != nil {
		b.Fatal(err)
	}
	if built {
		return js, restart
	}
	start := time.Now()
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	unit := []byte(goscore())
	ports := []string{"hall", "lab"}
	seqs := map[string]uint64{}
	stored := func() {
		if err := nc.Flush(); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if !srv.WaitStored(ctx) {
			b.Fatal("not stored within 5 minutes")
		}
	}
	// A port of 50 units before all the others: its last units are the stream's
	// first, the tail read's farthest reach.
	for i := range 50 + units {
		port := "old"
		switch {
		case i%10_000 == 5_049:
			port = "rare" // one unit in 10,000: its last 50 span half a million
		case i >= 50:
			port = ports[i%len(ports)]
		}
		seqs[port]++
		seq := seqs[port]
		n := strconv.FormatUint(seq, 10)
		// On the Repair subjects, as the daemon's recorder stores them.
		dump := &nats.Msg{Subject: s.Repair(s.Dump("goscore", port)), Data: unit, Header: nats.Header{}}
		origin := "bench-" + port // a port's own, as a daemon's display has
		bus.DumpHeader{Port: port, Seq: seq, Line: int64(seq), Origin: origin, Attempt: 1}.Put(dump.Header)
		result := &nats.Msg{Subject: s.Repair(s.Result("goscore", port)), Header: nats.Header{bus.HeaderMsgID: {bus.ResultID(origin, seq)}},
			Data: []byte(`{"problem":"goscore","port":"` + port + `","seq":` + n + `,"answer":"177 175\n","origin":"` + origin + `","worker":"w","unit_digest":"00112233445566778899aabbccddeeff"}`)}
		if err := nc.PublishMsg(dump); err != nil {
			b.Fatal(err)
		}
		if err := nc.PublishMsg(result); err != nil {
			b.Fatal(err)
		}
		if i%10_000 == 9_999 {
			stored()
		}
	}
	stored()
	info, err := js.Stream(context.Background(), s.Stream())
	if err != nil {
		b.Fatal(err)
	}
	if got := info.CachedInfo().State.Msgs; got != uint64(2*(50+units)) {
		b.Fatalf("the stream holds %d messages, want %d", got, 2*(50+units))
	}
	if err := os.WriteFile(done, []byte(tailBenchLayout), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d units in %s in %s", units, dir, time.Since(start).Round(time.Second))
	return js, restart
}
