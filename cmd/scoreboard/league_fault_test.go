package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/result"
)

// leagueClub is a club's daemon as a real process, fed on its stdin port.
type leagueClub struct {
	t       *testing.T
	name    string
	dir     string
	cmd     *exec.Cmd
	in      io.WriteCloser
	mu      sync.Mutex
	answers []string
	want    []string
	next    int // the next unit's k
	errb    proctest.Buffer
	done    chan struct{}
}

func startLeagueClub(t *testing.T, bin, name, hubURL, dir string, firstK int, more ...string) *leagueClub {
	t.Helper()
	return startLeagueClubAs(t, bin, name, "token-"+name, hubURL, dir, firstK, more...)
}

// startLeagueClubAs is startLeagueClub with the hub token given.
func startLeagueClubAs(t *testing.T, bin, name, token, hubURL, dir string, firstK int, more ...string) *leagueClub {
	t.Helper()
	c := &leagueClub{t: t, name: name, dir: dir, next: firstK, done: make(chan struct{})}
	args := []string{"run", "--hub-url", hubURL, "--hub-club", name, "--port-device", "-", "--port-problem", "goscore",
		"--nats-listen", "127.0.0.1:0", "--http-listen", "off", "--daemon-state-dir", dir, "--log-format", "json"}
	c.cmd = exec.Command(bin, append(args, more...)...)
	c.cmd.Env = append(os.Environ(), "SCOREBOARD_HUB_TOKEN="+token)
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stderr = &c.errb
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.answers = append(c.answers, sc.Text()+"\n")
			c.mu.Unlock()
		}
		c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			t.Logf("club %s's log:\n%s", name, lastLines(c.errb.String(), 30))
		}
	})
	return c
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// feed writes n units to the club's port.
func (c *leagueClub) feed(n int) {
	c.t.Helper()
	for range n {
		u, a := faulttest.GoscoreBoard(c.next)
		c.next++
		c.want = append(c.want, a)
		if _, err := io.WriteString(c.in, u); err != nil {
			c.t.Fatalf("club %s: write: %v", c.name, err)
		}
	}
}

// answered waits until the port has every answer, and checks them, in order.
func (c *leagueClub) answered(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		got := append([]string(nil), c.answers...)
		c.mu.Unlock()
		if len(got) >= len(c.want) {
			for i := range c.want {
				if got[i] != c.want[i] {
					c.t.Fatalf("club %s: answer %d is %q, want %q", c.name, i+1, got[i], c.want[i])
				}
			}
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("club %s: the port has %d answers of %d after %v: it waited on the hub?", c.name, len(got), len(c.want), timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *leagueClub) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	c.in.Close() // the end of stdin: the daemon answers what it has, and exits
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// leagueUnits reads the clubs' streams (LEAGUE_<CLUB>) through the hub's tool
// listener: per club, the units' (origin, seq) in its stream's order, from their
// dumps (which a port publishes in its order) and from their results (which workers
// publish as they finish).
func leagueUnits(t *testing.T, nc *nats.Conn) (dumps, results map[string][]string) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dumps, results = map[string][]string{}, map[string][]string{}
	var streams []string
	names := js.StreamNames(ctx)
	for name := range names.Name() {
		if strings.HasPrefix(name, league.Stream+"_") {
			streams = append(streams, name)
		}
	}
	if names.Err() != nil {
		t.Logf("the hub's streams: %v; reading again", names.Err())
		return dumps, results
	}
	for _, name := range streams {
		if !clubUnits(t, ctx, js, name, dumps, results) {
			return map[string][]string{}, map[string][]string{}
		}
	}
	return dumps, results
}

// clubUnits reads a club's stream into dumps and results; false when it could not
// be read to its end (the caller reads again).
func clubUnits(t *testing.T, ctx context.Context, js jetstream.JetStream, name string, dumps, results map[string][]string) bool {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return true
	}
	info, err := s.Info(ctx)
	if err != nil || info.State.Msgs == 0 {
		return true
	}
	// A hub cluster that just lost a node answers nothing until the stream has a
	// leader again: the caller reads again. An ordered consumer recreates itself
	// after a lost leader, by default forever: within a wait's condition that would
	// hang the test (it did, for 6 minutes, after a hub node was killed), so it
	// gives up after 3 attempts.
	// Each read makes a consumer of its own, deleted when it ends: a wait that
	// reads again and again under load piled up hundreds of them until the server
	// refused more ("maximum consumers limit reached"; in a CI load stage).
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{MaxResetAttempts: 3, InactiveThreshold: 10 * time.Second})
	if err != nil {
		t.Logf("%s: %v; reading again", name, err)
		return false
	}
	defer func() {
		if ci := c.CachedInfo(); ci != nil {
			_ = s.DeleteConsumer(context.WithoutCancel(ctx), ci.Name)
		}
	}()
	for {
		batch, err := c.FetchNoWait(1000)
		if err != nil {
			t.Logf("%s: %v; reading again", name, err)
			return false
		}
		n := 0
		for m := range batch.Messages() {
			n++
			club, rest, err := league.ParseSubject(m.Subject())
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(rest, "dump.") {
				h := m.Headers()
				dumps[club] = append(dumps[club], h.Get(bus.HeaderOrigin)+" "+h.Get(bus.HeaderSeq))
				continue
			}
			var r result.Record
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				t.Fatalf("%s %s: %v", name, m.Subject(), err)
			}
			results[club] = append(results[club], r.Origin+" "+strconv.FormatUint(r.Seq, 10))
		}
		if n == 0 {
			return true
		}
	}
}

// tally counts, for a club whose port answered runs[i] units in its i-th life
// (origin), what LEAGUE lost, holds twice, and holds out of the club's order; with
// ordered false (results), the order is not counted.
func tally(got []string, runs []int, ordered bool) (lost, twice, disorder int) {
	seen := map[string]bool{}
	var origins []string
	last := map[string]uint64{}
	for _, g := range got {
		origin, seqs, _ := strings.Cut(g, " ")
		seq, _ := strconv.ParseUint(seqs, 10, 64)
		if seen[g] {
			twice++
			continue
		}
		seen[g] = true
		if _, ok := last[origin]; !ok {
			origins = append(origins, origin)
		}
		if ordered && seq != last[origin]+1 {
			disorder++
		}
		last[origin] = max(last[origin], seq)
	}
	for i, n := range runs {
		have := 0
		if i < len(origins) {
			for k := 1; k <= n; k++ {
				if seen[origins[i]+" "+strconv.Itoa(k)] {
					have++
				}
			}
		}
		lost += max(0, n-have)
	}
	if len(origins) > len(runs) {
		disorder += len(origins) - len(runs)
	}
	return lost, twice, disorder
}

// TestLeagueFault runs a hub and three clubs as real processes, each club's line
// to the hub through a proxy the test cuts, and checks after each fault that every
// unit each club answered is in LEAGUE exactly once, in the club's order, and that
// the clubs' ports answered everything meanwhile:
//   - club north's line is cut while every club plays (a few seconds in CI;
//     SCOREBOARD_LEAGUE_CUT=10m for the 10 minutes);
//   - the hub is killed with SIGKILL while the clubs play, and restarted;
//   - club south's state dir is wiped: its daemon starts afresh, its history stream
//     is a new one (seq 1 again); the hub sees the stream's identity change and
//     sources the new one from its start, keeping what it had of the old one.
func TestLeagueFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	clubs := []string{"north", "south", "east"}
	hubPort, leafPort := proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	var b strings.Builder
	fmt.Fprintf(&b, "[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"off\"\nstate_dir = %q\n", hubPort, leafPort, filepath.Join(root, "hub"))
	for _, c := range clubs {
		fmt.Fprintf(&b, "[[club]]\nname = %q\ntoken = \"token-%s\"\n", c, c)
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	startHub := func() *proctest.Process {
		h := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
		h.WaitOutput("league hub running", 30*time.Second)
		return h
	}
	hub := startHub()
	leafAddr := fmt.Sprintf("127.0.0.1:%d", leafPort)
	proxies := map[string]*linkProxy{}
	club := map[string]*leagueClub{}
	runs := map[string][]int{}
	for i, c := range clubs {
		proxies[c] = newLinkProxy(t, leafAddr)
		club[c] = startLeagueClub(t, bin, c, "nats-leaf://"+proxies[c].addr, filepath.Join(root, c), i*10000)
		runs[c] = []int{0}
	}
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", hubPort), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	play := func(n int) {
		t.Helper()
		for _, c := range clubs {
			club[c].feed(n)
			runs[c][len(runs[c])-1] += n
		}
		for _, c := range clubs {
			club[c].answered(60 * time.Second)
		}
	}
	check := func(scenario string) {
		t.Helper()
		start := time.Now()
		deadline := start.Add(90 * time.Second)
		for {
			dumps, results := leagueUnits(t, nc)
			ok := true
			var report []string
			for _, c := range clubs {
				lost, twice, disorder := tally(dumps[c], runs[c], true)
				rlost, rtwice, _ := tally(results[c], runs[c], false)
				report = append(report, fmt.Sprintf("%s: units lost %d, twice %d, out of order %d; results lost %d, twice %d (%d+%d in LEAGUE, port answered %v)",
					c, lost, twice, disorder, rlost, rtwice, len(dumps[c]), len(results[c]), runs[c]))
				lost += rlost
				twice += rtwice
				if twice > 0 || disorder > 0 {
					t.Fatalf("%s: %s", scenario, strings.Join(report, "; "))
				}
				ok = ok && lost == 0
			}
			if ok {
				t.Logf("%s (complete %v after the clubs answered): %s", scenario, time.Since(start).Round(time.Millisecond), strings.Join(report, "; "))
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s, after 90s: %s", scenario, strings.Join(report, "; "))
			}
			time.Sleep(250 * time.Millisecond)
		}
	}

	play(20)
	check("linked")

	// 1. North's line drops while every club plays.
	// The cut lasts while the clubs go on: a few seconds in CI, as long as
	// $SCOREBOARD_LEAGUE_CUT says in a run by hand (10m: the cut).
	cut := 3 * time.Second
	if v := os.Getenv("SCOREBOARD_LEAGUE_CUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("$SCOREBOARD_LEAGUE_CUT=%q: %v", v, err)
		}
		cut = d
	}
	proxies["north"].down()
	play(30)
	for end := time.Now().Add(cut); time.Now().Before(end); {
		time.Sleep(min(cut, 10*time.Second))
		play(10)
	}
	if _, got := leagueUnits(t, nc); len(got["north"]) > 20 {
		t.Fatalf("north's line is cut, yet LEAGUE has %d of its results (want the 20 from before)", len(got["north"]))
	}
	proxies["north"].up()
	check("north's line cut and back")

	// 2. The hub is killed with SIGKILL while the clubs play, and restarted.
	hub.Kill()
	play(30)
	hub = startHub()
	check("hub killed and restarted")

	// 3. South's state dir is wiped: its daemon starts afresh.
	club["south"].stop()
	if err := os.RemoveAll(club["south"].dir); err != nil {
		t.Fatal(err)
	}
	club["south"] = startLeagueClub(t, bin, "south", "nats-leaf://"+proxies["south"].addr, club["south"].dir, 50000)
	runs["south"] = append(runs["south"], 0)
	play(20)
	check("south's state dir wiped")
	_ = hub
}

// TestLeagueHubReloadClubs: a club not in the hub's file is refused; added to the
// file, a SIGHUP lets it in without a restart of the hub, and its units come into
// LEAGUE; a bad file on a later SIGHUP is logged and the clubs kept.
func TestLeagueHubReloadClubs(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hubPort, leafPort := proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	head := fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"off\"\nstate_dir = %q\n", hubPort, leafPort, filepath.Join(root, "hub"))
	write := func(s string) {
		if err := os.WriteFile(conf, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(head + "[[club]]\nname = \"north\"\ntoken = \"token-north\"\n")
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	leaf := fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)
	west := startLeagueClub(t, bin, "west", leaf, filepath.Join(root, "west"), 0)
	west.feed(10)
	west.answered(60 * time.Second) // the club plays, refused or not
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", hubPort))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	time.Sleep(3 * bus.HubLinkReconnect) // several attempts of west's
	if _, results := leagueUnits(t, nc); len(results["west"]) != 0 {
		t.Fatalf("west is in no [[club]] table, yet LEAGUE has %d of its results", len(results["west"]))
	}
	// Refused at every attempt, the club says so once.
	if lines := linkFailures(west.errb.String()); len(lines) != 1 || !strings.Contains(lines[0], `"cause":"refused"`) {
		t.Errorf("west refused: %d lines of its link's failure, want 1 with cause refused:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	write(head + "[[club]]\nname = \"north\"\ntoken = \"token-north\"\n[[club]]\nname = \"west\"\ntoken = \"token-west\"\n")
	if err := hub.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	hub.WaitOutput("SIGHUP: clubs reloaded", 30*time.Second)
	t0 := time.Now()
	bustest.Wait(t, "west's 10 results in LEAGUE", func() (bool, string) {
		_, results := leagueUnits(t, nc)
		return len(results["west"]) == 10, fmt.Sprintf("%d results of west", len(results["west"]))
	})
	t.Logf("west's units in LEAGUE %v after the SIGHUP was taken", time.Since(t0).Round(time.Millisecond))
	write(head + "[[club]]\nname = \"West\"\n")
	hub.Signal(syscall.SIGHUP)
	hub.WaitOutput("the running clubs are kept", 30*time.Second)
	west.feed(5)
	west.answered(60 * time.Second)
	bustest.Wait(t, "west's 15 results in LEAGUE after the bad file", func() (bool, string) {
		_, results := leagueUnits(t, nc)
		return len(results["west"]) == 15, fmt.Sprintf("%d results of west", len(results["west"]))
	})

	// The hub's tools take --club: history lists west's units, watch follows them.
	hubURL := fmt.Sprintf("nats://127.0.0.1:%d", hubPort)
	out, err := exec.Command(bin, "history", "--club", "west", "--nats-url", hubURL, "--json").Output()
	if err != nil {
		t.Fatalf("history --club west: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 15 || !strings.Contains(lines[14], `"seq":15`) || !strings.Contains(lines[0], `"unit":`) {
		t.Fatalf("history --club west: %d lines, want 15 with their units; first %.200q, last %.200q", len(lines), lines[0], lines[len(lines)-1])
	}
	// render --club draws a unit of west's read from LEAGUE: the same picture as
	// the unit's text drawn from a file.
	var third struct {
		Seq  uint64 `json:"seq"`
		Unit string `json:"unit"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &third); err != nil || third.Seq != 3 || third.Unit == "" {
		t.Fatalf("history --club west's third line: %v, %+v", err, third)
	}
	fromFile := exec.Command(bin, "render", "goscore")
	fromFile.Stdin = strings.NewReader(third.Unit)
	want, err := fromFile.Output()
	if err != nil {
		t.Fatalf("render goscore of west's unit 3: %v", err)
	}
	got, err := exec.Command(bin, "render", "--club", "west", "--port", "stdio", "--seq", "3", "--nats-url", hubURL).Output()
	if err != nil || !bytes.Equal(got, want) || !bytes.HasPrefix(got, []byte("<svg")) {
		t.Fatalf("render --club west --port stdio --seq 3: %v; %d bytes, want the %d of the unit drawn from a file", err, len(got), len(want))
	}
	var fifteenth struct {
		Unit string `json:"unit"`
	}
	if err := json.Unmarshal([]byte(lines[14]), &fifteenth); err != nil {
		t.Fatal(err)
	}
	fromFile = exec.Command(bin, "render", "--sgf", "goscore")
	fromFile.Stdin = strings.NewReader(fifteenth.Unit)
	want, _ = fromFile.Output()
	got, err = exec.Command(bin, "render", "--sgf", "--club", "west", "--port", "stdio", "--nats-url", hubURL).Output()
	if err != nil || !bytes.Equal(got, want) || !bytes.HasPrefix(got, []byte("(;FF[4]")) {
		t.Fatalf("render --sgf --club west --port stdio (the last unit): %v; %q, want %q", err, got, want)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--seq", "99"}, "no unit 99 kept in LEAGUE"},
		{[]string{"othello"}, "no unit kept in LEAGUE"},
	} {
		cmd := exec.Command(bin, append([]string{"render", "--club", "west", "--port", "stdio", "--nats-url", hubURL}, bad.args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), bad.want) {
			t.Errorf("render --club west %v: %v, %q; want an error with %q", bad.args, err, out, bad.want)
		}
	}

	watch := exec.Command(bin, "watch", "--club", "west", "--nats-url", hubURL, "--count", "2")
	var wout strings.Builder
	watch.Stdout = &wout
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // watch follows from when it starts
	west.feed(2)
	west.answered(60 * time.Second)
	wdone := make(chan error, 1)
	go func() { wdone <- watch.Wait() }()
	select {
	case err := <-wdone:
		if err != nil || strings.Count(wout.String(), "\n") != 2 {
			t.Fatalf("watch --club west: %v, output %q", err, wout.String())
		}
	case <-time.After(60 * time.Second):
		watch.Process.Kill()
		t.Fatalf("watch --club west printed %q and did not end after 2 results", wout.String())
	}
}
