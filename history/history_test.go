package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	"github.com/goclub/scoreboard/worker"
)

const (
	goscoreBoard = "\n" + " + + + + + + + + + + + + + + + + + + +\n"
	othelloMove  = "--------\n--------\n--------\n---WB---\n---BW---\n--------\n--------\n--------\nB\nM34\n"
)

// goscore is a whole board: the spacer and 19 rows.
func goscore() string { return goscoreBoard[:1] + strings.Repeat(goscoreBoard[1:], 19) }

// env is an embedded server with JetStream in a state dir, the stream and the
// bucket, workers for goscore and othello only, and the bucket's updater.
type env struct {
	u  *history.Updater
	w  *worker.Workers
	nc *nats.Conn
	js jetstream.JetStream
	kv jetstream.KeyValue
}

func start(t *testing.T) *env { return startWith(t, nil) }

// startWith is start, with before called on the updater before it runs.
func startWith(t *testing.T, before func(*history.Updater)) *env {
	t.Helper()
	dir, err := history.OpenStateDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true, StoreDir: dir.Path})
	e := &env{nc: b.Daemon()}
	if e.js, err = history.NewJetStream(e.nc); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if e.kv, err = history.Setup(ctx, e.js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	bustest.CaptureHistory(t, e.nc, bus.DefaultPrefix) // the ports' part
	e.w = b.Workers(worker.Options{Problems: []string{"goscore", "othello"}, Concurrency: 2})
	uctx, stop := context.WithCancel(ctx)
	u := history.NewUpdater(b.Daemon(), e.js, bus.DefaultPrefix, zerolog.Nop())
	e.u = u
	if before != nil {
		before(u)
	}
	// Subscribed before any dump is published, as run does: else a busy machine can
	// answer a unit before the updater hears of it.
	if err := u.Subscribe(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { u.Run(uctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	return e
}

// dump publishes a unit as the display writer does: origin, seq and its id.
func (e *env) dump(t *testing.T, problem, port, origin string, seq uint64, unit string) {
	t.Helper()
	m := nats.NewMsg(bus.Subjects{Prefix: bus.DefaultPrefix}.Dump(problem, port))
	m.Data = []byte(unit)
	if seq > 0 {
		m.Header.Set(bus.HeaderSeq, strconv.FormatUint(seq, 10))
		m.Header.Set(bus.HeaderOrigin, origin)
		m.Header.Set(bus.HeaderMsgID, bus.DumpID(origin, seq))
	}
	if err := e.nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
}

// results subscribes to every result on the bus, as watch does.
func (e *env) results(t *testing.T) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 4096)
	sub, err := e.nc.ChanSubscribe("scoreboard.result.>", ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

// await takes n results from ch.
func await(t *testing.T, ch chan *nats.Msg, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d results on the bus, want %d", i, n)
		}
	}
}

// read is the whole history, as `history` lists it.
func (e *env) read(t *testing.T, q history.Query) []*history.Entry {
	t.Helper()
	var got []*history.Entry
	err := history.Read(context.Background(), e.js, bus.DefaultPrefix, q, func(en *history.Entry) error {
		got = append(got, en)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func lines(es []*history.Entry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.Line() + "\n")
	}
	return b.String()
}

// Every unit is kept once with its first outcome, in the order read: a dump
// published again (both copies answered, so two results arrive) is one unit; a unit
// no worker serves shows as read and unanswered; a dump by hand is kept too.
func TestHistoryKeepsEachUnitOnce(t *testing.T) {
	e := start(t)
	results := e.results(t)

	e.dump(t, "goscore", "lobby", "o1", 1, goscore())
	e.dump(t, "goscore", "lobby", "o1", 2, goscore())
	e.dump(t, "goscore", "lobby", "o1", 2, goscore()) // published again after a timeout
	e.dump(t, "othello", "hall", "o3", 1, othelloMove)
	e.dump(t, "goscore", "manual", "", 0, goscore()) // by hand: no headers
	// Both copies of lobby #2 are answered: the second is the late worker's.
	await(t, results, 5)
	// No worker left: this one is read and never answered.
	if err := e.w.Stop(); err != nil {
		t.Fatal(err)
	}
	e.dump(t, "replay", "desk", "o2", 1, "3 1\nB(0,0)\n")
	want := "lobby goscore #1 0 0\nlobby goscore #2 0 0\n"
	var got []*history.Entry
	bustest.Wait(t, "the history", func() (bool, string) {
		got = e.read(t, history.Query{})
		return len(got) == 5 && strings.HasPrefix(lines(got), want) && got[4].Unanswered, lines(got)
	})
	text := lines(got)
	for _, w := range []string{"hall othello #1 Black -  4 White -  1", "manual goscore #0 0 0", "desk replay #1 unanswered"} {
		if !strings.Contains(text, w) {
			t.Errorf("history lacks %q:\n%s", w, text)
		}
	}
	// One dump and one result a unit in the stream itself.
	info, err := e.js.Stream(context.Background(), "SCOREBOARD")
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.Msgs; n != 9 {
		t.Errorf("the stream holds %d messages, want 9 (5 dumps, 4 results; the repeated dump and its result once)", n)
	}
	var rec map[string]any
	if err := json.Unmarshal(got[4].JSON(nil), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["unanswered"] != true || rec["unit"] != "3 1\nB(0,0)\n" || rec["time"] == "" {
		t.Errorf("unanswered record: %v", rec)
	}

	// The filters, and the last N.
	if got := lines(e.read(t, history.Query{Port: "lobby", Last: 1})); got != "lobby goscore #2 0 0\n" {
		t.Errorf("--port lobby --last 1: %q", got)
	}
	if got := lines(e.read(t, history.Query{Problem: "othello"})); !strings.HasPrefix(got, "hall othello #1") || strings.Count(got, "\n") != 1 {
		t.Errorf("--problem othello: %q", got)
	}
	if got := e.read(t, history.Query{Since: time.Now().Add(time.Hour)}); len(got) != 0 {
		t.Errorf("--since in an hour: %q", lines(got))
	}

	// The bucket: each port's latest, with its unit, and othello's board.
	bustest.Wait(t, "the bucket", func() (bool, string) {
		v, err := e.kv.Get(context.Background(), "hall")
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(string(v.Value()), `"board":["--------","--------","---B----","---BB---","---BW---"`), string(v.Value())
	})
	var v jetstream.KeyValueEntry
	bustest.Wait(t, "lobby's latest in the bucket", func() (bool, string) {
		if v, err = e.kv.Get(context.Background(), "lobby"); err != nil {
			return false, err.Error()
		}
		return json.Unmarshal(v.Value(), &rec) == nil && rec["seq"] == 2.0, string(v.Value())
	})
	if rec["unit"] != goscore() || rec["answer"] != "0 0\n" {
		t.Errorf("lobby's value: %s", v.Value())
	}
	if _, err := time.Parse(time.RFC3339, rec["time"].(string)); err != nil {
		t.Errorf("lobby's time: %v", err)
	}
}

// Following: the history's last units, then the live ones, none twice, none missed.
func TestHistoryFollow(t *testing.T) {
	e := start(t)
	for seq := range uint64(3) {
		e.dump(t, "goscore", "lobby", "o1", seq+1, goscore())
	}
	bustest.Wait(t, "the history", func() (bool, string) {
		got := e.read(t, history.Query{})
		return len(got) == 3 && !strings.Contains(lines(got), "unanswered"), lines(got)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan *history.Entry, 16)
	done := make(chan error, 1)
	go func() {
		done <- history.Read(ctx, e.js, bus.DefaultPrefix, history.Query{Last: 2, Follow: true}, func(en *history.Entry) error {
			got <- en
			return nil
		})
	}()
	next := func() uint64 {
		select {
		case en := <-got:
			return en.Seq
		case err := <-done:
			t.Fatalf("Read ended: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("no entry after 30s")
		}
		return 0
	}
	// The replay is the last two results in the order they came, which workers in
	// parallel choose: two of the three, then the live one, and none twice.
	seqs := []uint64{next(), next()}
	e.dump(t, "goscore", "lobby", "o1", 4, goscore())
	seqs = append(seqs, next())
	if seqs[0] == seqs[1] || seqs[0] > 3 || seqs[1] > 3 || seqs[0] == 0 || seqs[1] == 0 || seqs[2] != 4 {
		t.Fatalf("followed %v, want two of 1, 2, 3, then 4", seqs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Read after cancel: %v", err)
	}
}

// A server without the stream: a clear error, not an empty history.
func TestHistoryReadWithoutStream(t *testing.T) {
	nc := bustest.Start(t, bustest.Options{Off: true, JetStream: true}).Daemon()
	js, _ := jetstream.New(nc)
	err := history.Read(context.Background(), js, bus.DefaultPrefix, history.Query{}, func(*history.Entry) error { return nil })
	if !errors.Is(err, history.ErrNoHistory) || !strings.Contains(err.Error(), "SCOREBOARD") {
		t.Fatalf("Read without the stream: %v", err)
	}
}

func TestStateDirLockAndErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	d, err := history.OpenStateDir(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = history.OpenStateDir(path)
	if !errors.Is(err, history.ErrStateDirInUse) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second open: %v; want in use, naming %s", err, path)
	}
	d.Close()
	d, err = history.OpenStateDir(path)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	d.Close()

	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := history.OpenStateDir(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("a regular file: %v", err)
	}
	if _, err := history.OpenStateDir(filepath.Join(file, "sub")); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("under a regular file: %v", err)
	}
}

func TestDefaultStateDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"STATE_DIRECTORY": "/var/lib/scoreboard", "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/var/lib/scoreboard"},
		{map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/scoreboard"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/scoreboard"},
	} {
		if got, err := history.DefaultStateDir(env(c.env)); err != nil || got != c.want {
			t.Errorf("%v: %q, %v; want %q", c.env, got, err, c.want)
		}
	}
}

// A bucket that is gone: the updater's puts are refused, logged, counted and tried
// again, and the units are still answered and kept in the stream.
func TestHistoryBucketRefuses(t *testing.T) {
	e := start(t)
	if err := e.js.DeleteKeyValue(context.Background(), "SCOREBOARD_BOARDS"); err != nil {
		t.Fatal(err)
	}
	results := e.results(t)
	const n = 5
	for seq := range uint64(n) {
		e.dump(t, "goscore", "lobby", "o1", seq+1, goscore())
	}
	await(t, results, n)
	// More refusals than results: the refused are tried again.
	bustest.Wait(t, "refused puts tried again", func() (bool, string) {
		return e.u.Refused() > n, "refused " + strconv.FormatUint(e.u.Refused(), 10) + ", puts " + strconv.FormatUint(e.u.Puts(), 10)
	})
	bustest.Wait(t, "the history", func() (bool, string) {
		got := e.read(t, history.Query{})
		return len(got) == n && !got[n-1].Unanswered, lines(got)
	})
	// The bucket back, the port's latest board is put again without a new result.
	if _, err := history.Setup(context.Background(), e.js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "lobby's latest put again", func() (bool, string) {
		v, err := e.kv.Get(context.Background(), "lobby")
		if err != nil {
			return false, err.Error() + "; refused " + strconv.FormatUint(e.u.Refused(), 10)
		}
		var rec map[string]any
		return json.Unmarshal(v.Value(), &rec) == nil && rec["seq"] == float64(n), string(v.Value())
	})
}

// SetupWait does not wait on what waiting cannot cure: three replicas asked of a
// single server is refused at once, and logged as no retry.
func TestSetupWaitRefusedAtOnce(t *testing.T) {
	e := start(t)
	var logs strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := history.SetupWait(ctx, e.js, history.Config{Prefix: "other", MaxAge: time.Hour, MaxBytes: 1 << 20, Replicas: 3}, zerolog.New(&logs))
	if err == nil || ctx.Err() != nil || strings.Contains(logs.String(), "trying again") {
		t.Errorf("R3 on one server: %v (context %v), logs %q; want its refusal at once", err, ctx.Err(), logs.String())
	}
	t.Logf("R3 on one server: %v", err)
}

// The daemon's own units are looked up in-process first (LookUpFirst): the bucket
// holds the text the daemon gives, for its ports; for a unit it does not know, the
// stream's copy.
func TestHistoryLooksUpLocalFirst(t *testing.T) {
	var asked sync.Map
	e := startWith(t, func(u *history.Updater) {
		u.LookUpFirst(func(port, origin string, seq uint64) []byte {
			asked.Store(port, origin+"#"+strconv.FormatUint(seq, 10))
			if port == "lobby" {
				return []byte("the daemon's copy\n")
			}
			return nil
		})
	})
	results := e.results(t)
	e.dump(t, "goscore", "lobby", "o1", 1, goscore())
	e.dump(t, "goscore", "hall", "o2", 7, goscore())
	await(t, results, 2)
	for port, want := range map[string]string{"lobby": "the daemon's copy\n", "hall": goscore()} {
		bustest.Wait(t, port+"'s value", func() (bool, string) {
			v, err := e.kv.Get(context.Background(), port)
			if err != nil {
				return false, err.Error()
			}
			var rec map[string]any
			return json.Unmarshal(v.Value(), &rec) == nil && rec["unit"] == want, string(v.Value())
		})
	}
	for port, want := range map[string]string{"lobby": "o1#1", "hall": "o2#7"} {
		if got, _ := asked.Load(port); got != want {
			t.Errorf("%s: asked for %v, want %s", port, got, want)
		}
	}
}

// A dump larger than any problem's largest unit is not kept, so that a flood of
// them neither pushes real games out of the store nor costs the daemon what
// nats-server holds of the stream's writes in memory; its error result is kept, and
// so are the units around it.
func TestHistoryKeepsNoDumpLargerThanAnyUnit(t *testing.T) {
	e := start(t)
	results := e.results(t)
	ctx := context.Background()
	// The env's store is 1 MB, too small for the large dump anyway: a store of 64 MB
	// would keep it but for the size limit.
	if _, err := history.Setup(ctx, e.js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	large := strings.Repeat("+", int(history.MaxMsgSize()))
	if len(large) >= bus.MaxPayload {
		t.Fatalf("a dump of %d bytes does not fit the bus (%d)", len(large), bus.MaxPayload)
	}
	e.dump(t, "goscore", "lobby", "o1", 1, goscore())
	e.dump(t, "goscore", "lobby", "o1", 2, large)
	e.dump(t, "goscore", "lobby", "o1", 3, goscore())
	await(t, results, 3)
	s, err := e.js.Stream(ctx, "SCOREBOARD")
	if err != nil {
		t.Fatal(err)
	}
	var dumps, res uint64
	bustest.Wait(t, "the results stored", func() (bool, string) {
		info, err := s.Info(ctx, jetstream.WithSubjectFilter("scoreboard.>"))
		if err != nil {
			return false, err.Error()
		}
		dumps, res = info.State.Subjects["scoreboard.dump.goscore.lobby"], info.State.Subjects["scoreboard.result.goscore.lobby"]
		return res == 3, fmt.Sprintf("%d of 3 results, %d dumps stored", res, dumps)
	})
	// The stream stores in the order the server received: by the last result, the
	// large dump has been refused or kept.
	if dumps != 2 {
		t.Errorf("the stream holds %d dumps of lobby, want 2 (the dump of %d bytes refused)", dumps, len(large))
	}
	last, err := s.GetLastMsgForSubject(ctx, "scoreboard.dump.goscore.lobby")
	if err != nil {
		t.Fatal(err)
	}
	if string(last.Data) != goscore() {
		t.Errorf("the last dump kept is %d bytes, want the board", len(last.Data))
	}
}
