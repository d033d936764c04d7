// Package serialio is the scoreboard's side of the serial line: ports (serial devices,
// pseudo-terminals, stdin/stdout), cutting their byte streams into units of a problem,
// and reopening a device that went away.
package serialio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.bug.st/serial"
	"golang.org/x/sys/unix"
)

// Stdio is the device path that stands for the process's stdin and stdout.
const Stdio = "-"

// LineSettings are a serial line's settings. The zero value means 9600 8N1.
type LineSettings struct {
	Baud     int    // bits per second; 0 means 9600
	DataBits int    // 5 to 8; 0 means 8
	Parity   string // none, odd, even, mark or space; "" means none
	StopBits string // 1, 1.5 or 2; "" means 1
}

// mode turns the settings into go.bug.st/serial's, checking them.
func (ls LineSettings) mode() (*serial.Mode, error) {
	m := &serial.Mode{BaudRate: ls.Baud, DataBits: ls.DataBits}
	if m.BaudRate == 0 {
		m.BaudRate = 9600
	}
	if m.DataBits == 0 {
		m.DataBits = 8
	}
	if m.BaudRate < 0 {
		return nil, fmt.Errorf("baud rate %d: must be positive", ls.Baud)
	}
	if m.DataBits < 5 || m.DataBits > 8 {
		return nil, fmt.Errorf("data bits %d: want 5 to 8", ls.DataBits)
	}
	switch strings.ToLower(ls.Parity) {
	case "", "none", "n":
		m.Parity = serial.NoParity
	case "odd", "o":
		m.Parity = serial.OddParity
	case "even", "e":
		m.Parity = serial.EvenParity
	case "mark", "m":
		m.Parity = serial.MarkParity
	case "space", "s":
		m.Parity = serial.SpaceParity
	default:
		return nil, fmt.Errorf("parity %q: want none, odd, even, mark or space", ls.Parity)
	}
	switch ls.StopBits {
	case "", "1":
		m.StopBits = serial.OneStopBit
	case "1.5":
		m.StopBits = serial.OnePointFiveStopBits
	case "2":
		m.StopBits = serial.TwoStopBits
	default:
		return nil, fmt.Errorf("stop bits %q: want 1, 1.5 or 2", ls.StopBits)
	}
	return m, nil
}

// Validate reports whether the settings are usable.
func (ls LineSettings) Validate() error {
	_, err := ls.mode()
	return err
}

func (ls LineSettings) String() string {
	m, err := ls.mode()
	if err != nil {
		return "invalid: " + err.Error()
	}
	parity := "NOEMS"[m.Parity : m.Parity+1]
	stop := [...]string{"1", "1.5", "2"}[m.StopBits]
	return fmt.Sprintf("%d %d%s%s", m.BaudRate, m.DataBits, parity, stop)
}

// Port is an open serial line.
type Port interface {
	// Read returns ErrLost once the device has gone away (unplugged, hung up), and
	// io.EOF only at the end of a stdin that was a file or a pipe.
	io.Reader
	io.Writer
	// SetReadDeadline makes a blocked Read return; it returns os.ErrNoDeadline when
	// the port cannot be interrupted (stdin that is a plain file or a blocking pipe).
	SetReadDeadline(t time.Time) error
	// SetWriteDeadline bounds the next writes; os.ErrNoDeadline when not supported.
	SetWriteDeadline(t time.Time) error
	// Close ends the port; a Read or Write blocked on it returns.
	Close() error
}

// ErrLost is returned by a device's Read once the device has gone away.
var ErrLost = errors.New("device lost")

// CheckDevice refuses a device path that exists and cannot be a serial port: a
// directory, a regular file, or anything else that is not a character device. A path
// that does not exist (yet) passes: an adapter unplugged at start is opened when it
// comes, by its /dev/serial/by-id link.
func CheckDevice(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil // absent, or not ours to see: Open says why when it tries
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		return fmt.Errorf("%s is a directory, not a serial port", path)
	case m.IsRegular():
		return fmt.Errorf("%s is a regular file, not a serial port", path)
	case m&os.ModeCharDevice == 0:
		return fmt.Errorf("%s is not a character device (%v), not a serial port", path, m.Type())
	}
	return nil
}

// Open opens the serial device at path (a tty: a USB adapter, a UART, the slave side
// of a pseudo-terminal) with the given line settings.
//
// go.bug.st/serial opens the device, puts it in raw mode with the line settings and
// takes exclusive access; its own Write cannot be given a deadline, and a write(2)
// blocked on a device that never drains survives its Close. So the bytes go through
// a second, non-blocking descriptor of the same device, opened first (before the
// exclusive lock), which Go's runtime poller serves: reads and writes take deadlines,
// and Close wakes a blocked Read or Write. The termios settings belong to the device,
// so both descriptors share them.
func Open(path string, ls LineSettings) (Port, error) {
	mode, err := ls.mode()
	if err != nil {
		return nil, fmt.Errorf("port %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("port %s: %w", path, err)
	}
	if afterOpen != nil {
		afterOpen(path)
	}
	// go.bug.st/serial says "invalid serial port" for any failure of a settings call:
	// a path that is no tty, a tty that hung up since it was opened (unplugged
	// again), and a baud rate the device does not take. The first is permanent, the
	// second is not: they are told apart here, on the descriptor already open.
	if err := checkTTY(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("port %s: %w", path, err)
	}
	sp, err := serial.Open(path, mode)
	if err != nil {
		var pe *serial.PortError
		if errors.As(err, &pe) && pe.Code() == serial.InvalidSerialPort {
			if cerr := checkTTY(f); cerr != nil {
				err = cerr // it hung up, or is none
			} else if !standardBaud(mode.BaudRate) {
				err = &BaudError{Path: path, Baud: mode.BaudRate, Err: err}
			}
		}
		f.Close()
		return nil, fmt.Errorf("port %s: %w", path, err)
	}
	return &device{f: f, sp: sp}, nil
}

// afterOpen, when set, is called between the opening of a device and its first
// settings call: a test's seam, to hang the device up there.
var afterOpen func(path string)

// ErrNotTTY is a device path that is no tty: no settings call can work on it.
var ErrNotTTY = errors.New("not a tty")

// ErrHungUp is a tty that hung up between its opening and its settings: a device
// unplugged again as it was opened. It may come back.
var ErrHungUp = errors.New("the device hung up as it was opened")

// BaudError is a baud rate the device did not take.
type BaudError struct {
	Path string
	Baud int
	Err  error
}

func (e *BaudError) Error() string {
	return fmt.Sprintf("%s does not take the baud rate %d: %v", e.Path, e.Baud, e.Err)
}

func (e *BaudError) Unwrap() error { return e.Err }

// checkTTY reads f's terminal settings: ErrNotTTY for a file that has none,
// ErrHungUp (with the errno) for a tty that hung up.
func checkTTY(f *os.File) error {
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var terr error
	if err := c.Control(func(fd uintptr) { _, terr = unix.IoctlGetTermios(int(fd), unix.TCGETS) }); err != nil {
		return err
	}
	switch {
	case terr == nil:
		return nil
	case errors.Is(terr, unix.ENOTTY):
		return fmt.Errorf("%w (%v)", ErrNotTTY, terr)
	case errors.Is(terr, unix.EIO), errors.Is(terr, unix.ENXIO), errors.Is(terr, unix.ENODEV):
		return fmt.Errorf("%w (%v)", ErrHungUp, terr)
	}
	return terr
}

// standardBaud reports whether baud is one of the rates every tty driver names
// (termios' B50 to B4000000); another is set as a custom rate, which a driver may
// refuse.
func standardBaud(baud int) bool {
	switch baud {
	case 50, 75, 110, 134, 150, 200, 300, 600, 1200, 1800, 2400, 4800, 9600, 19200, 38400, 57600, 115200,
		230400, 460800, 500000, 576000, 921600, 1000000, 1152000, 1500000, 2000000, 2500000, 3000000, 3500000, 4000000:
		return true
	}
	return false
}

type device struct {
	f     *os.File
	sp    serial.Port
	close sync.Once
}

func (d *device) Read(p []byte) (int, error) {
	n, err := d.f.Read(p)
	// A tty that was hung up or unplugged reads as end of file or EIO. Neither is the
	// end of the scoreboard's stream: the device may come back.
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) {
		return n, fmt.Errorf("%w: %v", ErrLost, err)
	}
	return n, err
}

func (d *device) Write(p []byte) (int, error)        { return d.f.Write(p) }
func (d *device) SetReadDeadline(t time.Time) error  { return d.f.SetReadDeadline(t) }
func (d *device) SetWriteDeadline(t time.Time) error { return d.f.SetWriteDeadline(t) }

func (d *device) Close() error {
	var err error
	d.close.Do(func() {
		err = errors.Join(d.f.Close(), d.sp.Close())
	})
	return err
}

// NewStdio returns the port "-": reads from r, writes to w. When r or w is an
// *os.File, its deadlines are used where the file supports them.
func NewStdio(r io.Reader, w io.Writer) Port { return &stdio{r: r, w: w} }

type stdio struct {
	r io.Reader
	w io.Writer
}

func (s *stdio) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s *stdio) Write(p []byte) (int, error) { return s.w.Write(p) }

type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

func (s *stdio) SetReadDeadline(t time.Time) error {
	if d, ok := s.r.(deadliner); ok {
		return d.SetReadDeadline(t)
	}
	return os.ErrNoDeadline
}

func (s *stdio) SetWriteDeadline(t time.Time) error {
	if d, ok := s.w.(deadliner); ok {
		return d.SetWriteDeadline(t)
	}
	return os.ErrNoDeadline
}

// Close leaves the process's stdin and stdout open: they are not the port's to close.
func (s *stdio) Close() error { return nil }
