package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/web"
)

// jsServer is an embedded nats-server with JetStream that can be stopped and started
// again on the same port and store, as a daemon restart does.
type jsServer struct {
	t    *testing.T
	opts server.Options
	ns   *server.Server
}

func startJS(t *testing.T) *jsServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &jsServer{t: t, opts: server.Options{
		Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	}}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *jsServer) start() {
	s.t.Helper()
	opts := s.opts
	ns, err := server.NewServer(&opts)
	if err != nil {
		s.t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(20 * time.Second) {
		s.t.Fatal("nats-server not ready")
	}
	s.ns = ns
}

func (s *jsServer) stop() {
	if s.ns != nil {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
		s.ns = nil
	}
}

func (s *jsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.opts.Port) }

// boardValue is a value of the board bucket as the history writes it: the result's
// fields, the unit, the time, and othello's board after the command.
func boardValue(t *testing.T, problem, port string, seq uint64, unit []byte, at time.Time) []byte {
	t.Helper()
	p, _ := engine.Lookup(problem)
	ans, err := p.Solve(unit)
	if err != nil {
		t.Fatalf("%s unit %d: %v", problem, seq, err)
	}
	result, _ := json.Marshal(ans)
	v := struct {
		bus.Result
		Unit  string   `json:"unit"`
		Time  string   `json:"time"`
		Board []string `json:"board,omitempty"`
	}{
		Result: bus.Result{Problem: problem, Port: port, Seq: seq, Answer: string(ans.AppendText(nil)), Result: result, Worker: "test"},
		Unit:   string(unit), Time: at.Format(time.RFC3339Nano),
	}
	if a, ok := ans.(engine.OthelloAnswer); ok {
		pos := a.Position()
		v.Board = strings.Split(strings.TrimSuffix(string(pos.AppendBoard(nil)), "\n"), "\n")
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// tileView is what the test reads of a tile in the page.
type tileView struct {
	Seq     uint64 `json:"seq"`
	Applied int64  `json:"applied"`
	Answer  string `json:"answer"`
	Stones  int    `json:"stones"`
	Terr    int    `json:"terr"`
	Pic     string `json:"pic"`
	State   string `json:"state"`
	Problem string `json:"problem"`
}

func readTile(t testing.TB, b *browsertest.Browser, port string) tileView {
	return browsertest.Eval[tileView](t, b, fmt.Sprintf(`(() => {
		const t = document.querySelector('[data-port=%q]');
		if (!t) return {};
		return {seq: +(t.dataset.seq || 0), applied: +(t.dataset.applied || 0),
			answer: t.querySelector('.answer').textContent,
			stones: t.querySelectorAll('.pic svg .stone').length,
			terr: t.querySelectorAll('.pic svg .terr').length,
			pic: t.querySelector('.pic').innerHTML,
			state: t.querySelector('.state').textContent,
			problem: t.querySelector('.problem').textContent};
	})()`, port))
}

// waitTile polls the page until ok holds for the port's tile, failing after timeout
// with what the tile showed last.
func waitTile(t testing.TB, b *browsertest.Browser, port string, timeout time.Duration, what string, ok func(tileView) bool) tileView {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v := readTile(t, b, port)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			v.Pic = fmt.Sprintf("(%d bytes)", len(v.Pic))
			t.Fatalf("tile %s: %s not seen within %v; the tile shows %+v", port, what, timeout, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPageFollowsBoardBucket: the page shows the board bucket's values when it loads,
// follows every put live without a reload (each problem's score and picture change
// within 1 s), shows a port's state, recovers by itself after the NATS server
// restarts, and requests no host but its own.
func TestPageFollowsBoardBucket(t *testing.T) {
	b := browsertest.New(t)
	ns := startJS(t)
	log := zerolog.Nop()
	nc, err := bus.Connect(bus.ConnOptions{URL: ns.url(), Name: "web test page"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wnc, err := bus.Connect(bus.ConnOptions{URL: ns.url(), Name: "web test writer"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer wnc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	js, _ := jetstream.New(wnc)
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: subj.Boards(), Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}

	srv, err := web.New(nc, bus.DefaultPrefix, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	runDone, serveDone := make(chan error, 1), make(chan error, 1)
	go func() { runDone <- srv.Run(ctx) }()
	go func() { serveDone <- web.Serve(ctx, ln, srv.Handler()) }()
	defer func() {
		cancel()
		<-runDone
		<-serveDone
	}()
	base := "http://" + ln.Addr().String()

	units := map[string][][]byte{}
	for _, c := range samples.Cases {
		if _, ok := units[c.Problem]; !ok {
			units[c.Problem] = samples.Units(t, c.Problem, c.File+".in")
		}
	}
	put := func(problem, port string, seq uint64, unit []byte) time.Time {
		t.Helper()
		at := time.Now()
		if _, err := kv.Put(ctx, port, boardValue(t, problem, port, seq, unit, at)); err != nil {
			t.Fatalf("put %s: %v", port, err)
		}
		return at
	}
	// A board kept before the page loads is there when it loads.
	put("goscore", "hall", 7, units["goscore"][0])
	b.Do(t, 30*time.Second, chromedp.Navigate(base+"/"))
	waitTile(t, b, "hall", 10*time.Second, "the board kept before the page loaded", func(v tileView) bool {
		return v.Seq == 7 && v.Stones > 0
	})

	// Every problem: two units one after the other on the same port; each shows its
	// answer and its picture within 1 s, without a reload.
	var delays []time.Duration
	for _, problem := range engine.Names() {
		port := "desk-" + problem
		us := units[problem]
		var prev tileView
		for i, unit := range us[:min(2, len(us))] {
			seq := uint64(i + 1)
			p, _ := engine.Lookup(problem)
			ans, _ := p.Solve(unit)
			want := string(ans.AppendText(nil))
			at := put(problem, port, seq, unit)
			v := waitTile(t, b, port, 10*time.Second, fmt.Sprintf("unit %d", seq), func(v tileView) bool {
				return v.Seq == seq
			})
			delay := time.UnixMilli(v.Applied).Sub(at)
			delays = append(delays, delay)
			if delay > time.Second {
				t.Errorf("%s unit %d: shown %v after the put, want within 1s", problem, seq, delay)
			}
			if v.Answer != want {
				t.Errorf("%s unit %d: answer %q, want %q", problem, seq, v.Answer, want)
			}
			if v.Stones == 0 || !strings.Contains(v.Pic, "<svg") {
				t.Errorf("%s unit %d: no picture (%d stones)", problem, seq, v.Stones)
			}
			if i > 0 && v.Pic == prev.Pic {
				t.Errorf("%s: the picture did not change from unit %d to %d", problem, i, seq)
			}
			if v.Problem != problem {
				t.Errorf("%s: the tile says problem %q", problem, v.Problem)
			}
			prev = v
		}
	}
	t.Logf("delays from put to shown: %v", delays)

	// The port's state, as the daemon publishes it.
	since := time.Date(2026, 11, 23, 19, 42, 0, 0, time.Local)
	st, _ := json.Marshal(bus.PortState{Port: "hall", State: bus.PortUnplugged, Since: since})
	if err := wnc.Publish(subj.PortState("hall"), st); err != nil {
		t.Fatal(err)
	}
	waitTile(t, b, "hall", 10*time.Second, "the unplugged state", func(v tileView) bool {
		return v.State == "unplugged since 19:42"
	})

	// The server restarts: the page's server reconnects and follows the bucket again.
	ns.stop()
	ns.start()
	var seq uint64 = 100
	deadline := time.Now().Add(60 * time.Second)
	for {
		// The writer reconnects too; a put may fail until it has.
		at := time.Now()
		_, err := kv.Put(ctx, "hall", boardValue(t, "replay", "hall", seq, units["replay"][0], at))
		if err == nil {
			v := readTile(t, b, "hall")
			if v.Seq == seq {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the server restarted, the page did not show a new board within 60s (last put error: %v)", err)
		}
		seq++
		time.Sleep(250 * time.Millisecond)
	}

	// No host but the page's own.
	hosts, urls := b.Hosts()
	if len(hosts) != 1 || hosts[0] != base {
		t.Errorf("the page requested hosts %v, want only %s; URLs: %v", hosts, base, urls)
	}

	shot := filepath.Join(t.TempDir(), "page.png")
	png := b.Screenshot(t, shot)
	if out := os.Getenv("SCOREBOARD_SCREENSHOT"); out != "" {
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
