package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// pipeBoards is the input of n goscore boards and the port's expected output.
func pipeBoards(n int) (in, want []byte) {
	var i, w bytes.Buffer
	for k := range n {
		u, a := faulttest.GoscoreBoard(k)
		i.WriteString(u)
		w.WriteString(a)
	}
	return i.Bytes(), w.Bytes()
}

// pipeRun is `run --port -` fed from a pipe as fast as the process reads it.
type pipeRun struct {
	cmd       *exec.Cmd
	out       proctest.Buffer // stdout: the port's answers
	logs      proctest.Buffer
	readDone  chan struct{}
	done      chan struct{}
	err       error
	signalled time.Time
}

func startPipeRun(t *testing.T, in []byte, args ...string) *pipeRun {
	t.Helper()
	r := &pipeRun{readDone: make(chan struct{}), done: make(chan struct{})}
	r.cmd = exec.Command(proctest.Scoreboard(t), append([]string{"run", "--port", "-", "--problem", "goscore",
		"--error-line", "--nats-listen", "127.0.0.1:0", "--http", "off", "--state-dir", t.TempDir()}, args...)...)
	r.cmd.Stderr = &r.logs
	stdin, err := r.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The whole input at once: the pipe is as full as the process lets it be. Once
	// the process has exited, the write fails (EPIPE), which is expected.
	go func() {
		_, _ = stdin.Write(in)
		_ = stdin.Close()
	}()
	go func() {
		defer close(r.readDone)
		buf := make([]byte, 64<<10)
		for {
			n, err := stdout.Read(buf)
			r.out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		<-r.readDone
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
		if t.Failed() {
			t.Logf("log:\n%s", tail(r.logs.String(), 8000))
		}
	})
	return r
}

func (r *pipeRun) lines() int {
	return strings.Count(r.out.String(), "\n")
}

// wait waits for the process to exit, failing t after patience.
func (r *pipeRun) wait(t *testing.T, patience time.Duration) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(patience):
		t.Fatalf("run has not exited %v after its input or signal; log:\n%s", patience, tail(r.logs.String(), 8000))
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// pipeCounts checks what run wrote against want: an exact prefix (all of it with
// whole), no error line, no slow consumer, and the display writer's counts agreeing
// with the port's. It returns the counts for the log.
func (r *pipeRun) check(t *testing.T, want []byte, whole bool) (read, answered, stopped, errorLines, slow int) {
	t.Helper()
	got := []byte(r.out.String())
	logs := r.logs.String()
	read = logCount(logs, "display writer stopped", "units")
	stopped = logCount(logs, "display writer stopped", "stopped")
	errs := logCount(logs, "display writer stopped", "errors")
	answered = bytes.Count(got, []byte("\n"))
	errorLines = bytes.Count(got, []byte("\n"+faulttest.ErrorPrefix))
	if bytes.HasPrefix(got, []byte(faulttest.ErrorPrefix)) {
		errorLines++
	}
	answered -= errorLines
	slow = strings.Count(logs, "slow consumer")
	switch {
	case r.err != nil:
		t.Errorf("exit: %v", r.err)
	case !bytes.HasPrefix(want, got):
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Errorf("the output is not a prefix of the answers: from byte %d, got %q, want %q", i, got[i:min(len(got), i+80)], want[i:min(len(want), i+80)])
	case whole && len(got) != len(want):
		t.Errorf("%d bytes written, want %d", len(got), len(want))
	}
	if errorLines != 0 || slow != 0 || stopped != 0 || errs != 0 || read != answered {
		t.Errorf("read %d, answered %d, stopped %d, errors %d, error lines %d, slow consumers %d; want every unit read answered, and no error",
			read, answered, stopped, errs, errorLines, slow)
	}
	return read, answered, stopped, errorLines, slow
}

// A pipe fed as fast as run reads it, with and without a SIGTERM in the middle of
// the flood: the reader holds back while its port has 256 units in flight, so no
// subscription inside the daemon drops a message (nats.go's slow consumer) and no
// unit is shed; stopped, run answers every unit it read, in order, within --drain
// (plus 2 s), and its output is an exact prefix of the answers, with no error line.
func TestFaultStopPipeFlood(t *testing.T) {
	// Far more than a stop after 2,000 answers lets run read: its reader holds back
	// while 256 units are in flight.
	const units = 20000
	in, want := pipeBoards(units)
	t.Run("to-the-end", func(t *testing.T) {
		r := startPipeRun(t, in)
		r.wait(t, 5*time.Minute)
		read, answered, stopped, errorLines, slow := r.check(t, want, true)
		t.Logf("counts: scenario=pipe-flood-to-the-end read=%d answered=%d stopped=%d error-lines=%d slow-consumers=%d",
			read, answered, stopped, errorLines, slow)
	})
	t.Run("sigterm", func(t *testing.T) {
		const drain = 5 * time.Second
		runs := 4 // the old daemon failed 3 runs in 4
		for i := range runs {
			r := startPipeRun(t, in, "--drain", drain.String())
			bustest.Wait(t, "2000 answers", func() (bool, string) {
				n := r.lines()
				return n >= 2000, fmt.Sprintf("%d answers", n)
			})
			r.signalled = time.Now()
			if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			r.wait(t, time.Minute)
			took := time.Since(r.signalled)
			read, answered, stopped, errorLines, slow := r.check(t, want, false)
			t.Logf("counts: scenario=pipe-flood-sigterm run=%d read=%d answered=%d stopped=%d vanished=%d error-lines=%d slow-consumers=%d exit-after=%v",
				i+1, read, answered, stopped, read-answered-stopped-errorLines, errorLines, slow, took.Round(time.Millisecond))
			if took > drain+2*time.Second {
				t.Errorf("run %d: exited %v after SIGTERM, want within --drain %v + 2s", i+1, took, drain)
			}
			if read >= units {
				t.Errorf("run %d: all the input read before the signal: the stop came too late to prove anything", i+1)
			}
		}
	})
}
