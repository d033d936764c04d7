package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/nats-io/nats.go"
)

// run refuses to listen beyond loopback without credentials, naming the options.
func TestSecurityRunListenNeedsAuth(t *testing.T) {
	for _, args := range [][]string{
		{"--nats-listen", "0.0.0.0:0"},
		{"--nats-listen", "[::]:4222"},
		{"--nats-listen", "0.0.0.0:0", "--nats-listen-user", "club"},
		{"--nats-listen", "0.0.0.0:0", "--nats-listen-token", "t", "--nats-listen-user", "club", "--nats-listen-password", "p"},
	} {
		code, _, errs := runLocked(t, "", append([]string{"run"}, args...)...)
		if code != 2 || !strings.Contains(errs, "--nats-listen-") {
			t.Errorf("run %v: exit %d, stderr %q; want 2 (a mistake on the command line) and the listener's credential options", args, code, errs)
		}
	}
}

// With a token (from the environment) the embedded server listens on every address:
// a client without the token (no tool is let in beyond loopback), or with a wrong
// one, is refused; with it, a 'scoreboard work' process joins the daemon's workers.
func TestSecurityRunListenToken(t *testing.T) {
	port := proctest.FreePort(t)
	t.Setenv("SCOREBOARD_NATS_LISTEN_TOKEN", "club-s3cret")
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", "0.0.0.0:"+strconv.Itoa(port))
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	// Logged once the workers' subscriptions are confirmed: the listener alone
	// comes up before the workers do.
	run.WaitOutput("scoreboard running", 30*time.Second)
	in, _ := busSample(t, "goscore")
	for _, token := range []string{"", "club-s3creT"} {
		code, out, errs := runCmd(t, in, "solve", "--nats-url", url, "--nats-token", token, "goscore")
		if code != 1 || out != "" || !strings.Contains(errs, "Authorization Violation") {
			t.Errorf("token %q: exit %d, stdout %q, stderr %q; want an authorization violation", token, code, out, errs)
		}
	}
	nc := busConnect(t, url, nats.Token("club-s3cret"))
	busStartWork(t, nc, "--nats-url", url, "--nats-token", "club-s3cret")
	if err := run.Stop(); err != nil {
		t.Errorf("run after SIGTERM: %v", err)
	}
}
