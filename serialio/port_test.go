package serialio_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/goclub/scoreboard/serialio"
)

func TestLineSettings(t *testing.T) {
	for _, c := range []struct {
		ls   serialio.LineSettings
		want string // "" when invalid
	}{
		{serialio.LineSettings{}, "9600 8N1"},
		{serialio.LineSettings{Baud: 115200, DataBits: 7, Parity: "even", StopBits: "2"}, "115200 7E2"},
		{serialio.LineSettings{Parity: "O", StopBits: "1.5"}, "9600 8O1.5"},
		{serialio.LineSettings{DataBits: 9}, ""},
		{serialio.LineSettings{Parity: "weird"}, ""},
		{serialio.LineSettings{StopBits: "3"}, ""},
		{serialio.LineSettings{Baud: -1}, ""},
	} {
		err := c.ls.Validate()
		if (err == nil) != (c.want != "") {
			t.Errorf("%+v: Validate() = %v", c.ls, err)
			continue
		}
		if c.want != "" && c.ls.String() != c.want {
			t.Errorf("%+v: String() = %q, want %q", c.ls, c.ls.String(), c.want)
		}
	}
}

// openPTY opens a pseudo-terminal pair for a test and its port on the device side.
func openPTY(t *testing.T) (*serialio.PTY, serialio.Port) {
	t.Helper()
	pt, err := serialio.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pt.Close() })
	p, err := serialio.Open(pt.Path, serialio.LineSettings{Baud: 115200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pt.WaitOpened(ctx); err != nil {
		t.Fatal(err)
	}
	return pt, p
}

func TestPTYBothWays(t *testing.T) {
	pt, p := openPTY(t)
	// Raw mode: CR LF and control bytes pass unchanged, nothing is echoed.
	msg := []byte("a\r\nb\x00\x03\n")
	if _, err := pt.Master.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(p, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("device read %q, want %q", got, msg)
	}
	if _, err := p.Write([]byte("5 3\n")); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, 4)
	if _, err := io.ReadFull(pt.Master, back); err != nil {
		t.Fatal(err)
	}
	if string(back) != "5 3\n" {
		t.Fatalf("master read %q", back)
	}
}

func TestPTYWriteDeadline(t *testing.T) {
	_, p := openPTY(t)
	// Nobody reads the master: the pty's buffer fills, and the deadline ends the write.
	if err := p.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	n, err := p.Write(buf)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write of 1 MiB to a device nobody reads: n=%d err=%v, want a deadline error", n, err)
	}
}

func TestPTYCloseWakesBlockedIO(t *testing.T) {
	_, p := openPTY(t)
	done := make(chan error, 2)
	go func() {
		_, err := p.Read(make([]byte, 10))
		done <- err
	}()
	go func() {
		_, err := p.Write(make([]byte, 1<<20))
		done <- err
	}()
	p.Close()
	for range 2 {
		select {
		case err := <-done:
			if err == nil {
				t.Error("blocked I/O returned no error after Close")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not wake a blocked Read or Write")
		}
	}
}

func TestPTYUnplugIsLost(t *testing.T) {
	pt, p := openPTY(t)
	if _, err := pt.Master.Write([]byte("half a li")); err != nil {
		t.Fatal(err)
	}
	pt.Close()
	var err error
	for err == nil {
		_, err = p.Read(make([]byte, 100))
	}
	if !errors.Is(err, serialio.ErrLost) {
		t.Fatalf("read after the master closed: %v, want ErrLost", err)
	}
	if _, err := os.Stat(pt.Path); err == nil {
		// The device node goes with the master on Linux; a daemon reopening the path
		// must then wait for it to come back.
		t.Logf("%s still exists after the master closed", pt.Path)
	}
}

func TestOpenMissingDevice(t *testing.T) {
	_, err := serialio.Open("/nonexistent/tty", serialio.LineSettings{})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/tty") {
		t.Fatalf("Open of a missing device: %v", err)
	}
	if _, err := serialio.Open(os.DevNull, serialio.LineSettings{}); err == nil {
		t.Fatal("Open of /dev/null (not a tty) succeeded")
	}
	if _, err := serialio.Open("/dev/ptmx", serialio.LineSettings{DataBits: 4}); err == nil {
		t.Fatal("Open with 4 data bits succeeded")
	}
}

func TestStdioDeadlines(t *testing.T) {
	p := serialio.NewStdio(strings.NewReader("x"), io.Discard)
	if err := p.SetWriteDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("deadline on io.Discard: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p = serialio.NewStdio(r, w)
	if err := p.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatalf("deadline on a pipe: %v", err)
	}
	if _, err := p.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
}

func TestOpenRetry(t *testing.T) {
	b := backoff.Policy{Min: time.Millisecond, Max: 4 * time.Millisecond}
	var waits []time.Duration
	calls := 0
	p, err := serialio.OpenRetry(context.Background(), func() (serialio.Port, error) {
		calls++
		if calls < 5 {
			return nil, errors.New("not yet")
		}
		return serialio.NewStdio(strings.NewReader(""), io.Discard), nil
	}, b, func(err error, attempt int, wait time.Duration) { waits = append(waits, wait) })
	if err != nil || p == nil {
		t.Fatal(err)
	}
	want := []time.Duration{1, 2, 4, 4}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := serialio.OpenRetry(ctx, func() (serialio.Port, error) { return nil, errors.New("never") }, b, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenRetry after cancel: %v", err)
	}
}
