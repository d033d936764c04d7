package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/serialio"
)

// TestPortFilterOneName: history and watch name their port filter --port, and
// --port-name (watch's former name for it) still works on both, hidden from their
// help. Each filters a daemon's history of two ports down to one, through the
// command line.
func TestPortFilterOneName(t *testing.T) {
	listen := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	url := "nats://" + listen
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr proctest.Buffer
	done := make(chan int, 1)
	desk, hall := runPTY(t), runPTY(t)
	conf := filepath.Join(t.TempDir(), "scoreboard.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[[port]]\nname = \"desk\"\ndevice = %q\nproblem = \"goscore\"\n[[port]]\nname = \"hall\"\ndevice = %q\nproblem = \"goscore\"\n",
		desk.Path, hall.Path), 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- runMain(ctx, []string{"run", "--config", conf, "--nats-listen", listen, "--http-listen", "off", "--daemon-state-dir", t.TempDir(), "--log-format", "json"},
			stdio{strings.NewReader(""), io.Discard, &stderr})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("run did not stop")
		}
	}()
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	bustest.Wait(t, "run ready", func() (bool, string) {
		return strings.Contains(stderr.String(), `"message":"ready"`), stderr.String()
	})
	// Each port reads the sample's two boards, and answers them.
	for _, pt := range []*serialio.PTY{desk, hall} {
		octx, ocancel := context.WithTimeout(ctx, 60*time.Second)
		err := pt.WaitOpened(octx)
		ocancel()
		if err != nil {
			t.Fatalf("%v; stderr:\n%s", err, stderr.String())
		}
		if _, err := pt.Master.Write(in); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		read := make(chan error, 1)
		go func() { _, err := io.ReadFull(pt.Master, got); read <- err }()
		select {
		case err := <-read:
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: answers %q (%v), want %q", pt.Path, got, err, want)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: no answers within 60 s; stderr:\n%s", pt.Path, stderr.String())
		}
	}
	bustest.Wait(t, "both ports in the history", func() (bool, string) {
		_, out, _ := runLocked(t, "", "history", "--nats-url", url)
		return strings.Count(out, "goscore #") >= 4, out
	})

	for _, cmd := range [][]string{
		{"history"},
		{"watch", "--last", "2", "--count", "2"},
	} {
		for _, flag := range []string{"--port", "--port-name"} {
			args := append(append([]string{}, cmd...), "--nats-url", url, flag, "desk")
			code, out, errs := runLocked(t, "", args...)
			if code != 0 || strings.Count(out, "desk goscore #") != 2 || strings.Contains(out, "hall") {
				t.Errorf("%s: exit %d, want desk's 2 units and none of hall's; stdout:\n%s\nstderr: %s", strings.Join(args, " "), code, out, errs)
			}
			// A bad name is told with the flag as the user gave it.
			args = append(append([]string{}, cmd...), "--nats-url", url, flag, "Desk!")
			if code, _, errs := runLocked(t, "", args...); code != 2 || !strings.Contains(errs, flag+` "Desk!"`) {
				t.Errorf("%s: exit %d, stderr %q; want 2 and the error naming %s", strings.Join(args, " "), code, errs, flag)
			}
		}
		code, out, _ := runLocked(t, "", cmd[0], "--help")
		if code != 0 || !strings.Contains(out, "--port name") || strings.Contains(out, "--port-name") {
			t.Errorf("%s --help: exit %d; want --port and no --port-name:\n%s", cmd[0], code, out)
		}
	}
}
