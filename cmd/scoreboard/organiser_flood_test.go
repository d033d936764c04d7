package main

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/pairing"
)

// floodLines counts out's lines holding what, and those of them that say how many
// were left out before them.
func floodLines(out, what string) (lines, sampled int) {
	for l := range strings.SplitSeq(out, "\n") {
		if strings.Contains(l, what) {
			lines++
			if strings.Contains(l, `"suppressed"`) {
				sampled++
			}
		}
	}
	return lines, sampled
}

// TestOrganiserFloodsSampled (review F6): one client floods a real daemon with
// failed organiser logins (wrong passwords, serially, on loopback), with loads
// whose reply is no inbox (as the organiser), and with $SRV pings whose reply is
// the load subject (as a tool, so that the workers' answers are permission
// violations). Each kind is logged, sampled: its first lines, then one in many
// that says how many were left out, never a line each.
func TestOrganiserFloodsSampled(t *testing.T) {
	proctest.SkipShort(t, "a daemon process flooded by one client")
	const n = 310 // the sampler's burst of 10, then one line in 100
	bin := proctest.Scoreboard(t)
	state := t.TempDir()
	port := proctest.FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	run := proctest.Start(t, bin, "run", "--daemon-state-dir", state, "--nats-listen", addr, "--http-listen", "off", "--log-format", "json")
	run.WaitOutput("scoreboard running", 60*time.Second)

	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"user\":\"organiser\",\"pass\":\"guess-%d\"}\r\nPING\r\n", i)
		line, _ := r.ReadString('\n')
		c.Close()
		if !strings.Contains(line, "Authorization Violation") {
			t.Fatalf("wrong password %d: %q; want -ERR 'Authorization Violation'", i, line)
		}
	}

	org, err := nats.Connect("nats://"+addr, asOrganiser(t, state))
	if err != nil {
		t.Fatal(err)
	}
	defer org.Close()
	tool, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	load := pairing.LoadSubject(bus.DefaultPrefix)
	for range n {
		if err := org.PublishRequest(load, "$KV.SCOREBOARD_BOARDS.flood", organiserLoad("flood")); err != nil {
			t.Fatal(err)
		}
		if err := tool.PublishRequest("$SRV.PING", load, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, nc := range []*nats.Conn{org, tool} {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}

	kinds := []struct{ what, line string }{
		{"failed organiser logins", "authentication error"},
		{"refused loads", "pairings load refused"},
		{"the workers' publish violations", "Publish Violation"},
	}
	// Done when each kind's last line is in: the flood's line that reports the
	// left-out ones, or (unsampled) a line each.
	bustest.Wait(t, "each flood's lines", func() (bool, string) {
		out := run.Output()
		var counts []string
		done := true
		for _, k := range kinds {
			lines, sampled := floodLines(out, k.line)
			done = done && (sampled > 0 || lines >= n)
			counts = append(counts, fmt.Sprintf("%s: %d lines, %d with suppressed", k.what, lines, sampled))
		}
		return done, strings.Join(counts, "; ")
	})
	out := run.Output()
	for _, k := range kinds {
		lines, sampled := floodLines(out, k.line)
		t.Logf("%d %s: %d lines, %d saying how many were left out", n, k.what, lines, sampled)
		if lines > n/4 || sampled == 0 {
			t.Errorf("%d %s logged %d lines (%d with suppressed); want at most %d, sampled", n, k.what, lines, sampled, n/4)
		}
	}
}
