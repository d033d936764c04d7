// Command scoreboard is the Go club scoreboard daemon and its tools.
//
// Each subcommand lives in a file of its own and registers itself in init, and
// declares its flags there. The command line is the standard library's flag
// package, one FlagSet a subcommand: flag.Visit tells which flags were given, which
// is all the config file's precedence (flag over environment over file) needs.
// parseFlags adds what the flag package lacks: flags anywhere among the arguments,
// and one-line mistakes with a did-you-mean instead of the whole usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/engine"
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
	stop()
	os.Exit(code)
}

func runMain(ctx context.Context, args []string, io stdio) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help") {
		usage(io.err)
		return 0
	}
	if len(args) == 0 {
		fmt.Fprintln(io.err, "scoreboard: no command ('scoreboard --help' lists the commands)")
		return 2
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(io.out, "scoreboard", version)
		return 0
	}
	if strings.HasPrefix(args[0], "-") {
		// Flags before the command: they are the command's, so the command goes first.
		if i := slices.IndexFunc(args, func(a string) bool { _, ok := commands[a]; return ok }); i > 0 {
			args = append(append([]string{args[i]}, args[:i]...), args[i+1:]...)
		}
	}
	c, ok := commands[args[0]]
	if !ok {
		names := slices.Sorted(maps.Keys(commands))
		switch s := suggest(strings.TrimLeft(args[0], "-"), names); {
		case strings.HasPrefix(args[0], "-"):
			fmt.Fprintf(io.err, "scoreboard: %s but no command: 'scoreboard COMMAND %s ...' ('scoreboard --help' lists the commands)\n", args[0], args[0])
		case s != "":
			fmt.Fprintf(io.err, "scoreboard: unknown command %q; did you mean %s? ('scoreboard --help' lists the commands)\n", args[0], s)
		default:
			fmt.Fprintf(io.err, "scoreboard: unknown command %q ('scoreboard --help' lists the commands)\n", args[0])
		}
		return 2
	}
	err := c.run(ctx, args[1:], io)
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(io.err, ue)
		return 2
	case errors.Is(err, errExitQuiet):
		return 1
	case errors.As(err, new(interface{ ExitCode() int })):
		// An error that knows its exit code (bus's missing worker rights: 2).
		fmt.Fprintf(io.err, "scoreboard %s: %v\n", c.name, err)
		var ec interface{ ExitCode() int }
		errors.As(err, &ec)
		return ec.ExitCode()
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
	fmt.Fprintln(w, "Run 'scoreboard COMMAND --help' for a command's flags; flags may go anywhere")
	fmt.Fprintln(w, "among the arguments, and after -- everything is an argument.")
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

// newFlagSet returns a flag set whose usage (printed only on --help) goes to io.err.
// Parse it with parseFlags.
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

// usageError is a mistake on the command line: main prints it on one line, with where
// to read the usage, and exits 2.
type usageError struct {
	cmd string // "scoreboard run"
	msg string
}

func (e *usageError) Error() string {
	return fmt.Sprintf("%s: %s ('%s --help' shows the usage)", e.cmd, e.msg, e.cmd)
}

// usageErr is a usageError about fs's command.
func usageErr(fs *flag.FlagSet, format string, args ...any) error {
	return &usageError{cmd: fs.Name(), msg: fmt.Sprintf(format, args...)}
}

// parseFlags parses args with the flags anywhere among the positional arguments (up
// to a "--", after which everything is positional): the flag package stops at the
// first positional argument, so it is parsed again after each one. A mistake is a
// usageError with a hint instead of the whole usage; -h or --help prints the usage
// and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	out := fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = usage; fs.SetOutput(out) }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return err
			}
			return flagError(fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Parse again with only the positional arguments, for fs.Args; the flags keep
	// their values.
	return fs.Parse(append([]string{"--"}, positional...))
}

// flagError turns the flag package's error into a usageError with a hint.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := suggest(name, names); s != "" {
			return usageErr(fs, "unknown flag --%s; did you mean --%s?", name, s)
		}
		return usageErr(fs, "unknown flag --%s", name)
	}
	// "invalid value "x" for flag -baud: parse error": say what the flag wants.
	var value, name string
	_, e := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name)
	if e != nil {
		_, e = fmt.Sscanf(msg, "invalid boolean value %q for -%s", &value, &name)
	}
	if e == nil {
		name = strings.TrimSuffix(name, ":")
		want := "a valid value"
		if f := fs.Lookup(name); f != nil {
			switch f.Value.(flag.Getter).Get().(type) {
			case int, int64, uint, uint64:
				want = "a whole number"
			case float64:
				want = "a number"
			case bool:
				want = "true or false"
			case time.Duration:
				want = "a duration such as 2s or 500ms"
			}
		}
		return usageErr(fs, "--%s %q: want %s", name, value, want)
	}
	// "flag needs an argument: -port"
	msg = strings.ReplaceAll(msg, "flag -", "flag --")
	msg = strings.ReplaceAll(msg, "argument: -", "argument: --")
	return usageErr(fs, "%s", msg)
}

// suggest returns the candidate closest to what the user typed, if one is close
// enough to be what they meant: a prefix of it, or a few letters apart.
func suggest(typed string, candidates []string) string {
	best, bestDist := "", max(1, len(typed)/3)+1
	for _, c := range candidates {
		if d := editDistance(typed, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" && len(typed) >= 3 {
		for _, c := range candidates {
			if strings.HasPrefix(c, typed) {
				return c
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance, with a swap of two neighbours counting
// one (the commonest typo).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// lookupProblem finds a problem by name, or says which ones there are.
func lookupProblem(name string) (engine.Problem, error) {
	if p, ok := engine.Lookup(name); ok {
		return p, nil
	}
	hint := ""
	if s := suggest(name, engine.Names()); s != "" {
		hint = fmt.Sprintf("; did you mean %s?", s)
	}
	return nil, fmt.Errorf("unknown problem %q%s (problems: %s)", name, hint, strings.Join(engine.Names(), ", "))
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
