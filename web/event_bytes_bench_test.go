package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/web"
)

// eventBytesEnv, set to a number of clubs, runs TestEventBytesPerViewer.
const eventBytesEnv = "SCOREBOARD_BENCH_EVENT_BYTES"

// TestEventBytesPerViewer measures the bytes a second that a viewer of a league
// hub's page receives from /api/events: of the whole hub, of one club (?club=),
// and of one player (?player=). $SCOREBOARD_BENCH_EVENT_BYTES stand-in clubs of 4
// boards each, every board named (a game with two players in the hub's
// LEAGUE_PAIRINGS), are put into the hub's bucket LEAGUE_BOARDS at the league
// bench's rate, 2 units a second a board (1,600 a second at 200 clubs), each a
// goscore unit as the bench's clubs send; the viewers count every byte of their
// streams (the server-sent events' framing included) for
// $SCOREBOARD_BENCH_EVENT_SECONDS (20) after the first boards.
//
//	SCOREBOARD_BENCH_EVENT_BYTES=20 go test -run TestEventBytesPerViewer -v ./web/
func TestEventBytesPerViewer(t *testing.T) {
	clubs, _ := strconv.Atoi(os.Getenv(eventBytesEnv))
	if clubs <= 0 {
		t.Skipf("a measurement: %s=CLUBS runs it", eventBytesEnv)
	}
	seconds := 20
	if v, err := strconv.Atoi(os.Getenv("SCOREBOARD_BENCH_EVENT_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	const rate = 2 // units a second a board
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, js, kv, ports := namedLeague(t, ctx, clubs)
	seq := uint64(0)
	put := func() {
		seq++
		port := ports[int(seq)%len(ports)]
		u, a := faulttest.GoscoreBoard(int(seq) % 32000)
		v, _ := json.Marshal(result.Kept{
			Record: result.Record{Problem: "goscore", Port: port, Seq: seq, Answer: a, Worker: "bench"},
			Unit:   u, Time: time.Now().UTC().Format(time.RFC3339Nano),
		})
		if _, err := js.PublishAsync("$KV."+league.Bucket+"."+port, v); err != nil {
			t.Fatal(err)
		}
	}
	for range ports {
		put()
	}
	<-js.PublishAsyncComplete()
	if _, err := kv.Get(ctx, ports[len(ports)-1]); err != nil {
		t.Fatal(err)
	}

	counting := atomic.Bool{}
	var viewers []*countedStream
	for _, q := range []string{"", "?club=club-001", "?player=" + url.QueryEscape("müller-straße 0007")} {
		viewers = append(viewers, countStream(t, ctx, base+"/api/events"+q, &counting))
	}
	// Each board's players first (the pairings' watch), then the measure.
	bustest.Wait(t, "every board with its game", func() (bool, string) {
		var bs []web.Board
		code, _, body := get(t, base+"/api/boards")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &bs) != nil {
			return false, body
		}
		n := 0
		for _, b := range bs {
			if b.Game != nil {
				n++
			}
		}
		return n == len(ports), fmt.Sprintf("%d of %d boards with their game", n, len(ports))
	})
	time.Sleep(time.Second) // the viewers' first screens read, not counted
	counting.Store(true)
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	units := 0
	for time.Since(start) < time.Duration(seconds)*time.Second {
		<-tick.C
		want := int(time.Since(start).Seconds() * float64(rate*len(ports)))
		for ; units < want; units++ {
			put()
		}
	}
	el := time.Since(start).Seconds()
	<-js.PublishAsyncComplete()
	time.Sleep(500 * time.Millisecond) // the last flush (flushEvery)
	counting.Store(false)
	t.Logf("%d clubs, %d boards, %d units in %.1f s (%.0f a second)", clubs, len(ports), units, el, float64(units)/el)
	for _, v := range viewers {
		b, ev := v.bytes.Load(), v.events.Load()/2
		per := 0.0
		if ev > 0 {
			per = float64(b) / float64(ev)
		}
		t.Logf("viewer %s: %d bytes, %d events: %.0f bytes a second, %.0f bytes an event", strings.TrimPrefix(v.url, base), b, ev, float64(b)/el, per)
	}
	// The index of clubs (/clubs) reads /api/boards when it loads and every 10 s,
	// gzipped as a browser asks for it.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/boards", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	gz, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, _, plain := get(t, base+"/api/boards")
	t.Logf("the index's /api/boards: %d bytes, %d gzipped (%s): %.0f bytes a second at one load every 10 s",
		len(plain), len(gz), resp.Header.Get("Content-Encoding"), float64(len(gz))/10)
}

// namedLeague serves a league hub's page over the hub's buckets on a new embedded
// JetStream server: clubs stand-in clubs of 4 boards (club-001.table-1, ...), each
// board named in LEAGUE_PAIRINGS' round 1. It returns the page, the stream's
// context, the boards' bucket and the ports.
func namedLeague(t *testing.T, ctx context.Context, clubs int) (string, jetstream.JetStream, jetstream.KeyValue, []string) {
	t.Helper()
	const perClub = 4
	ns := bustest.Start(t, bustest.Options{JetStream: true, Prefix: league.SubjectPrefix})
	js, _ := jetstream.New(ns.Daemon())
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: league.Bucket, History: 1, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := pairing.Setup(ctx, js, league.SubjectPrefix, 1)
	if err != nil {
		t.Fatal(err)
	}
	var names, ports []string
	round := pairing.Round{Info: pairing.Info{Tournament: "League", Round: 1}}
	tables := map[int]string{}
	for c := range clubs {
		club := fmt.Sprintf("club-%03d", c+1)
		names = append(names, club)
		for p := range perClub {
			port := fmt.Sprintf("%s.table-%d", club, p+1)
			ports = append(ports, port)
			n := len(ports)
			round.Games = append(round.Games, pairing.Game{Table: n, Handicap: n % 3,
				Black: pairing.Player{Name: fmt.Sprintf("Müller-Straße %04d", n), FirstName: "Jürgen", Rank: "3k"},
				White: pairing.Player{Name: fmt.Sprintf("王小明 %04d", n), Rank: "1d"}})
			tables[n] = port
		}
	}
	if _, err := pairing.Apply(ctx, pk, round, tables, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	d := web.NewDelays(0, nil)
	d.SetLeague(names, nil)
	base, _ := serveTestPage(t, ns.Tool(), pageOpts{prefix: league.SubjectPrefix, delays: d, pairings: true})
	return base, js, kv, ports
}

// countedStream is an event stream read to its end, its bytes and lines counted
// while counting holds.
type countedStream struct {
	url           string
	bytes, events atomic.Int64
}

// countStream opens url's event stream and counts what it reads while counting.
func countStream(t *testing.T, ctx context.Context, url string, counting *atomic.Bool) *countedStream {
	t.Helper()
	v := &countedStream{url: url}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %v %v", url, resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := resp.Body.Read(buf)
			if counting.Load() {
				v.bytes.Add(int64(n))
				for _, c := range buf[:n] {
					if c == '\n' {
						v.events.Add(1) // two a message: halved by the reader
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return v
}
