package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/serialio"
)

// The attacks of the club review (issue 41) on the bus's boundaries that a tool, or
// anyone reaching the listener, has: each by the official nats CLI against a real
// `scoreboard run` with a pseudo-terminal port.

// toolEnv is a daemon with a goscore port on a pty, a token listener, and the nats
// CLI pointed at it.
type toolEnv struct {
	run  *proctest.Process
	pt   *serialio.PTY
	url  string
	cli  string
	next int // the next goscore board to send
}

func startToolEnv(t *testing.T) *toolEnv {
	t.Helper()
	pt := runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", addr, "--nats-listen-token", trustToken,
		"--http", "off", "--state-dir", filepath.Join(t.TempDir(), "state"),
		"--port", pt.Path, "--port-name", trustPort, "--problem", "goscore", "--baud", "115200", "--error-line")
	runWaitOpened(t, pt, run)
	run.WaitOutput("scoreboard running", 60*time.Second)
	return &toolEnv{run: run, pt: pt, url: "nats://" + addr, cli: proctest.NATSCLI(t)}
}

// nats runs the nats CLI against the daemon, with args after the server's.
func (e *toolEnv) nats(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), e.cli, append([]string{"--server", e.url, "--timeout", "10s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// units sends n boards on the port and waits for their answers, and for their
// results in the history.
func (e *toolEnv) units(t *testing.T, n int) {
	t.Helper()
	diskUnits(t, e.pt.Master, e.pt.Master, e.next, e.next+n, e.run)
	e.next += n
	js := historyJetStream(t, e.url)
	bustest.Wait(t, "the units' results in the history", func() (bool, string) {
		got := historyCount(js, "scoreboard.result.>")
		return got == uint64(e.next), fmt.Sprintf("%d results stored, %d units answered", got, e.next)
	})
}

// F9: a user name the server logs as an error when it refuses it, before any
// authentication, was taken for the store's own "no space left on device": the
// daemon said its history was not storing and restarted JetStream. Now only the
// store's own write error counts: no such line, and every unit stored.
func TestTrustToolNoSpaceUserName(t *testing.T) {
	e := startToolEnv(t)
	e.units(t, 5)
	const tries = 5
	for i := range tries {
		out, err := e.nats(t, "--user", "no space left on device", "--password", "x", "pub", "x", "x")
		if err == nil || !strings.Contains(out, "Authorization Violation") {
			t.Fatalf("attempt %d: the CLI with a wrong user: %v, %s", i, err, out)
		}
	}
	bustest.Wait(t, "the server's refusals in the log", func() (bool, string) {
		n := strings.Count(e.run.Output(), "authentication error")
		return n >= tries, fmt.Sprintf("%d of %d", n, tries)
	})
	// The keeper looks at the store every half second; a few rounds of units, each
	// stored, give it many looks.
	for range 5 {
		e.units(t, 10)
	}
	out := e.run.Output()
	for _, line := range []string{"history is not storing", "history storing again", "will be DISABLED"} {
		if n := strings.Count(out, line); n != 0 {
			t.Errorf("%q logged %d times after %d refused logins named \"no space left on device\"", line, n, tries)
		}
	}
}
