package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/creack/pty"
	"go.bug.st/serial/enumerator"

	"github.com/goclub/scoreboard/serialio"
)

// TestListSerialPorts lists a real tty (a pty's slave, standing in for a USB adapter
// this machine does not have) with the details an enumerator would give, and finds
// its by-id link among real symlinks.
func TestListSerialPorts(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	dev := tty.Name()

	byID := t.TempDir()
	link := filepath.Join(byID, "usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	// A dangling link (a device unplugged while udev was slow) is skipped.
	if err := os.Symlink("/dev/ttyUSB77", filepath.Join(byID, "usb-gone-if00-port0")); err != nil {
		t.Fatal(err)
	}

	enumerate := func(...func(vid, pid string) bool) ([]*enumerator.PortDetails, error) {
		return []*enumerator.PortDetails{
			{Name: "/dev/ttyS0"},
			{}, // the enumerator's placeholder for a tty without a device
			{Name: dev, IsUSB: true, VID: "0403", PID: "6001", SerialNumber: "A50285BI", Manufacturer: "FTDI", Product: "FT232R USB UART"},
		}, nil
	}
	ports, warn := serialio.List(enumerate, nil, byID)
	if warn != nil {
		t.Fatal(warn)
	}
	want := []serialio.Listed{
		{Device: "/dev/ttyS0"},
		{Device: dev, ByID: link, USB: true, VID: "0403", PID: "6001", SerialNumber: "A50285BI", Manufacturer: "FTDI", Product: "FT232R USB UART"},
	}
	if dev < "/dev/ttyS0" {
		want[0], want[1] = want[1], want[0]
	}
	if !reflect.DeepEqual(ports, want) {
		t.Errorf("got  %+v\nwant %+v", ports, want)
	}

	var out, errw bytes.Buffer
	if err := printPorts(&out, &errw, ports); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "DEVICE") {
		t.Fatalf("table:\n%s", out.String())
	}
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		switch f[0] {
		case dev:
			if !reflect.DeepEqual(f, []string{dev, "0403:6001", "A50285BI", "FTDI", "FT232R", "USB", "UART", link}) {
				t.Errorf("USB line: %q", line)
			}
		case "/dev/ttyS0":
			if !reflect.DeepEqual(f, []string{"/dev/ttyS0", "-", "-", "-", "-", "-"}) {
				t.Errorf("plain line: %q", line)
			}
		}
	}
}

// TestListSerialPortsFallback: when the enumerator fails (one USB device without a
// serial number makes it fail for all), the ports are still listed by name.
func TestListSerialPortsFallback(t *testing.T) {
	broken := func(...func(vid, pid string) bool) ([]*enumerator.PortDetails, error) {
		return nil, errors.New("open /sys/bus/usb/devices/1-1/serial: no such file or directory")
	}
	names := func() ([]string, error) { return []string{"/dev/ttyUSB1", "/dev/ttyUSB0"}, nil }
	ports, warn := serialio.List(broken, names, filepath.Join(t.TempDir(), "none"))
	if warn == nil || !strings.Contains(warn.Error(), "no USB details") {
		t.Errorf("warning %v", warn)
	}
	if want := []serialio.Listed{{Device: "/dev/ttyUSB0"}, {Device: "/dev/ttyUSB1"}}; !reflect.DeepEqual(ports, want) {
		t.Errorf("got %+v, want %+v", ports, want)
	}
}

// TestPortsCommand runs `scoreboard ports` on this machine, whatever ports it has
// (often none): it succeeds, and --json prints an array.
func TestPortsCommand(t *testing.T) {
	var out, errw bytes.Buffer
	if code := runMain(context.Background(), []string{"ports"}, stdio{strings.NewReader(""), &out, &errw}); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	if out.Len() == 0 && !strings.Contains(errw.String(), "no serial ports found") {
		t.Errorf("no table and no message: stderr %q", errw.String())
	}
	if out.Len() > 0 && !strings.HasPrefix(out.String(), "DEVICE") {
		t.Errorf("table without a header:\n%s", out.String())
	}

	out.Reset()
	if code := runMain(context.Background(), []string{"ports", "--json"}, stdio{strings.NewReader(""), &out, &errw}); code != 0 {
		t.Fatalf("--json: exit %d", code)
	}
	var ports []serialio.Listed
	if err := json.Unmarshal(out.Bytes(), &ports); err != nil || ports == nil {
		t.Errorf("--json printed %q: %v, want an array", out.String(), err)
	}

	if code := runMain(context.Background(), []string{"ports", "extra"}, stdio{strings.NewReader(""), &out, &errw}); code != 2 {
		t.Errorf("ports with an argument: exit %d, want 2", code)
	}
}
