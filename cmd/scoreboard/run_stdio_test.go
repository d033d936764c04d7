package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
)

// All five problems through run --port -, in-process: every unit passes through
// NATS, the workers and the display writer, and run exits 0 at the end of input.
func TestRunStdioSamples(t *testing.T) {
	for _, c := range samples.Cases {
		t.Run(c.File, func(t *testing.T) {
			in, want := samples.Pair(t, c)
			code, out, errs := runLocked(t, string(in), "run", "--nats-listen", "off", "--port", "-", "--problem", c.Problem)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, errs)
			}
			if out != string(want) {
				t.Fatalf("stdout\n got %q\nwant %q", out, want)
			}
			if !strings.Contains(errs, `"message":"end of input"`) {
				t.Errorf("no end-of-input log line; stderr:\n%s", errs)
			}
		})
	}
}

// A bad unit on stdin: logged, no line on stdout (the contest protocol has none),
// the next unit answered, exit 0; with --error-line, an error line in its place.
func TestRunStdioBadUnit(t *testing.T) {
	in := "2 1\nB(9,9)\n" + "5 1\nB(0,0)\n" + "0 0\n" // 2 is below the smallest board
	code, out, errs := runLocked(t, in, "run", "--nats-listen", "off", "--port", "-", "--problem", "replay")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errs)
	}
	want := runSolve1(t, "replay", "5 1\nB(0,0)\n0 0\n")
	if out != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	if !strings.Contains(errs, `"message":"bad unit"`) {
		t.Errorf("no warning for the bad unit; stderr:\n%s", errs)
	}
	code, out, errs = runLocked(t, in, "run", "--nats-listen", "off", "--port", "-", "--problem", "replay", "--error-line")
	if code != 0 || !strings.HasPrefix(out, "error: replay: line 1: ") || !strings.HasSuffix(out, "\n"+want) {
		t.Fatalf("with --error-line: exit %d, stdout %q; stderr:\n%s", code, out, errs)
	}
}

// runLocked is runCmd with stdout and stderr safe to read while late log lines come
// (nats.go reports a closed connection from its own goroutine).
func runLocked(t *testing.T, in string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb proctest.Buffer
	code = runMain(context.Background(), args, stdio{strings.NewReader(in), &out, &errb})
	return code, out.String(), errb.String()
}

// runSolve1 is what solve answers to in.
func runSolve1(t *testing.T, problem, in string) string {
	t.Helper()
	code, out, errs := runLocked(t, in, "solve", problem)
	if code != 0 {
		t.Fatalf("solve %s: exit %d: %s", problem, code, errs)
	}
	return out
}

func TestRunUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--problem", "goscore"}, "give --port-device too"},
		{[]string{"--port", "-", "--problem", "nope"}, `unknown problem "nope"`},
		{[]string{"--port", "-"}, "problem"},
		{[]string{"--port", "/dev/ttyUSB0", "--problem", "goscore", "--parity", "weird"}, "parity"},
		{[]string{"--port", "-", "--problem", "goscore", "--port-name", "Not A Token"}, "name"},
	} {
		code, _, errs := runLocked(t, "", append([]string{"run", "--nats-listen", "off"}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("run %v: exit %d, stderr %q; want an error mentioning %q", c.args, code, errs, c.want)
		}
	}
}

// The README's first command, through the built binary, from the repository root.
func TestRunREADMECommand(t *testing.T) {
	bin := proctest.Scoreboard(t)
	args := []string{"run", "--port-device", "-", "--port-problem", "goscore"}
	// The command as written listens on 127.0.0.1:4222; when something else holds
	// that port (another daemon, a parallel test), any free port shows the same.
	if l, err := net.Listen("tcp", "127.0.0.1:4222"); err != nil {
		args = append(args, "--nats-listen", "127.0.0.1:0")
	} else {
		l.Close()
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = "../.."
	in, err := os.Open("../../testdata/samples/goscore.in")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v; stderr:\n%s", err, errb.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("run did not exit at the end of its input; stderr:\n%s", errb.String())
	}
	if out.String() != "5 3\n177 175\n" {
		t.Fatalf("stdout %q, want the seed's answers", out.String())
	}
}
