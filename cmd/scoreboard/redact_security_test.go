package main

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
)

// A password planted in --nats-url's user info never reaches the log, at trace level,
// through the start, a reconnect and the stop: the URL is logged redacted.
func TestSecurityRunLogsNoPassword(t *testing.T) {
	const secret = "pl4nted-S3cret"
	ns := proctest.StartNATS(t, proctest.NATSOptions{User: "bob", Password: secret})
	u := "nats://bob:" + secret + "@" + ns.Addr()
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", u, "--log-level", "trace", "--log-format", "json")
	run.WaitOutput("scoreboard running", 30*time.Second)
	ns.Restart()
	run.WaitOutput("nats reconnected", 30*time.Second)
	if err := run.Stop(); err != nil {
		t.Errorf("run after SIGTERM: %v", err)
	}
	out := run.Output()
	if n := strings.Count(out, secret); n != 0 {
		t.Errorf("the password is in the log %d times:\n%s", n, out)
	}
	if !strings.Contains(out, `"nats_url":"nats://bob:xxxxx@`) {
		t.Errorf("no redacted nats_url in the log:\n%s", out)
	}
}

// Malformed URLs, unreachable servers and wrong passwords: the errors on stderr name
// the URL without its secret.
func TestSecurityErrorsShowNoPassword(t *testing.T) {
	const secret = "pl4nted-S3cret"
	ns := proctest.StartNATS(t, proctest.NATSOptions{User: "bob", Password: "another"})
	free := proctest.FreePort(t)
	for _, c := range []struct {
		args []string
	}{
		{[]string{"run", "--nats-url", "nats://bob:" + secret + "@127.0.0.1:99999x"}},
		{[]string{"run", "--nats-url", "nats://bob:" + secret + "@[::1"}},
		{[]string{"run", "--nats-url", "nats://" + secret + "@bad host:4222"}},
		{[]string{"run", "--nats-url", "nats://bob:" + url.PathEscape(secret+"/%") + "@" + ns.Addr()}},
		{[]string{"solve", "--nats-url", "nats://bob:" + secret + "@127.0.0.1:" + strconv.Itoa(free), "goscore"}},
		{[]string{"solve", "--nats-url", "nats://bob:" + secret + "@" + ns.Addr(), "goscore"}},
		{[]string{"send", "--nats-url", "nats://bob:" + secret + "@bad host:4222", "goscore"}},
		{[]string{"watch", "--nats-url", "nats://" + secret + "@127.0.0.1:99999x"}},
	} {
		code, out, errs := runCmd(t, "", c.args...)
		if code == 0 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want an error", c.args, code, errs)
		}
		if strings.Contains(errs+out, secret) {
			t.Errorf("%v: the secret is in the output: %s%s", c.args, out, errs)
		}
	}
}
