package daemon_test

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/samples"
)

// Every seed sample through a real pseudo-terminal with its lines ended in a lone
// "\r" (old serial devices), in "\r\n", in "\r\r\n", in "\n\r", and in the first
// three mixed:
// byte-exact answers.
// A "\r\n" is one line end: goscore's spacer lines would break every board if it
// were two.
func TestPTYSamplesLineEnds(t *testing.T) {
	_, nc := startBus(t, true)
	ends := map[string]func([]byte) []byte{
		"cr":   func(in []byte) []byte { return bytes.ReplaceAll(in, []byte("\n"), []byte("\r")) },
		"crlf": func(in []byte) []byte { return bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n")) },
		// A CRLF device behind a layer that adds a CR: the contest's reader took it.
		"crcrlf": func(in []byte) []byte { return bytes.ReplaceAll(in, []byte("\n"), []byte("\r\r\n")) },
		// Some terminals and old boards end their lines in LF CR (review F14).
		"lfcr": func(in []byte) []byte { return bytes.ReplaceAll(in, []byte("\n"), []byte("\n\r")) },
		// Every end in turn. An empty line right after a line ended in "\r" ends in
		// "\r" too: "\r" then "\r\n" is "\r\r\n", one end (docs/trust.md).
		"mixed": func(in []byte) []byte {
			var out []byte
			lastCR := false
			for i, line := range bytes.SplitAfter(in, []byte("\n")) {
				if bytes.HasSuffix(line, []byte("\n")) {
					end := [...]string{"\n", "\r", "\r\n", "\r\r\n"}[i%4]
					if lastCR && len(line) == 1 {
						end = "\r"
					}
					lastCR = end == "\r"
					line = append(line[:len(line)-1:len(line)-1], end...)
				}
				out = append(out, line...)
			}
			return out
		},
	}
	for _, c := range samples.Cases {
		for _, name := range []string{"cr", "crlf", "crcrlf", "lfcr", "mixed"} {
			t.Run(c.File+"-"+name, func(t *testing.T) {
				pt := newPTY(t)
				d := startDaemon(t, nc, daemon.Config{Ports: []daemon.PortConfig{{Device: pt.Path, Problem: c.Problem}}})
				waitOpened(t, pt)
				in := ends[name](sample(t, c.File+".in"))
				if _, err := pt.Master.Write(in); err != nil {
					t.Fatal(err)
				}
				want := sample(t, c.File+".out")
				if got := readN(t, pt.Master, len(want)); !bytes.Equal(got, want) {
					t.Errorf("output\n got %q\nwant %q; logs:\n%s", got, want, d.logs.String())
				}
				d.stop(t)
			})
		}
	}
}

// A device that sends bytes but no line end, through a real pseudo-terminal: one
// sending more than a line can hold, and one sending a few bytes and nothing more.
// Each is said once, in the log and the monitor's status (systemd's status line and
// NoLineEnds, for a status page), and no more while it lasts; once a line end comes
// the port reads units again and the status says nothing of it.
func TestNoLineEnds(t *testing.T) {
	_, nc := startBus(t, true)
	for _, c := range []struct {
		name string
		send string
	}{
		{"flood", strings.Repeat("+ ", 200)}, // 400 bytes: goscore's lines are at most 128
		{"few", "+ + +"},                     // waits for its line end for ever
	} {
		t.Run(c.name, func(t *testing.T) {
			pt := newPTY(t)
			mon := daemon.NewMonitor()
			mon.Stale = 400 * time.Millisecond // the display writer looks every 100 ms
			cfg := daemon.Config{Ports: []daemon.PortConfig{{Name: "hall", Device: pt.Path, Problem: "goscore"}}, Monitor: mon}
			daemon.WaitLineEnd(&cfg, 300*time.Millisecond)
			d := startDaemon(t, nc, cfg)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("logs:\n%s", d.logs.String())
				}
			})
			waitOpened(t, pt)
			said := map[string]any{"port": "hall", "message": "the port receives bytes but no line ends: no unit can be read; " +
				`the device must end its lines in \n, \r\n or \r (check its line settings too: a wrong baud rate reads as noise)`}
			if _, err := pt.Master.Write([]byte(c.send)); err != nil {
				t.Fatal(err)
			}
			d.logs.wait(t, 1, said)
			bustest.Wait(t, "the status says it", func() (bool, string) {
				return strings.Contains(mon.Status(), "bytes but no line ends from hall") && slices.Equal(mon.NoLineEnds(), []string{"hall"}),
					fmt.Sprintf("status %q, no line ends from %q", mon.Status(), mon.NoLineEnds())
			})
			// More of the same is not said again: the display writer looks a few times.
			beats := d.logs.count(map[string]any{"message": "line read"})
			for range 3 {
				if _, err := pt.Master.Write([]byte(c.send)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(mon.Stale / 2) // let the display writer look again; counts are checked, not times
			}
			if n := d.logs.count(said); n != 1 {
				t.Errorf("said %d times, want once", n)
			}
			if n := d.logs.count(map[string]any{"message": "line read"}); n != beats {
				t.Errorf("%d lines read from bytes without a line end", n-beats)
			}
			// A line end, then a board: answered, and the status is clear again.
			u, a := faulttest.GoscoreBoard(7)
			if _, err := pt.Master.Write([]byte("\n" + u)); err != nil {
				t.Fatal(err)
			}
			if got := string(readN(t, pt.Master, len(a))); got != a {
				t.Errorf("answer %q, want %q", got, a)
			}
			d.logs.wait(t, 1, map[string]any{"port": "hall", "message": "the port has no more bytes waiting for a line end"})
			bustest.Wait(t, "the status clear", func() (bool, string) {
				return !strings.Contains(mon.Status(), "line ends") && len(mon.NoLineEnds()) == 0, mon.Status()
			})
			d.stop(t)
		})
	}
}

// A port read for months passes 2^31 lines: the dumps' Scoreboard-Line goes on in 64
// bits, each dump its own unit's (an int of the armhf build wrapped negative, and a
// header left out kept the last dump's line: a stale one on every dump after).
func TestLinePast32Bits(t *testing.T) {
	_, nc := startBus(t, true)
	const first = 1<<31 - 5
	lines := make(chan string, 8)
	sub, err := nc.Subscribe("scoreboard.dump.goscore.hall", func(m *nats.Msg) { lines <- m.Header.Get(bus.HeaderLine) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	pt := newPTY(t)
	cfg := daemon.Config{Ports: []daemon.PortConfig{{Name: "hall", Device: pt.Path, Problem: "goscore"}}}
	daemon.CountLinesFrom(&cfg, first)
	d := startDaemon(t, nc, cfg)
	waitOpened(t, pt)
	var in, want strings.Builder
	for k := range 3 {
		u, a := faulttest.GoscoreBoard(k)
		in.WriteString(u)
		want.WriteString(a)
	}
	if _, err := pt.Master.Write([]byte(in.String())); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, pt.Master, want.Len()); string(got) != want.String() {
		t.Errorf("answers %q, want %q", got, want.String())
	}
	for k := range 3 {
		select {
		case got := <-lines:
			if w := strconv.FormatInt(first+1+20*int64(k), 10); got != w {
				t.Errorf("dump %d: Scoreboard-Line %q, want %s", k+1, got, w)
			}
		case <-time.After(long):
			t.Fatalf("no dump %d", k+1)
		}
	}
	d.stop(t)
}

// The same past 2^31 lines for a bad unit (a reader at a line that wide): its result
// says the stream line the unit started on, and its error the stream line that is
// wrong, as the device's error line does, in 64 bits on every build (an int of the
// armhf and 386 builds could not hold them: the result had no line, and the error
// named the line in the unit).
func TestBadUnitLinePast32Bits(t *testing.T) {
	_, nc := startBus(t, true)
	const first int64 = 1<<31 + 10
	res := results(t, nc)
	pt := newPTY(t)
	cfg := daemon.Config{Ports: []daemon.PortConfig{{Name: "hall", Device: pt.Path, Problem: "goscore", ErrorLine: true}}}
	daemon.CountLinesFrom(&cfg, first)
	startDaemon(t, nc, cfg)
	waitOpened(t, pt)
	u, _ := faulttest.GoscoreBoard(0)
	lines := strings.SplitAfter(u, "\n")
	lines[5] = "Z" + lines[5][1:] // the unit's sixth line
	if _, err := pt.Master.Write([]byte(strings.Join(lines, ""))); err != nil {
		t.Fatal(err)
	}
	wantLine := strconv.FormatInt(first+6, 10)
	got := string(readN(t, pt.Master, len("error: goscore: line ")+len(wantLine)))
	if want := "error: goscore: line " + wantLine; got != want {
		t.Errorf("the device's error line starts %q, want %q", got, want)
	}
	select {
	case r := <-res:
		if int64(r.Line) != first+1 || !strings.Contains(r.Error, "line "+wantLine+":") {
			t.Errorf("result line %d, error %q: want line %d and an error at line %s", r.Line, r.Error, first+1, wantLine)
		}
	case <-time.After(long):
		t.Fatal("no result")
	}
}
