package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/serialio"
)

// runPTY opens a pseudo-terminal for a test, closed at its end.
func runPTY(t *testing.T) *serialio.PTY {
	t.Helper()
	pt, err := serialio.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pt.Close() })
	return pt
}

func runWaitOpened(t *testing.T, pt *serialio.PTY, p *proctest.Process) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		select {
		case <-p.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := pt.WaitOpened(ctx); err != nil {
		t.Fatalf("%v; output:\n%s", err, p.Output())
	}
}

// runReadAnswers reads n bytes from the scoreboard's end of a pseudo-terminal.
func runReadAnswers(t *testing.T, pt *serialio.PTY, n int, p *proctest.Process) []byte {
	t.Helper()
	buf := make([]byte, n)
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(pt.Master, buf)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("read answers: %v (got %q); output:\n%s", err, buf, p.Output())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no %d bytes of answers; got %q; output:\n%s", n, buf, p.Output())
	}
	return buf
}

// Every seed sample through the built daemon on a pseudo-terminal, byte-exact; then
// SIGTERM, and the daemon exits 0.
func TestRunPTYSamples(t *testing.T) {
	bin := proctest.Scoreboard(t)
	for _, c := range samples.Cases {
		t.Run(c.File, func(t *testing.T) {
			pt := runPTY(t)
			p := proctest.Start(t, bin, "run", "--nats-listen", "off", "--port", pt.Path, "--baud", "115200", "--problem", c.Problem)
			runWaitOpened(t, pt, p)
			in, want := samples.Pair(t, c)
			if _, err := pt.Master.Write(in); err != nil {
				t.Fatal(err)
			}
			if got := runReadAnswers(t, pt, len(want), p); !bytes.Equal(got, want) {
				t.Fatalf("answers\n got %q\nwant %q", got, want)
			}
			if err := p.Stop(); err != nil {
				t.Fatalf("after SIGTERM: %v; output:\n%s", err, p.Output())
			}
		})
	}
}

// Several ports from the config file, each with its own problem, served at once.
func TestRunConfigSeveralPorts(t *testing.T) {
	bin := proctest.Scoreboard(t)
	lobby, hall := runPTY(t), runPTY(t)
	conf := filepath.Join(t.TempDir(), "scoreboard.toml")
	err := os.WriteFile(conf, fmt.Appendf(nil, `
[nats]
listen = "off"

[[port]]
name = "lobby"
device = %q
problem = "goscore"
baud = 115200

[[port]]
name = "hall"
device = %q
problem = "othello"
`, lobby.Path, hall.Path), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p := proctest.Start(t, bin, "run", "--config", conf)
	runWaitOpened(t, lobby, p)
	runWaitOpened(t, hall, p)
	// Both at once: the othello answers do not wait for the goscore ones.
	for _, c := range []struct {
		pt   *serialio.PTY
		file string
	}{{hall, "othello"}, {lobby, "goscore"}} {
		if _, err := c.pt.Master.Write(samples.Read(t, c.file+".in")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		pt   *serialio.PTY
		file string
	}{{hall, "othello"}, {lobby, "goscore"}} {
		want := samples.Read(t, c.file+".out")
		if got := runReadAnswers(t, c.pt, len(want), p); !bytes.Equal(got, want) {
			t.Fatalf("%s answers\n got %q\nwant %q", c.file, got, want)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("after SIGTERM: %v; output:\n%s", err, p.Output())
	}
}
