package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
)

// A --port, or a [[port]] device, that is a directory or a regular file is a config
// error before anything starts (exit 1, naming the path); a path that does not exist
// yet is an unplugged adapter, and the daemon starts and waits for it.
func TestRunRefusesWhatIsNoSerialPort(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "board.txt")
	if err := os.WriteFile(file, []byte("not a tty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{dir, dir + " is a directory, not a serial port"},
		{file, file + " is a regular file, not a serial port (give the scoreboard's serial device, such as a /dev/serial/by-id/ path: 'scoreboard ports' lists them"},
	} {
		code, _, errs := runLocked(t, "", "run", "--nats-listen", "off", "--port", c.path, "--problem", "goscore")
		if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(errs, "ready") {
			t.Errorf("--port %s: exit %d, want 1 and %q before anything starts; stderr:\n%s", c.path, code, c.want, errs)
		}
		conf := filepath.Join(t.TempDir(), "scoreboard.toml")
		toml := fmt.Sprintf("[nats]\nlisten = \"off\"\n\n[[port]]\nname = \"hall\"\ndevice = %q\nproblem = \"goscore\"\n", c.path)
		if err := os.WriteFile(conf, []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs = runLocked(t, "", "run", "--config", conf)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("[[port]] device %s: exit %d, want 1 and %q; stderr:\n%s", c.path, code, c.want, errs)
		}
	}

	// Not there yet: the daemon starts, reports ready, and waits for the device.
	absent := filepath.Join(dir, "usb-FTDI_FT232R_A12345-if00-port0")
	p := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-listen", "off", "--port", absent, "--problem", "goscore")
	p.WaitOutput(`"message":"ready"`, 30*time.Second)
	p.WaitOutput("port not available", 30*time.Second)
	if err := p.Stop(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}
