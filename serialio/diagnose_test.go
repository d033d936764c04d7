package serialio_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/goclub/scoreboard/serialio"
)

// TestDiagnose: the errors of a real Open, each with what to do, and which are worth
// another attempt: /dev/null is no serial port; a kernel tty name that does not exist
// is a mistake, a stable link that does not exist yet an adapter to wait for; a
// device that had been open is always waited for. Permission is refused by the kernel
// only to another user than root, so its error is made as Open gets it.
func TestDiagnose(t *testing.T) {
	ls := serialio.LineSettings{Baud: 9600}
	open := func(path string) error {
		p, err := serialio.Open(path, ls)
		if err == nil {
			p.Close()
			t.Fatalf("%s opened", path)
		}
		return err
	}
	absentLink := filepath.Join(t.TempDir(), "usb-FTDI_FT232R_A12345-if00-port0")
	for _, c := range []struct {
		name      string
		path      string
		err       error
		existed   bool
		permanent bool
		want      []string
	}{
		{"not a tty", "/dev/null", open("/dev/null"), false, true, []string{"/dev/null is not a serial port", "serial port"}},
		{"no such tty", "/dev/ttyUSB97", open("/dev/ttyUSB97"), false, true, []string{"no device /dev/ttyUSB97", "scoreboard ports"}},
		{"gone tty", "/dev/ttyUSB97", open("/dev/ttyUSB97"), true, false, []string{"no device /dev/ttyUSB97"}},
		{"link not there yet", absentLink, open(absentLink), false, false, []string{"waiting for it to be plugged in"}},
		{"permission", "/dev/ttyUSB0", &fs.PathError{Op: "open", Path: "/dev/ttyUSB0", Err: syscall.EACCES}, false, true,
			[]string{"dialout", "usermod -aG dialout", "systemctl start scoreboard"}},
		{"permission after a replug", "/dev/ttyUSB0", &fs.PathError{Op: "open", Path: "/dev/ttyUSB0", Err: syscall.EACCES}, true, false, []string{"dialout"}},
	} {
		err := serialio.Diagnose(c.path, c.err, c.existed)
		if serialio.Permanent(err) != c.permanent {
			t.Errorf("%s: permanent %v, want %v: %v", c.name, serialio.Permanent(err), c.permanent, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
	// The list of ports names what this machine has, as 'scoreboard ports' does.
	if names, _ := filepath.Glob("/dev/ttyS*"); len(names) > 0 {
		if _, err := os.Stat("/sys/class/tty/ttyS0/device"); err == nil && !strings.Contains(serialio.Available(), "/dev/ttyS0") {
			t.Errorf("Available() = %q, want /dev/ttyS0 among them", serialio.Available())
		}
	}
}

// A settings call that fails is told apart from a path that is no tty. A tty that
// hangs up between its opening and its settings (a real pseudo-terminal, closed
// there) is waited for, opened or not before: OpenRetry, as the port's reader calls
// it, opens the device that comes next. A path that was the port's tty before and
// is none now is waited for too (go.bug.st/serial's "invalid serial port" ended the
// port for good). A baud rate the device refuses says so, naming the port and the
// rate (a pseudo-terminal takes any rate, so its error is made as Open makes it).
func TestDiagnoseSettingsCall(t *testing.T) {
	pt, err := serialio.OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer pt.Close()
	hangUp := pt.Path
	serialio.SetAfterOpen(func(path string) {
		if path == hangUp {
			pt.Close()
		}
	})
	defer serialio.SetAfterOpen(nil)
	_, openErr := serialio.Open(pt.Path, serialio.LineSettings{})
	if !errors.Is(openErr, serialio.ErrHungUp) {
		t.Fatalf("a tty hung up after its opening: %v, want ErrHungUp", openErr)
	}
	for _, existed := range []bool{false, true} {
		err := serialio.Diagnose(pt.Path, openErr, existed)
		if serialio.Permanent(err) || !strings.Contains(err.Error(), "hung up as it was opened") {
			t.Errorf("hung up, existed %v: permanent %v: %v", existed, serialio.Permanent(err), err)
		}
	}

	// OpenRetry as the reader runs it: the first device hangs up at its opening, the
	// next one is opened. Both exist before, so that the next is not given the
	// first one's number.
	first, err := serialio.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	next, err := serialio.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	hangUp = first.Path
	serialio.SetAfterOpen(func(path string) {
		if path == hangUp {
			first.Close()
		}
	})
	attempts := 0
	port, err := serialio.OpenRetry(context.Background(), func() (serialio.Port, error) {
		attempts++
		path := first.Path
		if attempts > 1 {
			path = next.Path
		}
		p, err := serialio.Open(path, serialio.LineSettings{})
		return p, serialio.Diagnose(path, err, true)
	}, backoff.Policy{Min: time.Millisecond, Max: time.Millisecond}, nil)
	if err != nil || attempts != 2 {
		t.Fatalf("OpenRetry: %v after %d attempts, want the next device at the second", err, attempts)
	}
	port.Close()

	// No tty, after the port had its device: waited for, not the end of the port.
	_, nullErr := serialio.Open("/dev/null", serialio.LineSettings{})
	if err := serialio.Diagnose("/dev/null", nullErr, true); serialio.Permanent(err) || !strings.Contains(err.Error(), "waiting for it to come back") {
		t.Errorf("no tty, after the port had its device: permanent %v: %v", serialio.Permanent(err), err)
	}

	baud := fmt.Errorf("port /dev/ttyUSB0: %w", &serialio.BaudError{Path: "/dev/ttyUSB0", Baud: 250000, Err: errors.New("Invalid serial port: error configuring port: invalid argument")})
	for _, existed := range []bool{false, true} {
		err := serialio.Diagnose("/dev/ttyUSB0", baud, existed)
		if serialio.Permanent(err) == existed || !strings.Contains(err.Error(), "/dev/ttyUSB0 does not take the baud rate 250000") || strings.Contains(err.Error(), "not a tty") {
			t.Errorf("baud rate refused, existed %v: permanent %v: %v", existed, serialio.Permanent(err), err)
		}
	}
}
