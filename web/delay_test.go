package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/render"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/web"
	"github.com/goclub/scoreboard/worker"
)

// testDelay is the tests' broadcast delay: long enough for a busy machine to ask
// every endpoint many times while a unit is held, short enough for a light test.
//
// 5 s: at 3 s the league's sibling test (TestLeaguePageDelayPerClub, then built the
// same way) was once never asked while its unit was held, under -race in CI's race
// suite, where it took 40 s; these publish four units in turn inside the delay.
const testDelay = 5 * time.Second

// heldUnit is what the test knows of a unit from the server itself: its board's
// revision and store time in the bucket, its dump's stream sequence and store time,
// and its result's store time.
type heldUnit struct {
	seq            uint64
	unit           []byte
	rev            uint64
	created        time.Time
	dumpSeq        uint64
	dumped, result time.Time
}

// delayEnv is a club's daemon in process (its embedded server with JetStream, its
// history's stream and bucket kept by the real updater, a goscore worker) and a
// page on it with the test's delay, read as a tool reads.
type delayEnv struct {
	b      *bustest.Bus
	js     jetstream.JetStream
	kv     jetstream.KeyValue
	base   string
	events func() []seenBoard
	mu     sync.Mutex
	boards map[uint64]jetstream.KeyValueEntry // the bucket's values of port "hall", by the unit's seq
}

func startDelayEnv(t *testing.T, d *web.Delays) *delayEnv {
	t.Helper()
	b := bustest.Start(t, bustest.Options{JetStream: true})
	e := &delayEnv{b: b, boards: map[uint64]jetstream.KeyValueEntry{}}
	var err error
	if e.js, err = history.NewJetStream(b.Daemon()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if e.kv, err = history.Setup(ctx, e.js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	bustest.CaptureHistory(t, b.Daemon(), bus.DefaultPrefix) // the port's part
	b.Workers(worker.Options{Problems: []string{"goscore"}, Concurrency: 1})
	u := history.NewUpdater(b.Daemon(), e.js, bus.DefaultPrefix, zerolog.Nop())
	if err := u.Subscribe(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { u.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	// The test's own watch of the bucket: each value's revision and store time.
	w, err := e.kv.Watch(ctx, "hall")
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() {
		for en := range w.Updates() {
			var r result.Kept
			if en != nil && json.Unmarshal(en.Value(), &r) == nil {
				e.mu.Lock()
				e.boards[r.Seq] = en
				e.mu.Unlock()
			}
		}
	})
	t.Cleanup(func() { _ = w.Stop() })
	e.base, _ = serveTestPage(t, b.Tool(), pageOpts{delays: d})
	e.events = followEvents(t, e.base)
	return e
}

// publish sends unit seq of port hall as the port's reader does (its origin and
// seq); the worker answers it, the history keeps it and puts its board.
func (e *delayEnv) publish(t *testing.T, seq uint64) []byte {
	t.Helper()
	unit, _ := faulttest.GoscoreBoard(int(seq))
	m := nats.NewMsg(bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", "hall"))
	m.Data = []byte(unit)
	bus.DumpHeader{Port: "hall", Seq: seq, Origin: "o1"}.Put(m.Header)
	if err := e.b.Daemon().PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	return m.Data
}

// stored waits for the unit's board in the bucket and reads its dump and result
// in the stream.
func (e *delayEnv) stored(t *testing.T, seq uint64, unit []byte) *heldUnit {
	t.Helper()
	h := &heldUnit{seq: seq, unit: unit}
	bustest.Wait(t, fmt.Sprintf("unit %d's board in the bucket", seq), func() (bool, string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		en := e.boards[seq]
		if en == nil {
			return false, fmt.Sprintf("%d values of hall seen", len(e.boards))
		}
		h.rev, h.created = en.Revision(), en.Created()
		return true, ""
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := e.js.Stream(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Stream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for s := info.State.FirstSeq; s <= info.State.LastSeq; s++ {
		m, err := stream.GetMsg(ctx, s)
		if err != nil {
			t.Fatalf("stream message %d: %v", s, err)
		}
		if strings.Contains(m.Subject, ".dump.") {
			if d, _ := bus.ReadDump(m.Header); d.Seq == seq {
				h.dumpSeq, h.dumped = s, m.Time
			}
		} else if r, err := result.Decode(m.Data); err == nil && r.Seq == seq {
			h.result = m.Time
		}
	}
	if h.dumpSeq == 0 || h.result.IsZero() {
		t.Fatalf("unit %d: dump at stream seq %d, result stored at %v: want both in the stream", seq, h.dumpSeq, h.result)
	}
	return h
}

// endpoint is one URL of the page that can reach a unit: what it shows of the
// units asked (their seqs), and since when it may show unit h.
type endpoint struct {
	name  string
	shows func(t *testing.T, h *heldUnit) (bool, string)
	from  func(h *heldUnit) time.Time
}

func getBody(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// boardJSON is a board of /api/boards: the fields the test reads.
type boardJSON struct {
	Port     string `json:"port"`
	Seq      uint64 `json:"seq"`
	Revision uint64 `json:"revision"`
	Picture  string `json:"picture"`
	SGF      string `json:"sgf"`
}

func (e *delayEnv) apiBoard(t *testing.T, port string) boardJSON {
	t.Helper()
	_, _, body := getBody(t, e.base+"/api/boards")
	var boards []boardJSON
	if err := json.Unmarshal([]byte(body), &boards); err != nil {
		t.Fatalf("/api/boards: %v: %s", err, body)
	}
	for _, b := range boards {
		if b.Port == port {
			return b
		}
	}
	return boardJSON{}
}

// endpoints are every URL of the page that can reach a unit by its number.
func (e *delayEnv) endpoints(port string) []endpoint {
	board := func(h *heldUnit) time.Time { return h.created }
	missing := func(t *testing.T, h *heldUnit) string {
		// A message that was never stored: what a held one must look like.
		_, _, body := getBody(t, fmt.Sprintf("%s/history/%d.svg", e.base, h.dumpSeq+1_000_000))
		return strings.ReplaceAll(body, fmt.Sprintf("message %d:", h.dumpSeq+1_000_000), "message N:")
	}
	return []endpoint{
		{"/api/boards", func(t *testing.T, h *heldUnit) (bool, string) {
			b := e.apiBoard(t, port)
			return b.Seq == h.seq, fmt.Sprintf("seq %d", b.Seq)
		}, board},
		{"/boards/" + port + ".svg", func(t *testing.T, h *heldUnit) (bool, string) {
			want, _ := render.SVG("goscore", h.unit)
			code, _, body := getBody(t, e.base+"/boards/"+port+".svg")
			return code == 200 && body == string(want), fmt.Sprintf("%d, %d bytes", code, len(body))
		}, board},
		{"/boards/" + port + ".sgf", func(t *testing.T, h *heldUnit) (bool, string) {
			want, _ := render.SGF("goscore", h.unit)
			code, _, body := getBody(t, e.base+"/boards/"+port+".sgf")
			return code == 200 && body == string(want), fmt.Sprintf("%d, %d bytes", code, len(body))
		}, board},
		// The pictures' immutable URLs, by the board's revision and what it draws.
		{"/pictures/" + port + "/<revision>.svg", func(t *testing.T, h *heldUnit) (bool, string) {
			code, _, _ := getBody(t, fmt.Sprintf("%s/pictures/%s/%s.svg", e.base, port, web.PictureName("goscore", h.unit, h.rev)))
			return code == 200, fmt.Sprintf("%d", code)
		}, board},
		{"/pictures/" + port + "/<revision>.sgf", func(t *testing.T, h *heldUnit) (bool, string) {
			code, _, _ := getBody(t, fmt.Sprintf("%s/pictures/%s/%s.sgf", e.base, port, web.PictureName("goscore", h.unit, h.rev)))
			return code == 200, fmt.Sprintf("%d", code)
		}, board},
		{"/api/history", func(t *testing.T, h *heldUnit) (bool, string) {
			_, _, body := getBody(t, e.base+"/api/history?port="+port)
			var items []web.HistoryItem
			if err := json.Unmarshal([]byte(body), &items); err != nil {
				t.Fatalf("/api/history: %v: %s", err, body)
			}
			var seqs []uint64
			for _, it := range items {
				seqs = append(seqs, it.Seq)
				if it.Seq == h.seq {
					return true, fmt.Sprintf("seqs %v", seqs)
				}
			}
			return false, fmt.Sprintf("seqs %v", seqs)
		}, func(h *heldUnit) time.Time { return h.result }},
		{"/history/<seq>.svg", func(t *testing.T, h *heldUnit) (bool, string) {
			code, _, body := getBody(t, fmt.Sprintf("%s/history/%d.svg", e.base, h.dumpSeq))
			if code == 200 {
				return true, "200"
			}
			// Held, it is as if it were not there: the same answer as a number
			// never stored, so that a guess tells nothing.
			if got, want := strings.ReplaceAll(body, fmt.Sprintf("message %d:", h.dumpSeq), "message N:"), missing(t, h); code != 404 || got != want {
				t.Errorf("/history/%d.svg of a held unit: %d %q; want 404 and what a message never stored gets, %q", h.dumpSeq, code, got, want)
			}
			return false, fmt.Sprintf("%d", code)
		}, func(h *heldUnit) time.Time { return h.dumped }},
	}
}

// TestDelayHoldsEveryEndpoint: with a delay, a unit answered is on no URL of the
// page while it is younger than the delay: not in /api/boards, the event stream,
// the board's picture or game record, the picture URLs by revision, /api/history,
// or /history/<seq>.svg (a 404 as for a number never stored). Then each endpoint
// shows it, and the event stream gives every unit, each once, in order, none before
// its time. A
// request is a leak when its answer came before the unit's store time plus the
// delay; the test counts the requests made while each unit was held.
func TestDelayHoldsEveryEndpoint(t *testing.T) {
	t.Parallel() // its time is the delay's: it waits beside the other
	e := startDelayEnv(t, web.NewDelays(testDelay, nil))
	var status struct {
		Delay float64            `json:"delay_seconds"`
		Clubs map[string]float64 `json:"club_delay_seconds"`
	}
	_, _, body := getBody(t, e.base+"/api/status")
	if err := json.Unmarshal([]byte(body), &status); err != nil || status.Delay != testDelay.Seconds() || status.Clubs != nil {
		t.Fatalf("/api/status: %s (%v); want delay_seconds %v and no club's", body, err, testDelay.Seconds())
	}

	// Four units, each published once the one before has its board in the bucket
	// (the history's updater puts a port's latest, so a burst could skip one), all
	// within the delay on any machine that is not stalled.
	var units []*heldUnit
	for seq := uint64(1); seq <= 4; seq++ {
		units = append(units, e.stored(t, seq, e.publish(t, seq)))
	}
	eps := e.endpoints("hall")
	checkHeld(t, eps, units, func(t *testing.T) bool {
		// Until every endpoint shows the last unit.
		for _, ep := range eps {
			if ok, _ := ep.shows(t, units[len(units)-1]); !ok {
				return false
			}
		}
		return true
	})
	// After the delay, each unit is in the history and has its picture there.
	for _, u := range units {
		for _, ep := range eps {
			if ep.name == "/api/history" || ep.name == "/history/<seq>.svg" {
				if ok, counts := ep.shows(t, u); !ok {
					t.Errorf("%s after the delay: unit %d not shown (%s)", ep.name, u.seq, counts)
				}
			}
		}
	}
	b := e.apiBoard(t, "hall")
	// The picture URLs the board gives are the ones asked for above.
	for _, u := range []string{b.Picture, b.SGF} {
		if u != "" {
			if code, _, _ := getBody(t, e.base+u); code != 200 {
				t.Errorf("%s after the delay: %d", u, code)
			}
		}
	}
	// The event stream writes each flushEvery: the last unit comes within it.
	last := units[len(units)-1].seq
	bustest.Wait(t, "the event stream's last unit", func() (bool, string) {
		seen := e.events()
		for _, s := range seen {
			if s.Port == "hall" && s.Seq == last {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events, none of unit %d", len(seen), last)
	})
	checkEvents(t, e.events(), "hall", units)
}

// checkHeld asks every endpoint for every unit until done says all is shown:
// a request whose answer came before the unit's time shows nothing of it, and
// each endpoint is asked at least once while each unit is held.
func checkHeld(t *testing.T, eps []endpoint, units []*heldUnit, done func(t *testing.T) bool) {
	t.Helper()
	asked := map[string]int{}
	deadline := time.Now().Add(bustest.Long)
	tick := time.NewTicker(20 * time.Millisecond) // a poll's pace, not an order
	defer tick.Stop()
	for ; !done(t); <-tick.C {
		if time.Now().After(deadline) {
			t.Fatalf("not every endpoint shows the last unit within %v; asked while held: %v", bustest.Long, asked)
		}
		for _, ep := range eps {
			for _, u := range units {
				shown, counts := ep.shows(t, u)
				answered := time.Now()
				due := ep.from(u).Add(testDelay)
				if !answered.Before(due) {
					continue
				}
				asked[ep.name]++
				if shown {
					t.Fatalf("%s shows unit %d %v before its time (stored %v, delay %v): %s",
						ep.name, u.seq, due.Sub(answered).Round(time.Millisecond), ep.from(u).Format(time.StampMilli), testDelay, counts)
				}
			}
		}
	}
	for _, ep := range eps {
		if asked[ep.name] == 0 {
			t.Errorf("%s was never asked while a unit was held: asked %v", ep.name, asked)
		}
	}
	t.Logf("requests answered while a unit was held, by endpoint: %v", asked)
}

// checkEvents: the event stream gave each unit once, in order, each no sooner than
// its board's store time plus the delay.
func checkEvents(t *testing.T, seen []seenBoard, port string, units []*heldUnit) {
	t.Helper()
	var got []uint64
	for _, s := range seen {
		if s.Port != port {
			continue
		}
		got = append(got, s.Seq)
		for _, u := range units {
			if u.seq == s.Seq && s.At.Before(u.created.Add(testDelay)) {
				t.Errorf("the event stream gave unit %d %v before its time", u.seq, u.created.Add(testDelay).Sub(s.At).Round(time.Millisecond))
			}
		}
	}
	var want []uint64
	for _, u := range units {
		want = append(want, u.seq)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the event stream gave port %s's units %v; want %v: each once, in order", port, got, want)
	}
}

// TestDelayRewatch: a page started after a unit is old enough shows it at once
// (while a younger one of another port is still held), and when its watch starts
// again (the server restarted: the watch replays every value) it shows nothing
// twice and nothing older: each port's units once, in order. A delete is held
// as a value is.
func TestDelayRewatch(t *testing.T) {
	t.Parallel() // its time is the delay's: it waits beside the other
	b := bustest.Start(t, bustest.Options{JetStream: true})
	ctx := context.Background()
	put := func(port string, seq uint64) jetstream.KeyValueEntry {
		t.Helper()
		js, err := jetstream.New(b.Daemon())
		if err != nil {
			t.Fatal(err)
		}
		kv, err := history.Setup(ctx, js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 16 << 20})
		if err != nil {
			t.Fatal(err)
		}
		unit, _ := faulttest.GoscoreBoard(int(seq))
		rev, err := kv.Put(ctx, port, boardValue(t, "goscore", port, seq, []byte(unit), time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		en, err := kv.GetRevision(ctx, port, rev)
		if err != nil {
			t.Fatal(err)
		}
		return en
	}
	old := put("hall", 1)
	bustest.Wait(t, "hall's unit 1 older than the delay", func() (bool, string) {
		return time.Since(old.Created()) > testDelay, fmt.Sprintf("%v old", time.Since(old.Created()))
	})
	held := put("den", 1)
	base, _ := serveTestPage(t, b.Tool(), pageOpts{delays: web.NewDelays(testDelay, nil)})
	events := followEvents(t, base)
	// At once: some answer shows hall's unit while den's is still held.
	var early, late int
	bustest.Wait(t, "hall's old unit on the new page", func() (bool, string) {
		e := &delayEnv{base: base}
		hall, den := e.apiBoard(t, "hall"), e.apiBoard(t, "den")
		if time.Now().Before(held.Created().Add(testDelay)) {
			if den.Seq != 0 {
				t.Fatalf("den's unit 1 shown %v before its time", time.Until(held.Created().Add(testDelay)))
			}
			if hall.Seq == 1 {
				early++
			}
		} else if hall.Seq == 1 {
			late++
		}
		return early > 0 || late > 0, ""
	})
	if early == 0 {
		t.Fatalf("hall's unit, old enough when the page started, was first shown after den's came of age (%d answers): held as if new", late)
	}
	// The server restarts: the page's watch starts again and replays both ports.
	b.Restart()
	last := put("den", 2)
	// The replay came before den's unit 2 (the watch's values first): once that
	// is out, a duplicate would be there.
	bustest.Wait(t, "den's unit 2 on the event stream", func() (bool, string) {
		n := 0
		for _, s := range events() {
			if s.Port == "den" && s.Seq == 2 {
				n++
			}
		}
		return n > 0, fmt.Sprintf("events %v", events())
	})
	var got []string
	for _, s := range events() {
		got = append(got, fmt.Sprintf("%s %d", s.Port, s.Seq))
		if s.Port == "den" && s.Seq == 2 && s.At.Before(last.Created().Add(testDelay)) {
			t.Errorf("den's unit 2 on the event stream %v before its time", last.Created().Add(testDelay).Sub(s.At))
		}
	}
	if strings.Join(got, ", ") != "hall 1, den 1, den 2" {
		t.Fatalf("the event stream gave %q; want each unit once, in order: hall 1, den 1, den 2", strings.Join(got, ", "))
	}
	checkDeleteHeld(t, b, base, "hall")
}

// checkDeleteHeld: a deleted port goes by the delay too: its tile stays until the
// delete was stored (after deleted) the delay ago.
func checkDeleteHeld(t *testing.T, b *bustest.Bus, base, port string) {
	t.Helper()
	ctx := context.Background()
	js, err := jetstream.New(b.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Boards())
	if err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if err := kv.Delete(ctx, port); err != nil {
		t.Fatal(err)
	}
	page, shown := &delayEnv{base: base}, 0
	bustest.Wait(t, "hall's tile gone", func() (bool, string) {
		seq := page.apiBoard(t, port).Seq
		if time.Now().Before(deleted.Add(testDelay)) {
			if seq == 0 {
				t.Fatalf("hall's tile gone %v before its delete's time", time.Until(deleted.Add(testDelay)))
			}
			shown++
		}
		return seq == 0, fmt.Sprintf("hall shows unit %d", seq)
	})
	if shown == 0 {
		t.Fatalf("/api/boards was never asked while hall's delete was held: a stall longer than %v", testDelay)
	}
}
