package main

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/worker"
	"github.com/nats-io/nats.go/micro"
)

// Issue 13: `nats micro stats scoreboard` shows every dump solved, with its errors
// and processing time. Dumps come from a daemon's real port (a pty) and from
// 'scoreboard send'; the official NATS CLI and a plain $SRV.STATS request read them.
func TestRunDumpsInMicroStats(t *testing.T) {
	pt := runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	url := "nats://" + addr
	p := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr, "--history=false", "--http", "off",
		"--port", pt.Path, "--port-name", "lobby", "--problem", "replay", "--error-line")
	runWaitOpened(t, pt, p)

	// The port: 6 good units, then 1 that frames but does not solve (2 is below the
	// smallest board), answered with an error line.
	const portGood, portBad = 6, 1
	unit, bad := "5 1\nB(0,0)\n", "2 1\nB(9,9)\n"
	answer := runSolve1(t, "replay", unit+"0 0\n")
	if _, err := pt.Master.Write([]byte(strings.Repeat(unit, portGood))); err != nil {
		t.Fatal(err)
	}
	runReadAnswers(t, pt, portGood*len(answer), p)
	if _, err := pt.Master.Write([]byte(bad)); err != nil {
		t.Fatal(err)
	}
	runReadAnswers(t, pt, len("error: replay: line "), p)

	// send: 4 good units and 2 bad ones; it exits 1 for the bad ones.
	const sendGood, sendBad = 4, 2
	in := strings.Repeat(unit, sendGood) + strings.Repeat(bad, sendBad) + "0 0\n"
	if code, out, errs := runCmd(t, in, "send", "--nats-url", url, "replay"); code != 1 || strings.Count(out, answer) != sendGood {
		t.Fatalf("send: exit %d, %d answers, want 1 and %d:\n%s\n%s", code, strings.Count(out, answer), sendGood, out, errs)
	}

	const errors = portBad + sendBad
	want := worker.DumpCounts{Taken: portGood + portBad + sendGood + sendBad, Solved: portGood + sendGood, Bad: errors}
	// A worker counts a dump before it publishes the result, and every result has
	// been read: the counts are final. The process is one instance of the service.
	nc := busConnect(t, url)
	all := busStats(t, nc, 1)
	if len(all) != 1 {
		t.Fatalf("%d instances answered $SRV.STATS.scoreboard, want 1; output:\n%s", len(all), p.Output())
	}
	var id string
	for id = range all {
		checkDumpStats(t, "$SRV.STATS (nats.go)", all[id], want)
	}

	// The same through the NATS CLI, as a user types it; its JSON is the list of the
	// instances' stats, which it validates against the micro schema first.
	cli := proctest.NATSCLI(t)
	home := t.TempDir()
	natsCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--server", url, "--timeout", "5s"}, args...)...)
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := natsCmd("micro", "stats", "scoreboard", "--json")
	var stats []micro.Stats
	if err := json.Unmarshal([]byte(out), &stats); err != nil {
		t.Fatalf("nats micro stats --json: %v\n%s", err, out)
	}
	if len(stats) != 1 || stats[0].ID != id {
		t.Fatalf("nats micro stats --json: %d instances, want 1 (%s):\n%s", len(stats), id, out)
	}
	checkDumpStats(t, "nats micro stats --json", stats[0], want)
	// `nats micro ls` lists the daemon once.
	out = natsCmd("micro", "ls", "--json")
	var infos []micro.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("nats micro ls --json: %v\n%s", err, out)
	}
	if len(infos) != 1 || infos[0].ID != id {
		t.Errorf("nats micro ls --json: %d instances, want the daemon's %s once:\n%s", len(infos), id, out)
	}
	if table := natsCmd("micro", "ls"); strings.Count(table, id) != 1 {
		t.Errorf("nats micro ls: want the daemon %s on one row:\n%s", id, table)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("after SIGTERM: %v; output:\n%s", err, p.Output())
	}
}

// checkDumpStats checks the replay endpoint's dumps in an instance's stats.
func checkDumpStats(t *testing.T, how string, s micro.Stats, want worker.DumpCounts) {
	t.Helper()
	i := slices.IndexFunc(s.Endpoints, func(e *micro.EndpointStats) bool { return e.Name == "replay" })
	if s.Name != bus.ServiceName || s.Type != micro.StatsResponseType || i < 0 {
		t.Fatalf("%s: the instance %+v, want the replay endpoint", how, s)
	}
	e := s.Endpoints[i]
	var data worker.EndpointData
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatalf("%s: data %s: %v", how, e.Data, err)
	}
	d := data.Dumps
	if e.Subject != "scoreboard.solve.replay" || e.QueueGroup != bus.QueueGroup ||
		d.ProcessingTime <= 0 || !strings.Contains(d.LastError, "replay") || d.DumpCounts != want {
		t.Errorf("%s: replay's endpoint %s %s, data %s; want its dumps %+v, a processing time and a last error",
			how, e.Name, e.Subject, e.Data, want)
	}
}
