package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/serialio"
)

// The "done when", end to end: a real 'scoreboard run' serves the page on
// --http; units of every problem read on its port (a pty) show on their tiles, score and picture, within 1 s and without a reload; the daemon is stopped
// and started again and the page recovers by itself; the page requests no host but
// its own; and a 1920x1080 screenshot is not blank.
func TestWebPageEndToEnd(t *testing.T) {
	b := browsertest.New(t)
	// The daemon's state (its history) in a directory of this test's own, kept
	// across the restart.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	natsAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	httpAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	natsURL := "nats://" + natsAddr
	// A port of each problem: the page shows what the daemon's ports read.
	ptys := map[string]*serialio.PTY{}
	var conf strings.Builder
	for _, problem := range engine.Names() {
		ptys["desk-"+problem] = runPTY(t)
		fmt.Fprintf(&conf, "[[port]]\nname = \"desk-%s\"\ndevice = %q\nproblem = %q\n", problem, ptys["desk-"+problem].Path, problem)
	}
	confFile := filepath.Join(t.TempDir(), "scoreboard.toml")
	if err := os.WriteFile(confFile, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() *proctest.Process {
		run := proctest.Start(t, proctest.Scoreboard(t), "run", "--config", confFile, "--nats-listen", natsAddr, "--http", httpAddr)
		for _, pt := range ptys {
			runWaitOpened(t, pt, run)
		}
		run.WaitOutput("serving the scoreboard page", 60*time.Second)
		proctest.WaitTCP(t, httpAddr, 30*time.Second)
		return run
	}
	run := start()

	// The page reads the board bucket the daemon's history fills.
	nc := busConnect(t, natsURL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err = js.KeyValue(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Boards())
	cancel()
	if err != nil {
		t.Fatalf("scoreboard run keeps no board bucket %s (%v): the page reads it",
			bus.Subjects{Prefix: bus.DefaultPrefix}.Boards(), err)
	}

	base := "http://" + httpAddr
	b.Do(t, 30*time.Second, chromedp.Navigate(base+"/"))

	send := func(problem, port, in string) time.Time {
		t.Helper()
		pt := ptys[port]
		if _, err := pt.Master.Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
		if got, want := runReadAnswers(t, pt, len(allAnswers(t, problem, in)), run), allAnswers(t, problem, in); string(got) != want {
			t.Fatalf("%s: answers %q, want %q", port, got, want)
		}
		return time.Now()
	}
	var delays []time.Duration
	for _, problem := range engine.Names() {
		port := "desk-" + problem
		// Two inputs one after the other, so that each one's tile can be seen to change.
		var prev browsertest.Tile
		for i, in := range webInputs(t, problem) {
			want := lastAnswer(t, problem, in)
			sent := send(problem, port, in)
			v := b.WaitTile(t, port, 20*time.Second, fmt.Sprintf("the answer to input %d", i+1), func(v browsertest.Tile) bool {
				return v.Answer == want && v.Applied > prev.Applied
			})
			delay := time.UnixMilli(v.Applied).Sub(sent)
			delays = append(delays, delay)
			if delay > time.Second {
				t.Errorf("%s input %d: shown %v after its answers, want within 1s", problem, i+1, delay)
			}
			if v.Stones == 0 || (i > 0 && v.Pic == prev.Pic) {
				t.Errorf("%s input %d: the picture did not change (%d stones)", problem, i+1, v.Stones)
			}
			prev = v
		}
	}
	t.Logf("delays from the answers to shown: %v", delays)

	// The daemon restarts: the page shows it lost the server, then recovers without a
	// reload, with the kept boards, and follows new units again.
	if err := run.Stop(); err != nil {
		t.Fatalf("run after SIGTERM: %v", err)
	}
	b.WaitConn(t, "reconnecting…")
	run = start()
	b.WaitConn(t, "live")
	before := b.ReadTile(t, "desk-goscore")
	in, _ := busSample(t, "goscore")
	send("goscore", "desk-goscore", in)
	b.WaitTile(t, "desk-goscore", 20*time.Second, "a unit sent after the restart", func(v browsertest.Tile) bool {
		return v.Applied > before.Applied
	})

	hosts, urls := b.Hosts()
	if len(hosts) != 1 || hosts[0] != base {
		t.Errorf("the page requested hosts %v, want only %s; URLs: %v", hosts, base, urls)
	}
	b.Screenshot(t, filepath.Join(t.TempDir(), "page.png"))
}

// webInputs are two inputs of problem for send, each one unit: the sample's first two
// (othello: the first and last positions of the sample, each a game of one Q, since an
// othello unit alone is no input).
func webInputs(t *testing.T, problem string) []string {
	t.Helper()
	file := problem + ".in"
	units := samples.Units(t, problem, file)
	switch problem {
	case "othello":
		// One game of one command each: workers may finish a port's units in any
		// order, so only an input of one unit says which result comes last.
		var ins []string
		for _, u := range [][]byte{units[0], units[len(units)-1]} {
			lines := strings.SplitAfter(strings.TrimPrefix(string(u), "\n"), "\n")
			ins = append(ins, "1\n"+strings.Join(lines[:9], "")+"Q\n") // the board, the side, Q
		}
		return ins
	case "capture":
		return []string{string(units[0]), "3 3\n0 0\n1 1\n0 1\n"}
	}
	return []string{string(units[0]), string(units[1])}
}

// lastAnswer is the answer to the last unit of an input: what its tile shows last.
// allAnswers is every answer to in, as its port writes them.
func allAnswers(t *testing.T, problem, in string) string {
	t.Helper()
	p, _ := engine.Lookup(problem)
	var all []byte
	fr := p.NewFramer()
	for line := range strings.Lines(in) {
		for _, f := range fr.Feed(nil, []byte(strings.TrimRight(line, "\r\n"))) {
			if f.Err != nil {
				t.Fatalf("%s input: %v", problem, f.Err)
			}
			ans, err := p.Solve(f.Unit)
			if err != nil {
				t.Fatalf("%s input: %v", problem, err)
			}
			all = ans.AppendText(all)
		}
	}
	return string(all)
}

func lastAnswer(t *testing.T, problem, in string) string {
	t.Helper()
	p, _ := engine.Lookup(problem)
	var last string
	fr := p.NewFramer()
	for line := range strings.Lines(in) {
		for _, f := range fr.Feed(nil, []byte(strings.TrimRight(line, "\r\n"))) {
			if f.Err != nil {
				t.Fatalf("%s input: %v", problem, f.Err)
			}
			ans, err := p.Solve(f.Unit)
			if err != nil {
				t.Fatalf("%s input: %v", problem, err)
			}
			last = string(ans.AppendText(nil))
		}
	}
	return last
}
