// Package daemon wires the scoreboard's actors: per port, a reader that cuts the
// device's stream into units, numbers them and publishes them as dumps; a display
// writer that puts the outcomes back in sequence order; and a device writer that
// writes the answers to the port without ever letting a stuck device stall the rest.
package daemon

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/serialio"
)

// PortConfig is one scoreboard on one serial line.
type PortConfig struct {
	// Name is the port's token in subjects (<prefix>.dump.<problem>.<name>);
	// DefaultName(Device) when empty.
	Name string
	// Device is the device path (a serial device, a pseudo-terminal, a stable
	// /dev/serial/by-id/... link), or "-" for stdin and stdout.
	Device string
	// Line is the serial line's settings; unused for "-".
	Line serialio.LineSettings
	// Problem is the name of the problem the scoreboard dumps.
	Problem string
	// ErrorLine writes a one-line error to the port for a unit that gets no answer.
	// The contest protocol has no error line, so by default nothing is written.
	ErrorLine bool
	// OnReopen is what becomes of an answer whose unit was read before the device
	// went away and came back: OnReopenDrop (the default, "") or OnReopenWrite.
	OnReopen string
	// Table is the tournament table played on the port: the pairings loaded give
	// it that table's game (package pairing). 0: none, the port shows no players.
	Table int
}

// Config is the daemon's configuration. Zero durations and counts take the defaults.
type Config struct {
	// Prefix is the first token(s) of every subject; bus.DefaultPrefix when empty.
	Prefix string
	Ports  []PortConfig

	// Stdin and Stdout are the port "-".
	Stdin  io.Reader
	Stdout io.Writer

	// RequestTimeout is how long a dump waits for a worker's answer before it is
	// published again (default 2s); Attempts is how many times it is published before
	// the unit is given up with an error result (default 3).
	RequestTimeout time.Duration
	Attempts       int
	// MaxInFlight bounds the units of a port published and waiting for a worker
	// (default 256); beyond it the reader stops reading until answers come back.
	MaxInFlight int
	// MaxHeld bounds the units of a port read and not yet written out (default
	// 65536): those in flight and those whose outcomes wait for the device. A device
	// that does not read its answers is read on until then, so that a relay (socat)
	// blocked writing into the port while the port's answers wait for it never
	// deadlocks; beyond it the reader stops reading.
	MaxHeld int
	// WriteQueue bounds the answers waiting to be written to a port (default 256);
	// beyond it they wait with their outcomes (MaxHeld). WriteTimeout bounds one
	// write to the device (default 2s): past it, a device that does not read keeps its
	// answers, written once it reads again, with a logged warning; once the daemon is
	// stopping it loses them, with a logged error, so that it cannot hold the stop up.
	WriteQueue   int
	WriteTimeout time.Duration
	// ReopenMin and ReopenMax space the attempts to reopen a device that went away:
	// from ReopenMin (default 100ms) doubling up to ReopenMax (default 3s).
	ReopenMin, ReopenMax time.Duration
	// Drain bounds how long units in flight may still be answered once the daemon is
	// told to stop (default 5s).
	Drain time.Duration

	// Monitor, when set, is kept up to date with the ports' state and counts, for
	// the service manager.
	Monitor *Monitor
	// Metrics, when set, counts the ports' units, retries and devices for /metrics.
	Metrics *metrics.Metrics
	// Recent, when set, keeps the text of each port's last units, for the history.
	Recent *Recent
	// Record, when set, takes a copy of each unit's dump as the port first
	// publishes it and of each result the port takes as its outcome (a worker's,
	// or its own error result): a replicated history's recorder
	// (history.Recorder.Record), which stores them with acks whatever the bus's
	// connections do meanwhile. It must not block.
	Record func(*nats.Msg)
	// Players, when set, is the game on a port now, as result.Players' JSON ("":
	// none): each unit is stamped with it as the port takes it, in its dump's
	// Scoreboard-Players header, which the workers copy into its result. It must
	// not block.
	Players func(port string) string
	// Stored, when set, has the display writers hold each answer until the history
	// has stored its unit's result, at most StoreWait (default DefaultStoreWait).
	Stored    *Stored
	StoreWait time.Duration

	// firstLine starts every port's line count there: a test's seam (0: from 1).
	firstLine int64
	// noLineEndWait is how long bytes wait for a line end before the port is said
	// to receive none (default noLineEndWait): a test's seam.
	noLineEndWait time.Duration
}

// DefaultAttempts is how many times a port publishes a unit before it gives it up,
// when Config leaves Attempts out.
const DefaultAttempts = 3

// newWarnSampler thins out a port's warnings about bad input: a scoreboard sending
// garbage at 115200 baud would otherwise write thousands of lines a second. Per
// kind of warning, ten a second are logged, then one in a hundred, each with the
// count of those left out.
func newWarnSampler() *logging.Sampler { return logging.NewSampler(10, time.Second, 100) }

func (c *Config) setDefaults() {
	if c.Prefix == "" {
		c.Prefix = bus.DefaultPrefix
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.RequestTimeout, 2*time.Second)
	def(&c.WriteTimeout, 2*time.Second)
	def(&c.ReopenMin, 100*time.Millisecond)
	def(&c.ReopenMax, 3*time.Second)
	def(&c.Drain, 5*time.Second)
	def(&c.StoreWait, DefaultStoreWait)
	def(&c.noLineEndWait, noLineEndWait)
	if c.Attempts <= 0 {
		c.Attempts = DefaultAttempts
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 256
	}
	if c.MaxHeld <= 0 {
		c.MaxHeld = 1 << 16
	}
	if c.WriteQueue <= 0 {
		c.WriteQueue = 256
	}
	for i := range c.Ports {
		if c.Ports[i].Name == "" {
			c.Ports[i].Name = DefaultName(c.Ports[i].Device)
		}
	}
}

// Validate checks the configuration, defaults applied.
func (c Config) Validate() error {
	c.Ports = append([]PortConfig(nil), c.Ports...)
	c.setDefaults()
	var errs []error
	for _, e := range CheckPorts(c.Ports) {
		errs = append(errs, fmt.Errorf("port %q: %s: %s", c.Ports[e.Index].Device, e.Key, e.Msg))
	}
	for _, p := range c.Ports {
		where := fmt.Sprintf("port %q", p.Device)
		if p.OnReopen != "" && p.OnReopen != OnReopenDrop && p.OnReopen != OnReopenWrite {
			errs = append(errs, fmt.Errorf("%s: on_reopen %q: want %q or %q", where, p.OnReopen, OnReopenDrop, OnReopenWrite))
		}
		if _, err := engine.Find(p.Problem); err != nil && p.Problem != "" {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
		if p.Device != serialio.Stdio && p.Device != "" {
			if err := p.Line.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
			}
			if err := serialio.CheckDevice(p.Device); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w (give the scoreboard's serial device, such as a /dev/serial/by-id/ path: 'scoreboard ports' lists them; - for stdin and stdout)", where, err))
			}
		}
	}
	return errors.Join(errs...)
}

// PortError is one finding of CheckPorts: the port (its index), the key at fault
// (name, device, problem) and what is wrong with it.
type PortError struct {
	Index    int
	Key, Msg string
}

// CheckPorts checks the ports together, named (DefaultName): each has a device and
// a problem, a name that is a subject token, and neither the device nor the name is
// another port's. The config loader and Validate both use it, so that a file and a
// program's Config get the same checks.
func CheckPorts(ports []PortConfig) []PortError {
	var errs []PortError
	fail := func(i int, key, format string, args ...any) {
		errs = append(errs, PortError{Index: i, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	names, devices, tables := map[string]int{}, map[string]int{}, map[int]int{}
	for i, p := range ports {
		if j, dup := tables[p.Table]; dup && p.Table != 0 {
			fail(i, "table", "%d is also the table of [[port]] %d: a game is played on one board", p.Table, j+1)
		} else {
			tables[p.Table] = i
		}
		if !bus.ValidToken(p.Name) {
			fail(i, "name", "%q: want lowercase letters, digits, '-' and '_' (it is a subject token)", p.Name)
		} else if j, dup := names[p.Name]; dup {
			fail(i, "name", "%q is also the name of [[port]] %d: give each port its own name", p.Name, j+1)
		} else {
			names[p.Name] = i
		}
		switch j, dup := devices[p.Device]; {
		case p.Device == "":
			fail(i, "device", "missing: the serial device's path (such as /dev/serial/by-id/...), or - for stdin/stdout")
		case dup:
			fail(i, "device", "%s is also the device of [[port]] %d", p.Device, j+1)
		default:
			devices[p.Device] = i
		}
		if p.Problem == "" {
			fail(i, "problem", "missing: one of %s", strings.Join(engine.Names(), ", "))
		}
	}
	return errs
}

// DefaultName makes a port name from a device path: "stdio" for "-", else the path's
// last element, lowercased, with anything but letters, digits, '-' and '_' made '_'
// (/dev/ttyUSB0 is "ttyusb0").
func DefaultName(device string) string {
	if device == serialio.Stdio {
		return "stdio"
	}
	base := strings.ToLower(filepath.Base(device))
	b := []byte(base)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "port"
	}
	return string(b)
}
