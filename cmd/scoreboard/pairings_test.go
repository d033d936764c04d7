package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
)

// pairingsLoad runs the built binary's `pairings load`; its exit code and output.
func pairingsLoad(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append([]string{"pairings", "load"}, args...)...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("pairings load: %v: %s", err, out)
	}
	return 0, string(out)
}

// unitsPlayers is each unit's players' black and white in `history --json` of
// port, in order.
func unitsPlayers(t *testing.T, url, port string) []string {
	t.Helper()
	code, out, errs := runLocked(t, "", "history", "--json", "--nats-url", url, "--port", port)
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	var got []string
	for line := range strings.Lines(out) {
		var r struct {
			Players *struct {
				Round        int
				Black, White string
			}
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Players == nil {
			got = append(got, "-")
			continue
		}
		got = append(got, fmt.Sprintf("%d %s/%s", r.Players.Round, r.Players.Black, r.Players.White))
	}
	return got
}

// TestPairingsLoadRestart: a real daemon with two pty ports at tables 1 and 2
// loads the OpenGotha file's latest round (tables 3 and 4 listed as without a
// port); the units read then carry their players in the history; loading round
// 1 replaces it and leaves the earlier units' players as they were; after a
// restart on the same state dir round 1 is still there, and the next unit names
// its players. A bad file changes nothing and says its line.
func TestPairingsLoadRestart(t *testing.T) {
	proctest.SkipShort(t, "a daemon process with two ports, restarted")
	bin := proctest.Scoreboard(t)
	lobby, hall := runPTY(t), runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	url := "nats://" + addr
	web := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	conf, state := filepath.Join(t.TempDir(), "scoreboard.toml"), t.TempDir()
	err := os.WriteFile(conf, fmt.Appendf(nil, `
[nats]
listen = %q
[http]
listen = %q
[daemon]
state_dir = %q
[[port]]
name = "lobby"
device = %q
problem = "goscore"
baud = 115200
table = 1
[[port]]
name = "hall"
device = %q
problem = "goscore"
baud = 115200
table = 2
`, addr, web, state, lobby.Path, hall.Path), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	evry, _ := filepath.Abs("../../pairing/testdata/evry.xml")
	start := func() *proctest.Process {
		run := proctest.Start(t, bin, "run", "--config", conf)
		runWaitOpened(t, lobby, run)
		runWaitOpened(t, hall, run)
		run.WaitOutput("scoreboard running", 60*time.Second)
		return run
	}
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	play := func(run *proctest.Process) {
		if _, err := lobby.Master.Write(in); err != nil {
			t.Fatal(err)
		}
		runReadAnswers(t, lobby, len(want), run)
	}
	run := start()

	code, out := pairingsLoad(t, bin, "--nats-url", url, "--daemon-state-dir", state, evry)
	if code != 0 || !strings.Contains(out, "table 1 on lobby: Jürgen Müller-Straße (3k) - 王小明 (1d)") ||
		!strings.Contains(out, "tables without a port (not shown; give a [[port]] its table, or at a hub map it in [tables]): 3, 4") {
		t.Fatalf("load round 2: exit %d:\n%s", code, out)
	}
	play(run)
	n := historyUnits(t, "goscore", in)
	round2 := "2 Jürgen Müller-Straße/王小明"
	waitPlayers := func(want []string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := unitsPlayers(t, url, "lobby")
			if strings.Join(got, ",") == strings.Join(want, ",") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("lobby's units' players:\n got %q\nwant %q", got, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	units := func(n int, s string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	waitPlayers(units(n, round2))
	// watch --json names them too, and the page's game record of the board.
	if code, out, errs := runLocked(t, "", "watch", "--json", "--nats-url", url, "--port", "lobby", "--since", "1h", "--count", strconv.Itoa(n)); code != 0 ||
		strings.Count(out, `"players":{"tournament":"Open d'Évry 2026","round":2,"table":1,`) != n {
		t.Fatalf("watch --json: exit %d: %s%s", code, out, errs)
	}
	if code, out, errs := runLocked(t, "", "history", "--sgf", "--nats-url", url, "--port", "lobby"); code != 0 || strings.Count(out, "PB[Jürgen Müller-Straße]") != n {
		t.Fatalf("history --sgf: exit %d: %s%s", code, out, errs)
	}
	sgf := pageSGF(t, "http://"+web, "lobby")
	for _, p := range []string{"EV[Open d'Évry 2026]", "RO[2]", "PB[Jürgen Müller-Straße]", "BR[3k]", "PW[王小明]", "WR[1d]", "RE[B+F]", "PC[Salle des fêtes, Évry]"} {
		if !strings.Contains(sgf, p) {
			t.Errorf("the page's game record has no %s: %s", p, sgf)
		}
	}

	code, out = pairingsLoad(t, bin, "--nats-url", url, "--daemon-state-dir", state, "--round", "1", evry)
	if code != 0 || !strings.Contains(out, "table 1 on lobby: 王小明 (1d) - Zoé Lefèvre (2d)") {
		t.Fatalf("load round 1: exit %d:\n%s", code, out)
	}
	// A SIGHUP that moves hall to table 3 leaves both ports running; the next
	// load maps table 3 to hall.
	data, _ := os.ReadFile(conf)
	os.WriteFile(conf, []byte(strings.Replace(string(data), "table = 2", "table = 3", 1)), 0o600)
	if err := run.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	run.WaitOutput("reload: ports updated", 30*time.Second)
	if o := run.Output(); !strings.Contains(o, `"changed":[]`) {
		t.Errorf("the reload of a table restarted a port: %s", o[strings.LastIndex(o, "reload: ports updated")-200:])
	}
	if code, out := pairingsLoad(t, bin, "--nats-url", url, "--daemon-state-dir", state, "--round", "1", evry); code != 0 || !strings.Contains(out, "table 3 on hall: ") {
		t.Fatalf("load after the SIGHUP: exit %d:\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("1,1,a,1d,b,2d\n1,1,c,1d,d\n"), 0o600)
	if code, out := pairingsLoad(t, bin, "--nats-url", url, "--daemon-state-dir", state, bad); code == 0 || !strings.Contains(out, "bad.csv:2: 5 columns: want 6 to 8") {
		t.Fatalf("a bad file: exit %d:\n%s", code, out)
	}
	if err := run.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	run = start()
	play(run)
	round1 := "1 王小明/Zoé Lefèvre"
	waitPlayers(append(units(n, round2), units(n, round1)...))
	t.Logf("%d units a round, named by the round loaded when each was read", n)
}

// pageSGF is the game record the page serves for port's board.
func pageSGF(t *testing.T, base, port string) string {
	t.Helper()
	var link string
	bustest.Wait(t, "the board's game record on the page", func() (bool, string) {
		resp, err := http.Get(base + "/api/boards")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var boards []struct{ Port, SGF string }
		_ = json.NewDecoder(resp.Body).Decode(&boards)
		for _, b := range boards {
			if b.Port == port {
				link = b.SGF
			}
		}
		return link != "", fmt.Sprintf("%d boards", len(boards))
	})
	resp, err := http.Get(base + link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}
