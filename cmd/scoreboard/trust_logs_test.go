package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
)

// maxLogLine bounds a line of the daemon's log whatever a client sends: every value
// a tool or a worker chooses is cut (logging.Clip) before it is logged.
const maxLogLine = 1024

// Issue 41, review F5: a tool without credentials sends what the daemon logs as
// warnings, each value as long as the server lets it be: dumps whose Scoreboard-Seq
// is 1 MB and its other headers 256 KB (one port name each, so that no sampler
// leaves them out), a dump whose reply subject is no inbox and 3,000 bytes long, a
// publish denied on a 3,000-byte subject from a connection whose name is 3,000
// bytes, and a login whose user name is 3,000 bytes. Every line of the daemon's log
// stays within maxLogLine, and the warnings are there.
func TestTrustToolHugeValuesLogged(t *testing.T) {
	e := startToolEnv(t, false)
	long := strings.Repeat("y", 3000)
	nc, err := nats.Connect(e.url, nats.Name("n"+long)) // the server quotes it in its lines
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	huge := strings.Repeat("9x", 1<<19)
	big := huge[:256<<10] // with huge, a message within the server's 2 MB
	const dumps = 5
	for i := range dumps {
		m := &nats.Msg{Subject: s.Dump("goscore", fmt.Sprintf("p%d", i)), Data: []byte("\n"),
			Header: nats.Header{bus.HeaderSeq: {huge}, bus.HeaderOrigin: {big}, bus.HeaderPort: {big}, bus.HeaderLine: {big}}}
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.PublishMsg(&nats.Msg{Subject: s.Dump("goscore", "q"), Reply: "reply." + long, Data: []byte("\n")}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("denied."+long, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if bad, err := nats.Connect(e.url, nats.UserInfo("u"+long, "x")); err == nil {
		bad.Close()
		t.Fatal("a login with a wrong user name was taken")
	}
	// The port's next unit is answered after them all.
	diskUnits(t, e.pt.Master, e.pt.Master, 0, 1, e.run)
	wants := []string{"dump with a bad sequence header", "reply subject that is no inbox", "Publish Violation", "authentication error"}
	bustest.Wait(t, "the warnings in the daemon's log", func() (bool, string) {
		out := e.run.Output()
		var missing []string
		for _, w := range wants {
			if !strings.Contains(out, w) {
				missing = append(missing, w)
			}
		}
		return len(missing) == 0, fmt.Sprintf("missing %q", missing)
	})
	lines := strings.Split(e.run.Output(), "\n")
	longest, over := 0, 0
	for _, line := range lines {
		longest = max(longest, len(line))
		if len(line) > maxLogLine {
			over++
			t.Logf("a line of %d bytes: %.300s...", len(line), line)
		}
	}
	t.Logf("%d log lines, the longest %d bytes", len(lines), longest)
	if over > 0 {
		t.Errorf("%d of %d log lines are over %d bytes (the longest %d)", over, len(lines), maxLogLine, longest)
	}
}
