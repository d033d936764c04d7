package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// socat finds the socat binary. CI installs it (.ci/run): there a missing one fails
// the test rather than skipping it.
func socat(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("socat")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("socat is missing (apt-get install socat): %v", err)
		}
		t.Skipf("socat is missing (apt-get install socat): %v", err)
	}
	return path
}

// A device behind a relay (socat, as for a scoreboard on a network serial server)
// stops reading for a while and keeps dumping; then it reads again. socat is a
// single loop that blocks writing either way: while the device is deaf it is stuck
// writing answers to it; once the device reads, it writes the dumps it holds into
// the daemon before it reads more answers. A daemon that stopped reading the port
// while its answers waited would deadlock with it for good. Every unit is answered
// right, in order, once.
//
// Othello commands make it sharp: 2 bytes in, 24 out each, so that one of socat's
// 8 KiB writes carries 4,096 units.
func TestFaultDeafRelay(t *testing.T) {
	bin := socat(t)
	const commands = 20000
	var in strings.Builder
	in.WriteString("1\n--------\n--------\n--------\n---WB---\n---BW---\n--------\n--------\n--------\nW\n")
	in.WriteString(strings.Repeat("L\n", commands))
	in.WriteString("Q\n")
	p, _ := engine.Lookup("othello")
	var want bytes.Buffer
	if bad, err := engine.Contest(p, strings.NewReader(in.String()), &want, func(error) {}); err != nil || bad != 0 {
		t.Fatalf("the contest filter: %d bad units, %v", bad, err)
	}

	dev := newPTY(t) // the scoreboard: the test holds its end
	link := filepath.Join(t.TempDir(), "relay")
	ctx, cancel := context.WithCancel(context.Background())
	relay := exec.CommandContext(ctx, bin, "PTY,link="+link+",raw,echo=0", "FILE:"+dev.Path+",raw,echo=0")
	var relayOut proctest.Buffer
	relay.Stderr = &relayOut
	if err := relay.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = relay.Wait()
	})
	bustest.Wait(t, "socat's pty at "+link, func() (bool, string) {
		_, err := os.Stat(link)
		return err == nil, fmt.Sprintf("%v; socat wrote: %s", err, relayOut.String())
	})

	_, nc := startBus(t, true)
	d := startDaemonLogging(t, nc, daemon.Config{
		Ports:        []daemon.PortConfig{{Device: link, Problem: "othello", ErrorLine: true}},
		WriteTimeout: 20 * time.Millisecond,
	}, 1) // info
	waitOpened(t, dev)

	// Deaf: the device writes its dumps, and reads nothing until the daemon has found
	// that its answers do not leave.
	written := make(chan error, 1)
	go func() {
		_, err := dev.Master.Write([]byte(in.String()))
		written <- err
	}()
	d.logs.wait(t, 1, map[string]any{"message": "the device is not reading; holding its answers"})
	var c collector
	done := make(chan struct{})
	go c.read(dev.Master, done)
	deadline := time.Now().Add(2 * long)
	for len(c.String()) < want.Len() {
		if time.Now().After(deadline) {
			select {
			case err := <-written:
				t.Logf("the device wrote its dumps: %v", err)
			default:
				t.Log("the device is still blocked writing its dumps")
			}
			t.Fatalf("counts: scenario=deaf-relay commands=%d answer-bytes=%d of %d after %v: the relay is stuck; logs:\n%s",
				commands, len(c.String()), want.Len(), 2*long, tail(d.logs.String(), 3000))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	d.stop(t)
	cancel()
	dev.Close()
	<-done
	got := c.String()
	var lines []string
	for line := range strings.Lines(want.String()) {
		lines = append(lines, line)
	}
	counts := faulttest.Tally("deaf-relay", lines, got)
	counts.Check(t)
	if got != want.String() {
		t.Errorf("the device got %d bytes, want %d, byte-exact", len(got), want.Len())
	}
	t.Logf("counts: scenario=deaf-relay commands=%d answer-bytes=%d held-writes=%d", commands, len(got),
		d.logs.count(map[string]any{"message": "the device is not reading; holding its answers"}))
}

func tail(s string, n int) string {
	if len(s) > n {
		return fmt.Sprintf("...%s", s[len(s)-n:])
	}
	return s
}
