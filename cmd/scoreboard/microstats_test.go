package main

import (
	"encoding/json"
	"github.com/goclub/scoreboard/worker"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/proctest"
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

	const requests, errors = portGood + portBad + sendGood + sendBad, portBad + sendBad
	want := worker.DumpCounts{Taken: requests, Solved: portGood + sendGood, Bad: errors}
	// A worker counts a dump before it publishes the result, and every result has
	// been read: the counts are final. The dumps' instance is one process's second.
	nc := busConnect(t, url)
	var dumps *micro.Stats
	for _, s := range busAllStats(t, nc, 2) {
		if s.Metadata[worker.MetaWorker] != "" {
			dumps = &s
		}
	}
	if dumps == nil {
		t.Fatalf("no dumps' instance answered $SRV.STATS.scoreboard; output:\n%s", p.Output())
	}
	checkDumpStats(t, "$SRV.STATS (nats.go)", *dumps, requests, errors, want)

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
	var all []micro.Stats
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("nats micro stats --json: %v\n%s", err, out)
	}
	found := 0
	for _, s := range all {
		if s.ID == dumps.ID {
			found++
			checkDumpStats(t, "nats micro stats --json", s, requests, errors, want)
		}
	}
	if found != 1 || len(all) != 2 {
		t.Fatalf("nats micro stats --json: %d instances, the dumps' %d times; want 2 and 1:\n%s", len(all), found, out)
	}
	// The table: the dumps' row, with its requests and errors, found by the columns'
	// headers (the CLI's releases differ in columns).
	table := natsCmd("micro", "stats", "scoreboard")
	var head, row []string
	for line := range strings.SplitSeq(table, "\n") {
		cells := strings.Split(line, "│")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if slices.Contains(cells, "Endpoint") {
			head = cells
		}
		if slices.Contains(cells, "dumps") {
			row = cells
		}
	}
	req, errs := slices.Index(head, "Requests"), slices.Index(head, "Errors")
	if req < 0 || errs < 0 || len(row) != len(head) || row[req] != strconv.Itoa(requests) || row[errs] != strconv.Itoa(errors) {
		t.Errorf("nats micro stats: the dumps' row %q under %q, want %d requests and %d errors:\n%s", row, head, requests, errors, table)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("after SIGTERM: %v; output:\n%s", err, p.Output())
	}
}

func checkDumpStats(t *testing.T, how string, s micro.Stats, requests, errors int, want worker.DumpCounts) {
	t.Helper()
	if s.Name != bus.ServiceName || s.Type != micro.StatsResponseType || len(s.Endpoints) != 1 {
		t.Fatalf("%s: the dumps' instance %+v, want one endpoint", how, s)
	}
	e := s.Endpoints[0]
	var got worker.DumpCounts
	if err := json.Unmarshal(e.Data, &got); err != nil {
		t.Fatalf("%s: data %s: %v", how, e.Data, err)
	}
	if e.Name != "dumps" || e.Subject != "scoreboard.dump.*.*" || e.QueueGroup != bus.QueueGroup ||
		e.NumRequests != requests || e.NumErrors != errors || e.ProcessingTime <= 0 || e.AverageProcessingTime <= 0 ||
		!strings.Contains(e.LastError, "replay") || got != want {
		e.Data = nil
		t.Errorf("%s: dumps' endpoint %+v, counts %+v; want %d requests, %d errors, a processing time, counts %+v",
			how, e, got, requests, errors, want)
	}
}
