package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
)

// TestSimulatePlaysTheScoreboard stands in for the daemon on the device side of a
// real pseudo-terminal: it opens the path simulate prints, answers every line it reads,
// and checks that simulate sent the file at all and printed every answer.
func TestSimulatePlaysTheScoreboard(t *testing.T) {
	input := "1 2\n3 4\n5 6\n"
	dir := t.TempDir()
	file := dir + "/units.txt"
	if err := os.WriteFile(file, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	link := dir + "/board"

	var stdout, stderr proctest.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, []string{"simulate", "--baud", "115200", "--idle", "500ms", "--link", link, file},
			stdio{strings.NewReader(""), &stdout, &stderr})
	}()

	devRE := regexp.MustCompile(`device (\S+)`)
	var dev string
	for dev == "" {
		if m := devRE.FindStringSubmatch(stderr.String()); m != nil {
			dev = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("simulate exited %d early: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if target, err := os.Readlink(link); err != nil || target != dev {
		t.Fatalf("link %s -> %q (%v), want %s", link, target, err, dev)
	}

	f, err := os.OpenFile(link, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	for len(got) < 3 && sc.Scan() {
		got = append(got, sc.Text())
		if _, err := f.WriteString("answer " + sc.Text() + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, "\n")+"\n" != input {
		t.Errorf("device read %q, want %q", got, input)
	}
	if code := <-done; code != 0 {
		t.Fatalf("simulate exited %d: %s", code, stderr.String())
	}
	want := "answer 1 2\nanswer 3 4\nanswer 5 6\n"
	if stdout.String() != want {
		t.Errorf("simulate printed %q, want %q", stdout.String(), want)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("link %s left behind: %v", link, err)
	}
}

// TestSimulateWithRun: simulate plays the scoreboard to a real daemon: the Othello
// sample, sent at 115200 baud through the pseudo-terminal, comes back as the contest
// output, each command answered as its line arrives.
func TestSimulateWithRun(t *testing.T) {
	link := filepath.Join(t.TempDir(), "board")
	var stdout, stderr proctest.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, []string{"simulate", "--baud", "115200", "--idle", "2s", "--link", link},
			stdio{bytes.NewReader(samples.Read(t, "othello.in")), &stdout, &stderr})
	}()
	for !strings.Contains(stderr.String(), "device ") {
		select {
		case code := <-done:
			t.Fatalf("simulate exited %d early: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", "off", "--port", link, "--baud", "115200", "--problem", "othello")
	if code := <-done; code != 0 {
		t.Fatalf("simulate exited %d: %s", code, stderr.String())
	}
	if want := string(samples.Read(t, "othello.out")); stdout.String() != want {
		t.Errorf("simulate printed %q, want %q", stdout.String(), want)
	}
	if err := run.Stop(); err != nil {
		t.Errorf("run: %v\n%s", err, run.Output())
	}
}
