package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/promtest"
	"github.com/goclub/scoreboard/league"
)

// hostileFlood is how many results the hostile club floods its stream with, in
// hostileFloodFor.
const (
	hostileFlood    = 100_000
	hostileFloodFor = 10 * time.Second
)

// validBoard says what is wrong with a board the hub's page shows, or "": it must
// be a result of a known problem, its answer no longer than the problem's longest,
// its text valid UTF-8 (the JSON decoder makes invalid bytes U+FFFD), on one of the
// ports that is expected.
func validBoard(ports ...string) func(pageEvent) string {
	return func(b pageEvent) string {
		if !strings.Contains(strings.Join(ports, " ")+" ", b.Port+" ") {
			return "a port no club played: " + b.Port
		}
		if b.Problem == "" && b.Seq == 0 {
			return "" // a port's link state, before its first board
		}
		p, ok := engine.Lookup(b.Problem)
		switch {
		case !ok:
			return "unknown problem " + b.Problem
		case len(b.Answer) > p.Limits().MaxAnswer:
			return fmt.Sprintf("an answer of %d bytes", len(b.Answer))
		case strings.ContainsRune(b.Answer+b.Error, '\uFFFD'):
			return "invalid UTF-8"
		}
		return ""
	}
}

// TestLeagueHostileClubFault: a club that is a nats-server of its own (no
// scoreboard run), whose history stream the test writes directly, carries
// malformed JSON, results of unknown problems and ports, results whose subject is
// not theirs, invalid UTF-8, over-large results and dumps, and a flood of 100,000
// results in 10 s, while another club plays. Throughout: the hub keeps running;
// the other club's units all reach its stream at the hub and the page, its p99
// from result to the page's event stays under 1 s during the flood; the hub's peak
// RSS stays under 256 MiB; the page shows nothing but valid results of known
// problems; the junk is counted per club and reason in /metrics and sampled in the
// log; a message larger than any unit is not stored.
func TestLeagueHostileClubFault(t *testing.T) {
	proctest.SkipShort(t, "a hub, a hostile club's nats-server and a flood of 100,000 results")
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	// The impostor's clubs beside: north and south with keys, east and west with tokens.
	k := newAuthKeys(t)
	hub := startHubProcessTables(t, bin, root, fmt.Sprintf("[[club]]\nname = \"north\"\nnkey = %q\n[[club]]\nname = \"south\"\nnkey = %q\n", pub(k.north), pub(k.south)),
		"good", "evil", "east", "west")
	page, hubPort, leafPort := hub.page, hub.hubPort, hub.leafPort
	leaf := fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)

	// The other club: an embedded server with its history, as a daemon's, whose
	// ports' units and results the test publishes.
	nop := zerolog.Nop()
	b := bustest.Start(t, bustest.Options{Off: true, StoreDir: filepath.Join(root, "good"), Log: &nop,
		Hub: &bus.HubLink{URL: leaf, Club: "good", Token: "token-good"}})
	good := &benchClub{name: "good", srv: b.Server, nc: b.Daemon(), origin: map[string]string{}, seq: map[string]uint64{}}
	gjs, _ := jetstream.New(good.nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := history.Setup(ctx, gjs, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 1 << 28}); err != nil {
		t.Fatal(err)
	}
	bustest.CaptureHistory(t, good.nc, bus.DefaultPrefix) // the club's ports

	// The hostile club: a plain nats-server, JetStream domain "evil", joined to the
	// hub as a leaf with evil's token, taking messages of up to 4 MB.
	evilConf := filepath.Join(root, "evil.conf")
	if err := os.WriteFile(evilConf, []byte(fmt.Sprintf("max_payload: 4MB\njetstream { store_dir: %q, domain: evil }\nleafnodes { remotes: [ { url: %q } ] }\n",
		filepath.Join(root, "evil"), fmt.Sprintf("nats-leaf://evil:token-evil@127.0.0.1:%d", leafPort))), 0o600); err != nil {
		t.Fatal(err)
	}
	evilSrv := proctest.StartNATS(t, proctest.NATSOptions{Config: evilConf, Name: "evil-club"})
	enc := busConnect(t, evilSrv.URL())
	ejs, _ := jetstream.New(enc, jetstream.WithPublishAsyncMaxPending(4096))
	if _, err := ejs.CreateStream(ctx, jetstream.StreamConfig{Name: "SCOREBOARD", Subjects: []string{"scoreboard.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}

	events := followPage(t, page, validBoard("good.p0", "good.p1", "evil.ok", "evil.flood"))
	events.coverNewer()
	hubNC := busConnect(t, fmt.Sprintf("nats://127.0.0.1:%d", hubPort))
	hjs, _ := jetstream.New(hubNC)
	trace := traceResults(t, ctx, hjs, "good")
	sched := traceSched(t, hub.PID(), os.Getpid())
	held := func(club string) uint64 {
		s, err := hjs.Stream(ctx, league.ClubStream(club))
		if err != nil {
			return 0
		}
		info, err := s.Info(ctx)
		if err != nil {
			return 0
		}
		return info.State.Msgs
	}

	// The good club plays throughout: each of its two ports a unit every 100 ms.
	playing, stopPlaying := context.WithCancel(ctx)
	var played sync.WaitGroup
	played.Add(1)
	go func() {
		defer played.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if playing.Err() != nil {
				return
			}
			for _, p := range []string{"p0", "p1"} {
				if err := good.unit(p, events.sent); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	// One valid result of evil: its source works.
	evilPublish(t, ctx, ejs, "scoreboard.result.goscore.ok", []byte(`{"problem":"goscore","port":"ok","seq":1,"answer":"1 1\n","solve_us":1}`), 1)
	bustest.Wait(t, "both clubs' first boards on the page", func() (bool, string) {
		g, e := events.lastSeq("good.p0"), events.lastSeq("evil.ok")
		return g > 0 && e == 1, fmt.Sprintf("good.p0 at %d, evil.ok at %d", g, e)
	})

	// The junk, then the flood, measured from the junk's start to the hub holding
	// all of it.
	events.measure(true)
	measured := time.Now()
	// An impostor tries every row of the authentication matrix throughout.
	stopImpostor := make(chan struct{})
	im := startImpostor(fmt.Sprintf("127.0.0.1:%d", leafPort), fmt.Sprintf("127.0.0.1:%d", hubPort), nil, authMatrix(k), stopImpostor)
	long := strings.Repeat("9", 100<<10)
	junk := []struct {
		subject, data string
		n             int
		reason        string
	}{
		{"scoreboard.result.goscore.t1", `{"problem":"goscore","port":"t1","seq":`, 200, "malformed"},
		{"scoreboard.result.chess.t1", `{"problem":"chess","port":"t1","seq":1,"answer":"e4\n"}`, 200, "unknown_problem"},
		{"scoreboard.dump.chess.t1", "e2e4", 100, "unknown_problem"},
		{"scoreboard.result.goscore.T1", `{"problem":"goscore","port":"T1","seq":1,"answer":"1 1\n"}`, 200, "bad_port"},
		{"scoreboard.result.goscore.t2", `{"problem":"goscore","port":"ok","seq":2,"answer":"1 1\n"}`, 100, "bad_subject"},
		{"scoreboard.result.goscore.t3", "{\"problem\":\"goscore\",\"port\":\"t3\",\"seq\":1,\"answer\":\"\xff\xfe\\n\"}", 200, "invalid_utf8"},
		{"scoreboard.dump.goscore.t3", "19\n\xff\xfe", 100, "invalid_utf8"},
		{"scoreboard.result.goscore.t4", `{"problem":"goscore","port":"t4","seq":1,"answer":"` + long + `"}`, 50, "too_large"},
	}
	want := map[string]float64{}
	var sentEvil uint64 = 1
	for _, j := range junk {
		evilPublish(t, ctx, ejs, j.subject, []byte(j.data), j.n)
		want[j.reason] += float64(j.n)
		sentEvil += uint64(j.n)
	}
	floodStart := time.Now()
	const batch = 100
	floodAt := make([]time.Time, 0, hostileFlood/batch) // when each batch's publishing began
	for i := range hostileFlood / batch {
		floodAt = append(floodAt, time.Now())
		for k := range batch {
			seq := i*batch + k + 1
			evilSend(t, ctx, ejs, "scoreboard.result.goscore.flood", fmt.Appendf(nil, `{"problem":"goscore","port":"flood","seq":%d,"answer":"%d %d\n","solve_us":1}`, seq, seq%361, seq%361))
		}
		// The flood's pace: 100 results each 1/1000 of hostileFloodFor.
		time.Sleep(time.Until(floodStart.Add(time.Duration(i+1) * hostileFloodFor / (hostileFlood / batch))))
	}
	select {
	case <-ejs.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatal("the flood's publishes were not all acknowledged")
	}
	floodTook := time.Since(floodStart)
	sentEvil += hostileFlood
	bustest.Wait(t, "the hub holding every message of evil's", func() (bool, string) {
		n := held("evil")
		return n == sentEvil, fmt.Sprintf("%d of %d", n, sentEvil)
	})
	caughtUp := time.Since(floodStart)
	events.measure(false)
	measuredFor := time.Since(measured)
	close(stopImpostor)
	im.check(t, hub.Output, len(authMatrix(k)))

	// Messages larger than any unit (history.MaxMsgSize, under the hub's largest
	// message, 2 MiB): not stored (and evil's own source stops at them).
	big := strings.Repeat("x", int(history.MaxMsgSize())+64<<10)
	evilPublish(t, ctx, ejs, "scoreboard.dump.capture.big", []byte(big), 3)
	hub.WaitOutput("maximum payload exceeded", 60*time.Second)

	// The good club's last units, after everything: all of them at the hub and on
	// the page.
	stopPlaying()
	played.Wait()
	gUnits := good.seq["p0"] + good.seq["p1"]
	bustest.Wait(t, "every unit of good's in its stream at the hub and its last boards on the page", func() (bool, string) {
		n := held("good")
		p0, p1 := events.lastSeq("good.p0"), events.lastSeq("good.p1")
		return n == 2*gUnits && p0 == good.seq["p0"] && p1 == good.seq["p1"],
			fmt.Sprintf("the hub holds %d of good's %d messages; the page shows p0 #%d of %d, p1 #%d of %d", n, 2*gUnits, p0, good.seq["p0"], p1, good.seq["p1"])
	})
	if n := held("evil"); n != sentEvil {
		t.Fatalf("the hub holds %d messages of evil's, want %d: the over-large ones refused", n, sentEvil)
	}

	hostileTools(t, ctx, bin, fmt.Sprintf("nats://127.0.0.1:%d", hubPort))

	// The junk in /metrics, per club and reason. A follower set up again reads
	// the last message of each subject again: a few more, never fewer.
	fams, body := scrapeUntil(t, page+"/metrics", func(f map[string]*dto.MetricFamily) bool {
		for reason, n := range want {
			if v, _ := promtest.Value(f, "scoreboard_league_junk_total", map[string]string{"club": "evil", "reason": reason}); v < n {
				return false
			}
		}
		return true
	})
	var counted []string
	var total float64
	for reason, n := range want {
		v, _ := promtest.Value(fams, "scoreboard_league_junk_total", map[string]string{"club": "evil", "reason": reason})
		counted = append(counted, fmt.Sprintf("%s %v of %v", reason, v, n))
		total += v
		if v < n || v > n+10 {
			t.Errorf("scoreboard_league_junk_total{club=evil,reason=%s} = %v, want %v", reason, v, n)
		}
	}
	if v, ok := promtest.Value(fams, "scoreboard_league_junk_total", map[string]string{"club": "good"}); ok {
		t.Errorf("good's junk counted: %v", v)
	}
	promtest.Promtool(t, body, "check", "metrics")
	logged := strings.Count(hub.Output(), "holds what is no valid result")
	if logged == 0 || logged > 100 {
		t.Errorf("the hub logged %d junk lines for %v junk messages: want them sampled, a few", logged, total)
	}

	// The page shows nothing else than valid results of known problems.
	if bad := events.refused(); len(bad) > 0 {
		t.Errorf("the page showed %d boards that are not valid results: %v", len(bad), bad)
	}
	var boards []pageEvent
	getJSON(t, page+"/api/boards", &boards)
	check := validBoard("good.p0", "good.p1", "evil.ok", "evil.flood")
	for _, bd := range boards {
		if why := check(bd); why != "" {
			t.Errorf("/api/boards: %s: %s", bd.Port, why)
		}
	}

	select {
	case <-hub.Done():
		t.Fatalf("the hub exited: %v\n%s", hub.Err(), lastLines(hub.Output(), 20))
	default:
	}
	_, rss, hwm := procStat(t, hub.PID())
	d, pending := events.take()
	t.Logf("flood: %d results in %v, at the hub %v after its start; junk counted: %s (%d log lines)",
		hostileFlood, floodTook.Round(time.Millisecond), caughtUp.Round(time.Millisecond), strings.Join(counted, ", "), logged)
	t.Logf("good's result -> page event during the flood: p50 %v, p99 %v, max %v (%d events, %d not seen: a port's latest only)",
		percentile(d, 0.5).Round(time.Millisecond), percentile(d, 0.99).Round(time.Millisecond), percentile(d, 1).Round(time.Millisecond), len(d), pending)
	t.Logf("hub: RSS %d MiB, peak %d MiB", rss/1024, hwm/1024)
	// The bound is on the hub, not on the machine: the results a starved machine
	// held up with the whole hub are not counted (judgeDelays).
	judgeDelays(t, ctx, delayJudge{events: events, sched: sched, trace: trace, hubPID: hub.PID(),
		from: measured, to: measured.Add(measuredFor), bound: time.Second,
		floodPort: "evil.flood", flooded: func(seq uint64) (time.Time, bool) {
			if seq < 1 || seq > hostileFlood {
				return time.Time{}, false
			}
			return floodAt[(seq-1)/batch], true
		},
		steps: func(ctx context.Context) {
			if err := trace.stored(ctx, gjs, bus.Subjects{Prefix: bus.DefaultPrefix}.Stream(), bus.DefaultPrefix+".result.>", func(x *traceTimes) *time.Time { return &x.history }); err != nil {
				t.Logf("good's history: %v", err)
			}
			if err := trace.stored(ctx, hjs, league.ClubStream("good"), league.SubjectPrefix+".good.result.>", func(x *traceTimes) *time.Time { return &x.stream }); err != nil {
				t.Logf("good's stream at the hub: %v", err)
			}
		}})
	if hwm >= 256<<10 {
		t.Errorf("the hub's peak RSS: %d MiB, want under 256", hwm/1024)
	}
}

// evilPublish publishes data on subject n times into the hostile club's stream,
// each acknowledged.
func evilPublish(t *testing.T, ctx context.Context, js jetstream.JetStream, subject string, data []byte, n int) {
	t.Helper()
	for range n {
		evilSend(t, ctx, js, subject, data)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatalf("%s: not acknowledged", subject)
	}
}

// evilSend publishes data on subject into the hostile club's stream, waiting for
// the acknowledgements pending when there are too many (a busy machine).
func evilSend(t *testing.T, ctx context.Context, js jetstream.JetStream, subject string, data []byte) {
	t.Helper()
	for {
		_, err := js.PublishAsync(subject, data)
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			if err != nil {
				t.Fatalf("%s: %v", subject, err)
			}
			return
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-ctx.Done():
			t.Fatalf("%s: not acknowledged", subject)
		}
	}
}

// hostileTools runs the hub's tools on the junk: history --club reads each junk
// port of evil's (skipping what is no result), render --club says it has no unit,
// and good's units read as ever.
func hostileTools(t *testing.T, ctx context.Context, bin, hubURL string) {
	t.Helper()
	for _, args := range [][]string{
		{"history", "--club", "evil", "--port", "t1", "--json"},
		{"history", "--club", "evil", "--port", "t3", "--json"},
		{"history", "--club", "evil", "--port", "t4", "--json"},
		{"history", "--club", "evil", "--last", "5"},
		{"history", "--club", "good", "--port", "p0", "--last", "3"},
	} {
		tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
		out, err := exec.CommandContext(tctx, bin, append(args, "--nats-url", hubURL)...).CombinedOutput()
		tcancel()
		if err != nil || strings.Contains(string(out), "panic") {
			t.Errorf("%v: %v\n%.2000s", args, err, out)
		}
		if args[2] == "good" && strings.Count(string(out), "\n") != 3 {
			t.Errorf("%v: %d lines, want good's last 3 units:\n%s", args, strings.Count(string(out), "\n"), out)
		}
	}
	if out, err := exec.Command(bin, "render", "--club", "evil", "--port", "flood", "--nats-url", hubURL).CombinedOutput(); err == nil || strings.Contains(string(out), "panic") {
		t.Errorf("render --club evil --port flood (results without units): %v, %.500q; want a plain error", err, out)
	}
}
