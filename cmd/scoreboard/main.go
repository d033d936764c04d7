// Command scoreboard is the Go club scoreboard daemon and its tools.
//
// Each subcommand lives in a file of its own and registers itself in init. The
// command line is cobra's (cli.go); the settings of run, work and the tools are
// declared once (config/settings.go) and layered from the flags, the environment and the
// config file (config/load.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/internal/memlimit"
	"github.com/goclub/scoreboard/internal/profile"

	"github.com/rs/zerolog"
)

// stdio is the command's view of the process's standard streams, so tests can run
// commands in-process.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// errExitQuiet makes main exit 1 without printing anything more.
var errExitQuiet = errors.New("exit 1")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	endProfile := profile.CPU(os.Getenv("SCOREBOARD_CPUPROFILE"), os.Stderr)
	profile.Heap(ctx, os.Getenv("SCOREBOARD_HEAPPROFILE"), os.Stderr)
	profile.HeapPeak(ctx, os.Getenv("SCOREBOARD_HEAPPROFILE_PEAK"), os.Stderr)
	code := runMain(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
	endProfile()
	stop()
	os.Exit(code)
}

// runMain runs the command line args and returns the exit status: 0 done, 1 a
// failure, 2 a mistake on the command line (one line on stderr, with a hint).
func runMain(ctx context.Context, args []string, io stdio) int {
	root := newRoot(io)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if cmd == nil {
		cmd = root
	}
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		if ue.cmd == "" {
			ue.cmd = cmd.CommandPath()
		}
		fmt.Fprintln(io.err, ue)
		return 2
	case config.FromCommandLine(err):
		fmt.Fprintln(io.err, &usageError{cmd: cmd.CommandPath(), msg: err.Error()})
		return 2
	case errors.Is(err, errExitQuiet):
		return 1
	default:
		fmt.Fprintf(io.err, "%s: %v\n", cmd.CommandPath(), err)
		// An error that knows its exit code: bus's missing worker rights is 2.
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return 1
	}
}

// keepOnHangup catches SIGHUP for work, whose flags are its whole configuration,
// until it returns: SIGHUP would otherwise end the process at once, with no log line
// and no drain. Each one is logged and the running configuration is kept (run
// reloads its config file instead: reload.go).
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
// of times a second; run --port-device - answers about a fifth more boards a second
// this way, for a few megabytes more.
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

// applyBudget sets Go's soft memory limit from c's memory budget (memory.budget,
// or the machine's share for hub or run) unless $GOMEMLIMIT is set. It returns the
// budget, and the log of what it set (a daemon whose RSS is asked about says what it
// was given), called once the command has started: a command that cannot start
// says why in one line, without the budget before it.
func applyBudget(c config.Config, hub bool, log zerolog.Logger) (budget int64, logBudget func()) {
	budget, from := c.MemoryBudget(hub)
	a := memlimit.Apply(budget, os.Getenv)
	return budget, func() {
		log.Info().Int64("budget_mib", a.Budget>>20).Str("budget_from", from).Int64("gomemlimit_mib", a.Limit>>20).Str("gomemlimit_from", a.From).Int64("program_mib", a.Program>>20).
			Msg("memory budget")
	}
}

// openInput opens the file a command reads its units from; an error says what to
// give instead.
func openInput(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (give a readable file of units, or - or nothing for stdin)", err)
	}
	return f, nil
}

// input is what a command reads its units from: the file args[i] names (openInput),
// or stdin when args has no i-th or it is "-". The caller closes it.
func (s stdio) input(args []string, i int) (io.ReadCloser, error) {
	if len(args) <= i || args[i] == "-" {
		return io.NopCloser(s.in), nil
	}
	f, err := openInput(args[i])
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}
