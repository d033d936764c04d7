// Command scoreboard is the Go club scoreboard daemon and its tools.
//
// Each subcommand lives in a file of its own and registers itself in init. The
// command line is the standard library's flag package, one FlagSet a subcommand:
// flag.Visit tells which flags were given, which is all the config file's
// precedence (flag over environment over file) needs, and the usage stays plain Go
// flags that every Go user reads; a CLI framework would add a dependency for
// nothing those seven subcommands use.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"syscall"

	"github.com/rs/zerolog"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// command is one subcommand.
type command struct {
	name    string
	summary string
	// run executes the command with its arguments (after the command name). It returns
	// errExitQuiet when it has already told the user what went wrong.
	run func(ctx context.Context, args []string, stdio stdio) error
}

// stdio is the command's view of the process's standard streams, so tests can run
// commands in-process.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// errExitQuiet makes main exit 1 without printing anything more.
var errExitQuiet = errors.New("exit 1")

// errUsage makes main exit 2: the command line was wrong, and the flag package said so.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
	stop()
	os.Exit(code)
}

func runMain(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(io.err)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(io.out, "scoreboard", version)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(io.err, "scoreboard: unknown command %q\n", args[0])
		usage(io.err)
		return 2
	}
	err := c.run(ctx, args[1:], io)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errExitQuiet):
		return 1
	default:
		fmt.Fprintf(io.err, "scoreboard %s: %v\n", c.name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: scoreboard COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "  version   prints the version")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'scoreboard COMMAND --help' for a command's flags.")
}

// keepOnHangup catches SIGHUP for a daemon command (run, work) until it returns:
// SIGHUP would otherwise end the process at once, with no log line and no drain.
// Reloading the configuration is not supported yet, so each one is logged and the
// running configuration is kept.
func keepOnHangup(log zerolog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				log.Warn().Msg("SIGHUP: reloading the configuration is not supported yet; the running configuration is kept")
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// tuneGC lets the heap grow to five times the live heap between collections, unless
// $GOGC says otherwise. The daemons' live heap is a few megabytes, but every unit
// allocates its NATS messages, so under load Go's default (double) collects hundreds
// of times a second; run --port - answers about a fifth more boards a second this
// way, for a few megabytes more.
//
// A soft memory limit of 128 MiB (unless $GOMEMLIMIT says otherwise) keeps that
// factor of five from applying to a flood of large messages: near the limit the
// collector runs as often as it must.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(128 << 20)
	}
}

// newFlagSet returns a flag set that reports errors instead of exiting, and prints
// its usage to io.err.
func newFlagSet(name, argsUsage, about string, io stdio) *flag.FlagSet {
	fs := flag.NewFlagSet("scoreboard "+name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		fmt.Fprintf(io.err, "usage: scoreboard %s [flags] %s\n\n%s\n", name, argsUsage, about)
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(io.err, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args, turning the flag package's errors into errUsage (it has
// already printed them) and -h into flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}
