package daemon_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// collector reads everything a pseudo-terminal's master gets, until it is closed.
type collector struct{ proctest.Buffer }

func (c *collector) read(r io.Reader, done chan<- struct{}) {
	defer close(done)
	_, _ = io.Copy(&c.Buffer, r)
}

// 100 unplug/replug cycles of a pseudo-terminal behind a stable path while units
// flow: in each cycle a burst of units, and every other cycle a unit cut in the
// middle by the unplug. Every complete unit is answered right, in order, once; every
// cut unit is reported (a warning naming the lines dropped) and never answered.
//
// The unplug comes once the daemon has read what was written and the answers are in:
// a hang-up discards the bytes still in the pseudo-terminal, both ways, which no
// daemon could recover (a real unplug loses the bytes on the wire the same way).
func TestFaultUnplugReplug100(t *testing.T) {
	const cycles, burst = 100, 5
	_, nc := startBus(t, true)
	link := filepath.Join(t.TempDir(), "usb-scoreboard")
	d := startDaemon(t, nc, daemon.Config{
		Ports:     []daemon.PortConfig{{Device: link, Problem: "goscore", ErrorLine: true}},
		ReopenMin: 2 * time.Millisecond, ReopenMax: 10 * time.Millisecond,
	})
	var (
		all   strings.Builder // everything the scoreboard received, over every plug
		want  []string
		cut   int
		k     int
		lines = map[string]any{"message": "line read"}
	)
	for cycle := range cycles {
		pt := plug(t, link)

		var in, answers strings.Builder
		for range burst {
			u, a := faulttest.GoscoreBoard(k)
			k++
			in.WriteString(u)
			answers.WriteString(a)
			want = append(want, a)
		}
		n := strings.Count(in.String(), "\n")
		if cycle%2 == 1 {
			u, _ := faulttest.GoscoreBoard(k)
			k++
			half := strings.Join(strings.SplitAfter(u, "\n")[:1+cycle%19], "")
			in.WriteString(half)
			n += strings.Count(half, "\n")
			cut++
		}
		before := d.logs.count(lines)
		if _, err := pt.Master.Write([]byte(in.String())); err != nil {
			t.Fatal(err)
		}
		bustest.Wait(t, fmt.Sprintf("cycle %d: %d lines read", cycle, n), func() (bool, string) {
			have := d.logs.count(lines)
			return have >= before+n, fmt.Sprintf("%d lines read, %d before the cycle; logs:\n%s", have, before, d.logs.String())
		})
		all.Write(readN(t, pt.Master, answers.Len()))
		lost := d.logs.count(map[string]any{"message": "port lost"})
		unplug(t, link, pt)
		bustest.Wait(t, "port lost", func() (bool, string) {
			have := d.logs.count(map[string]any{"message": "port lost"})
			return have > lost, fmt.Sprintf("%d \"port lost\" lines, %d before; logs:\n%s", have, lost, d.logs.String())
		})
	}
	d.stop(t)
	counts := faulttest.Tally("unplug-replug-100", want, all.String())
	// The cut units: reported, each with the lines it lost.
	counts.Errors += d.logs.count(map[string]any{"message": "partial unit dropped: the port was lost in the middle of it"})
	counts.Check(t)
	if counts.Errors != cut {
		t.Errorf("%d cut units reported, want %d", counts.Errors, cut)
	}
	if n := d.logs.count(map[string]any{"message": "port reopened"}); n != cycles-1 {
		t.Errorf("%d reopenings, want %d", n, cycles-1)
	}
}

// deafFor is how long the deaf device stops reading: SCOREBOARD_DEAF_FOR (a Go
// duration; the figure is 1m), 5s by default to keep CI short.
func deafFor(t *testing.T) time.Duration {
	if s := os.Getenv("SCOREBOARD_DEAF_FOR"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("SCOREBOARD_DEAF_FOR=%q: %v", s, err)
		}
		return d
	}
	return 5 * time.Second
}

// A device that stops reading for a while (keeping on sending its dumps), then
// resumes: every unit is answered right, in order, once; nothing is dropped; the
// daemon's defaults hold (a write deadline far shorter than the deafness).
func TestFaultDeafDevice(t *testing.T) {
	deaf := deafFor(t)
	const units = 20000 // answers of ~8 bytes: far more than the pseudo-terminal buffers
	_, nc := startBus(t, true)
	pt := newPTY(t)
	d := startDaemonLogging(t, nc, daemon.Config{
		Ports: []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", ErrorLine: true}},
	}, 1) // info
	waitOpened(t, pt)
	var want []string
	var in strings.Builder
	for k := range units {
		u, a := faulttest.GoscoreBoard(k)
		in.WriteString(u)
		want = append(want, a)
	}
	sent := make(chan error, 1)
	go func() {
		_, err := pt.Master.Write([]byte(in.String()))
		sent <- err
	}()
	start := time.Now()
	// Deaf for the spell (the fault itself), and at least until the daemon has found
	// the device not reading: on a slow machine it may take longer to fill the buffer.
	time.Sleep(deaf)
	d.logs.wait(t, 1, map[string]any{"message": "the device is not reading; holding its answers"})
	var c collector
	done := make(chan struct{})
	go c.read(pt.Master, done)
	// One line per unit; fail with the counts if the answers stop coming.
	scenario := fmt.Sprintf("deaf-device-%v", deaf)
	lines := func() int { return strings.Count(c.String(), "\n") }
	last, since := 0, time.Now()
	for n := lines(); n < units; n = lines() {
		if n > last {
			last, since = n, time.Now()
		}
		if time.Since(since) > long {
			t.Fatalf("%d of %d answers, none more for %v: %s; logs:\n%s", n, units, long,
				faulttest.Tally(scenario, want, c.String()), d.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	t.Logf("deaf for %v; every answer %v after the start", deaf, time.Since(start).Round(time.Millisecond))
	d.stop(t)
	pt.Close()
	<-done
	counts := faulttest.Tally(scenario, want, c.String())
	counts.Check(t)
	if n := d.logs.count(map[string]any{"message": "the device is not reading; answer dropped"}); n != 0 {
		t.Errorf("%d writes dropped", n)
	}
	if d.logs.count(map[string]any{"message": "the device is not reading; holding its answers"}) == 0 {
		t.Errorf("the device never held a write up: the test proved nothing")
	}
}
