package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/serialio"
)

// unitReload runs the ExecReload= command of configs/scoreboard.service for the
// process pid, as systemd does on `systemctl reload scoreboard`.
func unitReload(t *testing.T, pid int) {
	t.Helper()
	unit, err := os.ReadFile("../../configs/scoreboard.service")
	if err != nil {
		t.Fatal(err)
	}
	var argv []string
	for line := range strings.SplitSeq(string(unit), "\n") {
		if cmd, ok := strings.CutPrefix(line, "ExecReload="); ok {
			argv = strings.Fields(strings.ReplaceAll(cmd, "$MAINPID", strconv.Itoa(pid)))
		}
	}
	if len(argv) == 0 {
		t.Fatal("configs/scoreboard.service has no ExecReload= line")
	}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("ExecReload=%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// reloadPort is a [[port]] table of a reload test's config file.
func reloadPort(name string, pt *serialio.PTY, problem string, errorLine bool) string {
	return fmt.Sprintf("\n[[port]]\nname = %q\ndevice = %q\nproblem = %q\nbaud = 115200\nerror_line = %v\n",
		name, pt.Path, problem, errorLine)
}

// SIGHUP reads run's --config again, with real pseudo-terminals: the port that did
// not change keeps its device open and its sequence (its next unit is seq 2), the
// removed port's device is closed, the added port answers, the changed one is
// restarted with its new setting; the log says what changed. Then a bad file: every
// error logged, the running ports kept.
func TestRunReloadOnSIGHUP(t *testing.T) {
	lobby, hall, den, annex := runPTY(t), runPTY(t), runPTY(t), runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	conf := filepath.Join(t.TempDir(), "scoreboard.toml")
	head := fmt.Sprintf("[nats]\nlisten = %q\n\n[http]\nlisten = \"off\"\n\n[history]\nenabled = false\n", addr)
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(head + reloadPort("lobby", lobby, "goscore", false) + reloadPort("hall", hall, "goscore", false) +
		reloadPort("den", den, "replay", false))
	p := proctest.Start(t, proctest.Scoreboard(t), "run", "--config", conf)
	for _, pt := range []*serialio.PTY{lobby, hall, den} {
		runWaitOpened(t, pt, p)
	}
	p.WaitOutput("scoreboard running", 30*time.Second)

	// The lobby's results, for their seq.
	nc := busConnect(t, "nats://"+addr)
	results := make(chan *nats.Msg, 16)
	if _, err := nc.ChanSubscribe("scoreboard.result.goscore.lobby", results); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	lobbyUnit := func(k int, wantSeq uint64) {
		t.Helper()
		u, a := faulttest.GoscoreBoard(k)
		if _, err := lobby.Master.Write([]byte(u)); err != nil {
			t.Fatal(err)
		}
		if got := runReadAnswers(t, lobby, len(a), p); string(got) != a {
			t.Fatalf("lobby answer %q, want %q", got, a)
		}
		select {
		case m := <-results:
			var r struct{ Seq uint64 }
			if err := json.Unmarshal(m.Data, &r); err != nil || r.Seq != wantSeq {
				t.Fatalf("lobby result seq %d (%v), want %d: %s", r.Seq, err, wantSeq, m.Data)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("no lobby result; output:\n%s", p.Output())
		}
	}
	lobbyUnit(1, 1)

	// hall removed, annex added, den changed (it now writes error lines).
	write(head + reloadPort("lobby", lobby, "goscore", false) + reloadPort("den", den, "replay", true) +
		reloadPort("annex", annex, "replay", false))
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.WaitOutput("reload: ports updated", 60*time.Second)
	lines := logLines(p.Output(), "reload: ports updated")
	if len(lines) != 1 {
		t.Fatalf("%d reload lines, want 1; output:\n%s", len(lines), p.Output())
	}
	for key, want := range map[string]string{"added": "[annex]", "removed": "[hall]", "changed": "[den]", "unchanged": "[lobby]"} {
		if got := fmt.Sprint(lines[0][key]); got != want {
			t.Errorf("reload line: %s = %s, want %s", key, got, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := hall.WaitClosed(ctx); err != nil {
		t.Errorf("the removed port: %v", err)
	}
	runWaitOpened(t, annex, p)
	unit := "5 1\nB(0,0)\n"
	answer := runSolve1(t, "replay", unit+"0 0\n")
	if _, err := annex.Master.Write([]byte(unit)); err != nil {
		t.Fatal(err)
	}
	if got := runReadAnswers(t, annex, len(answer), p); string(got) != answer {
		t.Fatalf("annex answer %q, want %q", got, answer)
	}
	// The changed port runs its new settings: a bad unit gets its error line.
	runWaitOpened(t, den, p)
	if _, err := den.Master.Write([]byte("2 1\nB(9,9)\n")); err != nil {
		t.Fatal(err)
	}
	if got := runReadAnswers(t, den, len("error: "), p); string(got) != "error: " {
		t.Fatalf("den after the reload wrote %q, want an error line", got)
	}
	// The unchanged port: the same device, the same sequence.
	lobbyUnit(2, 2)

	// Settings the ports do not own, the NATS listener among them: the log says
	// each needs a restart, the ports are all unchanged (and the bus stays where
	// it was: nc goes on below).
	moved := strings.Replace(head, addr, "127.0.0.1:"+strconv.Itoa(proctest.FreePort(t)), 1)
	write(moved + "\n[daemon]\nrequest_timeout = \"3s\"\n" + reloadPort("lobby", lobby, "goscore", false) +
		reloadPort("den", den, "replay", true) + reloadPort("annex", annex, "replay", false))
	// This time as systemd does it: the unit's ExecReload= line.
	unitReload(t, p.PID())
	const restart = "reload: changed, but applied only at the next restart"
	p.WaitOutput(restart, 60*time.Second)
	waitLines(t, p, restart, 2)
	if l := logLines(p.Output(), restart); len(l) != 2 || l[0]["setting"] != "nats.listen" || l[1]["setting"] != "daemon.request_timeout" {
		t.Errorf("restart lines %v, want one for nats.listen, one for daemon.request_timeout", l)
	}
	waitLines(t, p, "reload: ports updated", 2)
	if l := logLines(p.Output(), "reload: ports updated"); fmt.Sprint(l[1]["unchanged"]) != "[annex den lobby]" {
		t.Errorf("second reload: %v, want every port unchanged", l[1])
	}

	// A bad file: every error logged, nothing changes.
	write(head + reloadPort("lobby", lobby, "gocsore", false) + "\n[[port]]\nname = \"x\"\nbogus = 1\n")
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.WaitOutput("reload: the configuration has errors; the running configuration is kept", 60*time.Second)
	bad := logLines(p.Output(), "reload: bad configuration")
	var errs []string
	for _, l := range bad {
		errs = append(errs, fmt.Sprint(l["error"]))
	}
	all := strings.Join(errs, "\n")
	if len(bad) < 2 || !strings.Contains(all, "gocsore") || !strings.Contains(all, "bogus") {
		t.Errorf("bad reload logged %d errors, want one for the unknown problem and one for the unknown key:\n%s", len(bad), all)
	}
	lobbyUnit(3, 3)
	if n := len(logLines(p.Output(), "reload: ports updated")); n != 2 {
		t.Errorf("%d reloads applied, want 2 (the bad file changes nothing)", n)
	}
	// Through three reloads the unchanged port kept its device: opened once.
	opened := 0
	for _, l := range logLines(p.Output(), "port opened") {
		if l["port"] == "lobby" {
			opened++
		}
	}
	if opened != 1 {
		t.Errorf("lobby's device opened %d times, want once", opened)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("after SIGTERM: %v; output:\n%s", err, p.Output())
	}
}

// waitLines waits until p has logged message n times.
func waitLines(t *testing.T, p *proctest.Process, message string, n int) {
	t.Helper()
	bustest.Wait(t, fmt.Sprintf("%d %q lines", n, message), func() (bool, string) {
		out := p.Output()
		have := len(logLines(out, message))
		return have >= n, fmt.Sprintf("%d lines; output:\n%s", have, out)
	})
}
