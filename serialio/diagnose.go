package serialio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.bug.st/serial"
)

// OpenError is a device that cannot be opened, with what to do about it. Permanent
// ones are not worth another attempt: nothing but the user changes them.
type OpenError struct {
	Path      string
	Err       error
	Permanent bool
	Hint      string
}

// Error is the hint alone when there is one: it names the device and says what is
// wrong and what to do, which the error it diagnoses said already in its own words
// ("port X: open X: no such file or directory: no device X" said one fact thrice).
func (e *OpenError) Error() string {
	if e.Hint == "" {
		return e.Err.Error()
	}
	return e.Hint
}

func (e *OpenError) Unwrap() error { return e.Err }

// ByIDDir holds the stable links of USB serial adapters, one per adapter, named
// after its vendor, product and serial number: the path to configure.
const ByIDDir = "/dev/serial/by-id"

// Diagnose says what an error of Open on path means, and what to do. existed says
// the port has had its device open before: a device that went away (unplugged, or
// its permissions not set again yet, or hung up between its opening and its
// settings) is waited for, always. Before that, a path that
// is no serial port and one the user may not open are permanent (one clear error,
// not retried forever), and so is a kernel's tty name that does not exist
// (/dev/ttyUSB9: mistyped, or the adapter got another number). A link that does not
// exist yet (/dev/serial/by-id/..., a udev rule's name) is an adapter that may be
// plugged in after the daemon starts, at boot: it is waited for, the error saying
// which ports there are.
func Diagnose(path string, err error, existed bool) error {
	if err == nil {
		return nil
	}
	e := &OpenError{Path: path, Err: err}
	var pe *serial.PortError
	var be *BaudError
	switch {
	case errors.Is(err, ErrHungUp):
		// Unplugged again as it was opened: the device comes and goes; waited for.
		e.Hint = fmt.Sprintf("%s hung up as it was opened (unplugged again, or a loose cable); trying again", path)
	case errors.As(err, &be):
		// A rate the device refused: the user's to change. Once the port has had its
		// device, another adapter may be plugged in later: waited for.
		e.Permanent = !existed
		e.Hint = fmt.Sprintf("%s does not take the baud rate %d: set port.baud (--port-baud) to a rate the scoreboard and its adapter take, "+
			"such as 9600, 19200, 38400, 57600 or 115200", path, be.Baud)
	case errors.Is(err, ErrNotTTY) || errors.As(err, &pe) && pe.Code() == serial.InvalidSerialPort:
		// A path that was a tty before is waited for: whatever is there now (a
		// device half gone, a settings call that failed) may be the device again.
		e.Permanent = !existed
		e.Hint = fmt.Sprintf("%s is not a serial port (not a tty); give the scoreboard's serial device: %s", path, Available())
		if existed {
			e.Hint = fmt.Sprintf("%s was the port's serial device and is no tty now (%v); waiting for it to come back", path, err)
		}
	case errors.Is(err, fs.ErrPermission):
		e.Permanent = !existed
		e.Hint = fmt.Sprintf("this user may not open %s: add the user to the group that owns it (dialout: "+
			"sudo usermod -aG dialout $USER, then log in again), or run the package's service (sudo systemctl start scoreboard), whose user is in it", path)
	case errors.Is(err, fs.ErrNotExist):
		e.Permanent = !existed && KernelName(path)
		e.Hint = fmt.Sprintf("no device %s; %s", path, Available())
		if !e.Permanent {
			e.Hint += "; waiting for it to be plugged in"
		}
	}
	return e
}

// KernelName reports whether path is a tty device node the kernel names (/dev/ttyUSB0,
// /dev/ttyACM1, /dev/ttyS0): a name that comes and goes with the order adapters are
// plugged in, not one that waits for a given adapter.
func KernelName(path string) bool {
	return filepath.Dir(filepath.Clean(path)) == "/dev" && strings.HasPrefix(filepath.Base(path), "tty")
}

// Permanent reports whether err (of Diagnose) is not worth another attempt.
func Permanent(err error) bool {
	var e *OpenError
	return errors.As(err, &e) && e.Permanent
}

// Links maps each device to the first (by name) link in dir (ByIDDir) that resolves
// to it: the path to configure. A missing dir (no USB serial device plugged in) is
// no links.
func Links(dir string) map[string]string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	links := map[string]string{}
	for _, e := range entries { // ReadDir sorts by name
		link := filepath.Join(dir, e.Name())
		target, err := filepath.EvalSymlinks(link)
		if err != nil {
			continue
		}
		if _, seen := links[target]; !seen {
			links[target] = link
		}
	}
	return links
}

// Available lists the serial ports this machine has, each with its stable link, as
// 'scoreboard ports' does, in one sentence for an error message.
func Available() string {
	names, err := serial.GetPortsList()
	if err != nil {
		return fmt.Sprintf("the serial ports could not be listed (%v); 'scoreboard ports' lists them", err)
	}
	links := Links(ByIDDir)
	if len(names) == 0 {
		return "this machine has no serial port: plug in the scoreboard's USB adapter, then 'scoreboard ports' lists it"
	}
	sort.Strings(names)
	list := make([]string, len(names))
	for i, n := range names {
		list[i] = n
		if l := links[n]; l != "" {
			list[i] = l + " (" + n + ")"
		}
	}
	return "the serial ports here are " + strings.Join(list, ", ") + " ('scoreboard ports' tells which is which)"
}
