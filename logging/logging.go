// Package logging builds the daemon's zerolog logger from a level and a format: JSON
// lines on stderr by default, human console output on a terminal, and journald's
// native protocol when systemd started the daemon.
package logging

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/journald"
)

// The fields every part of the daemon uses, so that logs can be filtered by them.
const (
	FieldComponent = "component"  // the actor or subsystem: reader, writer, worker, bus, nats, ...
	FieldPort      = "port"       // a port's name, as in subjects
	FieldProblem   = "problem"    // a problem's name
	FieldSeq       = "seq"        // a unit's per-port sequence number
	FieldElapsed   = "elapsed_ms" // a duration, in milliseconds, as every Dur field: named _ms
)

// TimeFormat is the format of the time field: RFC 3339 with milliseconds, since the
// default whole seconds cannot order the lines of one unit.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

func init() {
	// zerolog keeps these as globals read on every event; setting them here, before
	// any logger exists, keeps them free of races.
	zerolog.TimeFieldFormat = TimeFormat
	zerolog.DurationFieldUnit = time.Millisecond
}

// Format is how log lines are written.
type Format string

// The formats. Auto picks one from where stderr goes (see Detect).
const (
	Auto     Format = ""
	JSON     Format = "json"
	Console  Format = "console"
	Journald Format = "journald"
)

// Formats lists the formats a user can ask for.
var Formats = []Format{JSON, Console, Journald}

// ParseFormat checks a format name; "" and "auto" mean Auto.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case Auto, "auto":
		return Auto, nil
	case JSON, Console, Journald:
		return f, nil
	}
	return "", fmt.Errorf("log format %q: want json, console or journald", s)
}

// Levels lists the levels a user can ask for, most verbose first.
var Levels = []string{"trace", "debug", "info", "warn", "error"}

// ParseLevel checks a level name; "" means info.
func ParseLevel(s string) (zerolog.Level, error) {
	switch strings.ToLower(s) {
	case "":
		return zerolog.InfoLevel, nil
	case "warning":
		return zerolog.WarnLevel, nil
	}
	for _, name := range Levels {
		if strings.EqualFold(s, name) {
			return zerolog.ParseLevel(name)
		}
	}
	return zerolog.NoLevel, fmt.Errorf("log level %q: want one of %s", s, strings.Join(Levels, ", "))
}

// Options configure New.
type Options struct {
	Level  string // trace, debug, info (the default), warn, error
	Format string // json, console, journald, or "" to detect
	// Stderr is where json and console lines go, and what Auto looks at; nil means
	// os.Stderr.
	Stderr *os.File
}

// New builds the logger, and says which format it chose.
func New(o Options) (zerolog.Logger, Format, error) {
	level, err := ParseLevel(o.Level)
	if err != nil {
		return zerolog.Nop(), "", err
	}
	format, err := ParseFormat(o.Format)
	if err != nil {
		return zerolog.Nop(), "", err
	}
	out := o.Stderr
	if out == nil {
		out = os.Stderr
	}
	if format == Auto {
		format = Detect(out)
	}
	var w io.Writer
	switch format {
	case JSON:
		w = out
	case Console:
		w = consoleWriter(out, !isatty.IsTerminal(out.Fd()))
	case Journald:
		if !journal.Enabled() {
			return zerolog.Nop(), "", errors.New("log format journald: no systemd journal on this machine (/run/systemd/journal/socket)")
		}
		w = journald.NewJournalDWriter()
	}
	return newLogger(w, level), format, nil
}

func newLogger(w io.Writer, level zerolog.Level) zerolog.Logger {
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

func consoleWriter(w io.Writer, noColor bool) zerolog.ConsoleWriter {
	return zerolog.ConsoleWriter{Out: w, NoColor: noColor, TimeFormat: "15:04:05.000"}
}

// Detect picks the format for a destination: journald when it is the stream systemd
// connected to the journal ($JOURNAL_STREAM names its device and inode), console on a
// terminal, JSON lines otherwise.
func Detect(f *os.File) Format {
	switch {
	case IsJournalStream(f):
		return Journald
	case isatty.IsTerminal(f.Fd()):
		return Console
	default:
		return JSON
	}
}

// IsJournalStream reports whether f is the stream systemd connected to the journal.
// Comparing device and inode, rather than only checking that $JOURNAL_STREAM is set,
// keeps a child whose stderr was redirected from logging into the journal behind the
// user's back.
func IsJournalStream(f *os.File) bool {
	dev, ino, ok := parseJournalStream(os.Getenv("JOURNAL_STREAM"))
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == dev && uint64(st.Ino) == ino
}

func parseJournalStream(s string) (dev, ino uint64, ok bool) {
	d, i, found := strings.Cut(s, ":")
	if !found {
		return 0, 0, false
	}
	dev, err1 := strconv.ParseUint(d, 10, 64)
	ino, err2 := strconv.ParseUint(i, 10, 64)
	return dev, ino, err1 == nil && err2 == nil
}
