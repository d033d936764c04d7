package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/prune"
	"github.com/goclub/scoreboard/serialio"
)

// historyUnits counts the units of a sample input, as a port reader frames them.
func historyUnits(t *testing.T, problem string, in []byte) int {
	t.Helper()
	p, _ := engine.Lookup(problem)
	fr := p.NewFramer()
	var n int
	for line := range bytes.Lines(in) {
		n += len(fr.Feed(nil, bytes.TrimRight(line, "\r\n")))
	}
	return n + len(fr.End(nil))
}

// historyRecord is a line of `history --json`.
type historyRecord struct {
	Problem, Port, Answer, Error, Unit, Time string
	Seq                                      uint64
	Unanswered                               bool
	Board                                    []string
}

func historyJSON(t *testing.T, url string, args ...string) []historyRecord {
	t.Helper()
	code, out, errs := runLocked(t, "", append([]string{"history", "--json", "--nats-url", url}, args...)...)
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	var recs []historyRecord
	for line := range strings.Lines(out) {
		var r historyRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("history line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func historyJetStream(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// historyCount is how many messages the stream holds on subject.
func historyCount(js jetstream.JetStream, subject string) uint64 {
	s, err := js.Stream(context.Background(), "SCOREBOARD")
	if err != nil {
		return 0
	}
	info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

// The done-when test: run as a process with a state dir and a pty port of each
// problem (a tool's `send` is kept nowhere: the history is the ports'), SIGKILL, a restart on the
// same dir, and every result is in `history --json`, in order, and each port's
// latest in the bucket, read with nats.go's jetstream. Units read while the only
// other worker is frozen are killed unanswered, or answered by the daemon's own
// workers: each shows as one or the other, none is lost.
func TestHistoryKill9(t *testing.T) {
	bin := proctest.Scoreboard(t)
	lobby, hall := runPTY(t), runPTY(t)
	// The other problems' ports: the history keeps what the daemon's ports read.
	desks := map[string]*serialio.PTY{"desk-replay": runPTY(t), "desk-territory": runPTY(t), "desk-capture": runPTY(t)}
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	url := "nats://" + addr
	conf := filepath.Join(t.TempDir(), "scoreboard.toml")
	err := os.WriteFile(conf, fmt.Appendf(nil, `
[nats]
listen = %q
# The worker's credentials: clients without them are tools.
listen_token = "kill9-worker"
[daemon]
state_dir = %q
# A unit the frozen worker holds stays unanswered until the kill (20s: the
# longest a request may wait, and far longer than the test takes to kill).
request_timeout = "20s"
[[port]]
name = "lobby"
device = %q
problem = "goscore"
baud = 115200
[[port]]
name = "hall"
device = %q
problem = "othello"
baud = 115200
[[port]]
name = "desk-replay"
device = %q
problem = "replay"
baud = 115200
[[port]]
name = "desk-territory"
device = %q
problem = "territory"
baud = 115200
[[port]]
name = "desk-capture"
device = %q
problem = "capture"
baud = 115200
`, addr, t.TempDir(), lobby.Path, hall.Path, desks["desk-replay"].Path, desks["desk-territory"].Path, desks["desk-capture"].Path), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	run := proctest.Start(t, bin, "run", "--config", conf)
	runWaitOpened(t, lobby, run)
	runWaitOpened(t, hall, run)
	for _, pt := range desks {
		runWaitOpened(t, pt, run)
	}
	run.WaitOutput("scoreboard running", 60*time.Second)
	js := historyJetStream(t, url)

	// Phase 1: all five problems, every answer seen.
	type port struct {
		name, problem string
		units         int
		want          []byte // the answers, in order
	}
	ports := []*port{{name: "lobby", problem: "goscore"}, {name: "hall", problem: "othello"},
		{name: "desk-replay", problem: "replay"}, {name: "desk-territory", problem: "territory"}, {name: "desk-capture", problem: "capture"}}
	for _, p := range ports {
		in := samples.Read(t, p.problem+".in")
		p.units, p.want = historyUnits(t, p.problem, in), samples.Read(t, p.problem+".out")
		pt := desks[p.name]
		switch p.name {
		case "lobby":
			pt = lobby
		case "hall":
			pt = hall
		}
		if _, err := pt.Master.Write(in); err != nil {
			t.Fatal(err)
		}
		if got := runReadAnswers(t, pt, len(p.want), run); !bytes.Equal(got, p.want) {
			t.Fatalf("%s answers\n got %q\nwant %q", p.name, got, p.want)
		}
	}
	total := 0
	for _, p := range ports {
		total += p.units
	}
	bustest.Wait(t, "phase 1's results in the stream", func() (bool, string) {
		n := historyCount(js, "scoreboard.result.>")
		return n == uint64(total), fmt.Sprintf("%d of %d", n, total)
	})

	// Phase 2: a second worker joins and freezes; of the next units, those it takes
	// stay unanswered. The results that come are counted as they are published.
	var (
		mu       sync.Mutex
		answered = map[uint64]bool{}
	)
	watch, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	if _, err := watch.Subscribe("scoreboard.result.goscore.lobby", func(m *nats.Msg) {
		var r historyRecord
		if json.Unmarshal(m.Data, &r) == nil {
			mu.Lock()
			answered[r.Seq] = true
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	watch.Flush()
	work := proctest.Start(t, bin, "work", "--nats-url", url, "--nats-token", "kill9-worker")
	work.WaitOutput("scoreboard worker running", 60*time.Second)
	work.Freeze()
	const more = 10 // sample files: 2 boards each
	for range more {
		if _, err := lobby.Master.Write(samples.Read(t, "goscore.in")); err != nil {
			t.Fatal(err)
		}
	}
	lobbyUnits := ports[0].units * (more + 1)
	bustest.Wait(t, "phase 2's dumps in the stream", func() (bool, string) {
		n := historyCount(js, "scoreboard.dump.goscore.lobby")
		return n == uint64(lobbyUnits), fmt.Sprintf("%d of %d", n, lobbyUnits)
	})
	// Every result published so far is stored: the stream holds as many as were seen.
	var seen map[uint64]bool
	bustest.Wait(t, "phase 2's results in the stream", func() (bool, string) {
		mu.Lock()
		seen = maps.Clone(answered)
		mu.Unlock()
		n := historyCount(js, "scoreboard.result.goscore.lobby")
		return n == uint64(ports[0].units+len(seen)), fmt.Sprintf("%d stored, %d seen", n, ports[0].units+len(seen))
	})
	// The bucket has each port's latest of phase 1.
	kv, err := js.KeyValue(context.Background(), "SCOREBOARD_BOARDS")
	if err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the latest boards in the bucket", func() (bool, string) {
		for _, p := range ports[1:] {
			v, err := kv.Get(context.Background(), p.name)
			if err != nil {
				return false, p.name + ": " + err.Error()
			}
			var r historyRecord
			if json.Unmarshal(v.Value(), &r); r.Seq != uint64(p.units) {
				return false, fmt.Sprintf("%s: seq %d of %d", p.name, r.Seq, p.units)
			}
		}
		return true, ""
	})

	run.Kill()
	work.Kill()
	if len(seen) == more*ports[0].units {
		t.Logf("the frozen worker took none of the %d units: no unanswered unit this time", len(seen))
	}

	// Restart on the same state dir: everything is there.
	run = proctest.Start(t, bin, "run", "--config", conf)
	run.WaitOutput("scoreboard running", 60*time.Second)
	recs := historyJSON(t, url)
	byPort := map[string][]historyRecord{}
	for _, r := range recs {
		byPort[r.Port] = append(byPort[r.Port], r)
	}
	for _, p := range ports {
		got := byPort[p.name]
		n := p.units
		if p.name == "lobby" {
			n = lobbyUnits
		}
		if len(got) != n {
			t.Errorf("%s: %d units in the history, want %d", p.name, len(got), n)
			continue
		}
		var answers []byte
		for i, r := range got {
			if r.Seq != uint64(i+1) || r.Problem != p.problem || r.Unit == "" || r.Time == "" {
				t.Errorf("%s: record %d: seq %d, problem %q, unit %q, time %q", p.name, i, r.Seq, r.Problem, r.Unit, r.Time)
			}
			if i < p.units {
				answers = append(answers, r.Answer...)
				continue
			}
			// Phase 2: a result seen before the kill is kept; one not seen may have
			// been published at the last moment; else the unit is unanswered.
			if seen[r.Seq] && r.Unanswered {
				t.Errorf("%s #%d: answered before the kill, unanswered in the history", p.name, r.Seq)
			}
			if r.Unanswered == (r.Answer != "") {
				t.Errorf("%s #%d: unanswered %v with answer %q", p.name, r.Seq, r.Unanswered, r.Answer)
			}
		}
		if !bytes.Equal(answers, p.want) {
			t.Errorf("%s: answers in the history\n got %q\nwant %q", p.name, answers, p.want)
		}
	}
	unanswered := 0
	for _, r := range byPort["lobby"] {
		if r.Unanswered {
			unanswered++
		}
	}
	t.Logf("phase 2: %d units answered before the kill, %d unanswered in the history", len(seen), unanswered)

	// The latest boards, read with nats.go's jetstream after the restart.
	js = historyJetStream(t, url)
	kv, err = js.KeyValue(context.Background(), "SCOREBOARD_BOARDS")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports[1:] {
		v, err := kv.Get(context.Background(), p.name)
		if err != nil {
			t.Fatalf("bucket %s: %v", p.name, err)
		}
		var r historyRecord
		if err := json.Unmarshal(v.Value(), &r); err != nil {
			t.Fatal(err)
		}
		last := byPort[p.name][p.units-1]
		if r.Seq != last.Seq || r.Unit != last.Unit || r.Answer != last.Answer {
			t.Errorf("bucket %s: seq %d answer %q; the history's last: seq %d answer %q", p.name, r.Seq, r.Answer, last.Seq, last.Answer)
		}
		if p.problem == "othello" && len(r.Board) != 8 {
			t.Errorf("bucket %s: board %q, want 8 rows", p.name, r.Board)
		}
	}
	if v, err := kv.Get(context.Background(), "lobby"); err != nil {
		t.Errorf("bucket lobby: %v", err)
	} else if !strings.Contains(string(v.Value()), `"unit":"\n`) {
		t.Errorf("bucket lobby: %s", v.Value())
	}
}

// An external nats-server with JetStream: run creates the stream and the bucket there,
// with the limits given; the history and watch's replay read them.
func TestHistoryExternalJetStream(t *testing.T) {
	ns := proctest.StartNATS(t, proctest.NATSOptions{JetStream: true})
	ext, ext2 := runPTY(t), runPTY(t)
	conf := filepath.Join(t.TempDir(), "scoreboard.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[[port]]\nname = \"ext\"\ndevice = %q\nproblem = \"goscore\"\n[[port]]\nname = \"ext2\"\ndevice = %q\nproblem = \"othello\"\n",
		ext.Path, ext2.Path), 0o600); err != nil {
		t.Fatal(err)
	}
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--config", conf, "--nats-url", ns.URL(),
		"--history-replicas", "1", "--history-max-age", "7d", "--history-max-bytes", "64MiB")
	runWaitOpened(t, ext, run)
	runWaitOpened(t, ext2, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	if _, err := ext.Master.Write(in); err != nil {
		t.Fatal(err)
	}
	if got := runReadAnswers(t, ext, len(want), run); !bytes.Equal(got, want) {
		t.Fatalf("ext's answers %q, want %q", got, want)
	}
	bustest.Wait(t, "the history", func() (bool, string) {
		recs := historyJSON(t, ns.URL())
		return len(recs) == 2 && recs[1].Answer == "177 175\n", fmt.Sprint(recs)
	})
	js := historyJetStream(t, ns.URL())
	s, err := js.Stream(context.Background(), "SCOREBOARD")
	if err != nil {
		t.Fatal(err)
	}
	c := s.CachedInfo().Config
	// It takes only the daemon's recorder's copies, with acks; its max_bytes is
	// the daemon's keeper's (4 MiB blocks), not the server's.
	if c.MaxAge != 7*24*time.Hour || c.MaxBytes > 0 || prune.MaxBytes(c) != 64<<20 || c.NoAck || c.Replicas != 1 || c.Storage != jetstream.FileStorage ||
		!slices.Equal(c.Subjects, []string{"scoreboard.repair.>"}) {
		t.Errorf("stream config: max age %v, max bytes %d (the keeper's %d), no ack %v, replicas %d, storage %v, subjects %v",
			c.MaxAge, c.MaxBytes, prune.MaxBytes(c), c.NoAck, c.Replicas, c.Storage, c.Subjects)
	}
	if _, err := js.KeyValue(context.Background(), "SCOREBOARD_BOARDS"); err != nil {
		t.Errorf("bucket: %v", err)
	}
	code, out, errs := runLocked(t, "", "watch", "--nats-url", ns.URL(), "--since", "1h", "--count", "2")
	if code != 0 || !strings.Contains(out, "ext goscore #1 5 3\n") || !strings.Contains(out, "ext goscore #2 177 175\n") {
		t.Errorf("watch --since 1h: exit %d, %q: %s", code, out, errs)
	}

	// The kept Go games as one SGF collection: the two goscore boards as set-up
	// positions, in the order kept; an Othello unit is no Go game and is left out.
	oin, owant := samples.Pair(t, samples.Case{Problem: "othello", File: "othello"})
	if _, err := ext2.Master.Write(oin); err != nil {
		t.Fatal(err)
	}
	if got := runReadAnswers(t, ext2, len(owant), run); !bytes.Equal(got, owant) {
		t.Fatalf("ext2's answers %q, want %q", got, owant)
	}
	code, out, errs = runLocked(t, "", "history", "--sgf", "--nats-url", ns.URL())
	if code != 0 || strings.Count(out, "(;") != 2 || !strings.Contains(out, "FF[4]") || !strings.Contains(out, "SZ[19]") || !strings.Contains(out, "AB[") {
		t.Errorf("history --sgf: exit %d, %d game trees, want 2 set-up boards:\n%s%s", code, strings.Count(out, "(;"), out, errs)
	}
	if code, _, errs := runLocked(t, "", "history", "--sgf", "--port", "ext2", "--nats-url", ns.URL()); code == 0 || !strings.Contains(errs, "no answered replay, goscore or territory unit") {
		t.Errorf("history --sgf of othello units only: exit %d, want an error saying none is a Go game: %s", code, errs)
	}
}

// A server without JetStream: one warning that the history is off, and the rest works.
func TestHistoryServerWithoutJetStream(t *testing.T) {
	ns := proctest.StartNATS(t, proctest.NATSOptions{})
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", ns.URL(), "--log-format", "json")
	run.WaitOutput("scoreboard running", 60*time.Second)
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	if code, out, errs := runLocked(t, string(in), "send", "--nats-url", ns.URL(), "goscore"); code != 0 || out != string(want) {
		t.Fatalf("send: exit %d, %q: %s", code, out, errs)
	}
	if n := strings.Count(run.Output(), "history is off"); n != 1 {
		t.Errorf("%d warnings that the history is off, want 1; output:\n%s", n, run.Output())
	}
	code, _, errs := runLocked(t, "", "history", "--nats-url", ns.URL())
	if code != 1 || !strings.Contains(errs, "no history") {
		t.Errorf("history: exit %d: %s", code, errs)
	}
}

// A state dir that cannot be used stops the daemon at start with an error naming it:
// one in use by another daemon, a regular file. A store that cannot be opened at all
// costs no answer: it is moved aside to <state dir>/damaged-<time>/, the log says
// where, and a fresh history starts.
func TestHistoryStateDirErrors(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--nats-listen", "off", "--port", "-", "--problem", "goscore", "--state-dir", dir}
	if code, _, errs := runLocked(t, "", args...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errs)
	}

	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", "off", "--state-dir", dir)
	run.WaitOutput("scoreboard running", 60*time.Second)
	code, _, errs := runLocked(t, "", args...)
	if code != 1 || !strings.Contains(errs, dir) || !strings.Contains(errs, "in use") {
		t.Errorf("a second daemon on %s: exit %d: %s", dir, code, errs)
	}
	if err := run.Stop(); err != nil {
		t.Fatal(err)
	}

	meta := filepath.Join(dir, "jetstream", "$G", "streams", "SCOREBOARD", "meta.inf")
	if err := os.WriteFile(meta, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := samples.Read(t, "goscore.in")
	code, out, errs := runLocked(t, string(in), args...)
	moved, _ := filepath.Glob(filepath.Join(dir, "damaged-*", "$G", "streams", "SCOREBOARD", "meta.inf"))
	if code != 0 || out != string(samples.Read(t, "goscore.out")) || len(moved) != 1 || !strings.Contains(errs, filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(moved[0]))))) ||
		!strings.Contains(errs, "moved aside") {
		t.Errorf("a corrupt store: exit %d, answers %q, moved %q: %s", code, out, moved, errs)
	}

	file := filepath.Join(t.TempDir(), "state")
	os.WriteFile(file, nil, 0o600)
	code, _, errs = runLocked(t, "", "run", "--nats-listen", "off", "--state-dir", file)
	if code != 1 || !strings.Contains(errs, file) {
		t.Errorf("a regular file as the state dir: exit %d: %s", code, errs)
	}
}

func TestHistoryBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"history", "--since", "yesterday-ish"}, []string{"--since", `"yesterday-ish"`, "RFC 3339", "90m"}},
		{[]string{"history", "--until", "soon"}, []string{"--until", `"soon"`}},
		{[]string{"history", "--last", "-1"}, []string{"--last"}},
		{[]string{"history", "--port", "Hall!"}, []string{"--port"}},
		{[]string{"watch", "--since", "tomorrow"}, []string{"--since", `"tomorrow"`}},
		{[]string{"run", "--history-max-age", "forever"}, []string{"--history-max-age", "90d"}},
		{[]string{"run", "--history-max-bytes", "lots"}, []string{"--history-max-bytes", "1GiB"}},
		{[]string{"run", "--history-replicas", "7"}, []string{"--history-replicas", "1 to 5"}},
	} {
		code, _, errs := runLocked(t, "", c.args...)
		if code == 0 {
			t.Errorf("%v: exit 0", c.args)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: error %q lacks %q", c.args, errs, w)
			}
		}
	}
}
