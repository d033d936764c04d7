package serialio_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
