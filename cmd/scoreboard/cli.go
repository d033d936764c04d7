package main

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/engine"
)

// The command line is cobra's (spf13/cobra, on spf13/pflag): it parses, finds the
// command, prints the help, and generates the man pages, docs/cli.md and the shell
// completions from the same command tree (gen.go). What is the scoreboard's own:
// the settings' declarations (config/settings.go) and their layering (config/load.go), the help
// grouped by setting, and mistakes on one line with a hint, exit status 2.

// Set at build time: -ldflags "-X main.version=1.2.3 -X main.commit=abc123".
var (
	version = "dev"
	commit  = "" // empty: the build's vcs.revision, when Go recorded one
)

// versionString is the version as the logs, $SRV.INFO and /metrics show it: the
// semantic version the NATS micro service requires.
func versionString() string { return bus.SemVer(version) }

// commitString is the commit the binary was built from.
func commitString() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	return "unknown"
}

// versionLine is what `scoreboard version` prints.
func versionLine() string {
	return fmt.Sprintf("scoreboard %s (commit %s, %s)", versionString(), commitString(), runtime.Version())
}

// commands makes each subcommand's cobra.Command; each file registers its own in
// init. They are made again for each run of runMain, so that tests may run commands
// in-process, in parallel.
var commands []func(stdio) *cobra.Command

func register(c func(stdio) *cobra.Command) { commands = append(commands, c) }

// newRoot is the whole command tree.
func newRoot(io stdio) *cobra.Command {
	root := &cobra.Command{
		Use:   "scoreboard",
		Short: "the Go club scoreboard daemon and its tools",
		Long: "scoreboard reads Go and Othello board dumps from serial ports, has workers on NATS\n" +
			"answer them, and writes the answers back; and the tools around it.\n\n" +
			"Flags may go anywhere among the arguments; after -- everything is an argument.\n" +
			"A setting's flag, environment variable and config file key follow one rule:\n" +
			"--history-max-bytes, $SCOREBOARD_HISTORY_MAX_BYTES, history.max_bytes; the flag\n" +
			"wins over the environment, which wins over the file (docs/cli.md).\n\n" +
			"Exit status: 0 done, 1 failed, 2 a mistake on the command line.",
		Args:              cobra.ArbitraryArgs,
		SilenceErrors:     true,
		SilenceUsage:      true,
		DisableAutoGenTag: true,
		Version:           versionString(),
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{cmd: "scoreboard", msg: "no command", hint: rootHint}
			}
			return unknownCommand(cmd, args[0])
		},
	}
	root.SetIn(io.in)
	root.SetOut(io.out)
	root.SetErr(io.err)
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetHelpFunc(help)
	root.SetFlagErrorFunc(flagError)
	for _, c := range commands {
		root.AddCommand(c(io))
	}
	root.AddCommand(versionCommand(io), completionCommand(root, io), manpageCommand(root))
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [COMMAND]",
		Short: "prints a command's help",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("want at most one COMMAND, got %d arguments", len(args))
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return commandNames(root), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return root.Help()
			}
			c, _, err := root.Find(args)
			if err != nil || c == root {
				return unknownCommand(root, args[0])
			}
			return c.Help()
		},
	})
	// The help lists flags in the order they are declared, by group.
	var keepOrder func(*cobra.Command)
	keepOrder = func(c *cobra.Command) {
		c.Flags().SortFlags = false
		for _, sub := range c.Commands() {
			keepOrder(sub)
		}
	}
	keepOrder(root)
	return root
}

const rootHint = "'scoreboard --help' lists the commands"

func commandNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

func unknownCommand(root *cobra.Command, name string) error {
	if strings.HasPrefix(name, "-") {
		return &usageError{cmd: "scoreboard", msg: fmt.Sprintf("%s but no command: 'scoreboard COMMAND %s ...'", name, name), hint: rootHint}
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := config.Suggest(name, commandNames(root)); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	return &usageError{cmd: "scoreboard", msg: msg, hint: rootHint}
}

// help prints a command's description, usage, subcommands and flags, grouped as
// the settings are (settings.go), each with its default and its environment variable.
func help(cmd *cobra.Command, _ []string) {
	// Not there yet when `help COMMAND` asks.
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	w := cmd.OutOrStdout()
	desc := cmd.Long
	if desc == "" {
		desc = cmd.Short
	}
	use := cmd.UseLine()
	if cmd.HasAvailableSubCommands() {
		use = cmd.CommandPath() + " COMMAND [flags] [args]"
	}
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n", strings.TrimSpace(desc), use)
	if cmd.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", cmd.Example)
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintln(w, "\nCommands:")
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() || c.Name() == "help" {
				fmt.Fprintf(w, "  %-10s %s\n", c.Name(), c.Short)
			}
		}
		fmt.Fprintf(w, "\nRun '%s COMMAND --help' for a command's flags.\n", cmd.CommandPath())
	}
	byGroup := map[string]*pflag.FlagSet{}
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g := config.GroupOptions
		if a := f.Annotations[config.GroupAnnotation]; len(a) > 0 {
			g = a[0]
		}
		if byGroup[g] == nil {
			byGroup[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
			byGroup[g].SortFlags = false
		}
		byGroup[g].AddFlag(f)
	})
	for _, g := range config.Groups {
		if fs := byGroup[g]; fs != nil {
			heading := strings.ToUpper(g[:1]) + g[1:] + " flags"
			if g == config.GroupOptions {
				heading = "Flags"
			}
			fmt.Fprintf(w, "\n%s:\n%s", heading, fs.FlagUsagesWrapped(100))
		}
	}
}

// usageError is a mistake on the command line: runMain prints it on one line with
// a hint, and exits 2.
type usageError struct {
	cmd  string // "scoreboard run"; empty: the command that returned it
	msg  string
	hint string // empty: where the command's usage is
}

func (e *usageError) Error() string {
	hint := e.hint
	if hint == "" {
		hint = fmt.Sprintf("'%s --help' shows the usage", e.cmd)
	}
	return fmt.Sprintf("%s: %s (%s)", e.cmd, e.msg, hint)
}

// usagef is a usageError of the command that returns it.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// flagError makes pflag's errors one line with a hint.
func flagError(cmd *cobra.Command, err error) error {
	var (
		notExist *pflag.NotExistError
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
	)
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		if msg := config.RemovedFlag(name); msg != "" {
			return usagef("--%s: removed: %s", name, msg)
		}
		if !cmd.HasParent() {
			return unknownCommand(cmd, "--"+name)
		}
		names, canonical := flagNames(cmd)
		if s := config.Suggest(name, names); s != "" {
			if c, ok := canonical[s]; ok {
				s = c
			}
			return usagef("unknown flag --%s; did you mean --%s?", name, s)
		}
		return usagef("unknown flag --%s", name)
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		return usagef("--%s %q: want %s", f.Name, invalid.GetValue(), wantFlag(f))
	case errors.As(err, &required):
		return usagef("flag needs an argument: --%s", required.GetFlag().Name)
	}
	return usagef("%v", err)
}

func wantFlag(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "int":
		return "a whole number"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 2s or 500ms"
	}
	return "a valid value"
}

// flagNames are the names a mistyped flag may have meant: the command's flags, and
// the former names of its settings', with the names they now have.
func flagNames(cmd *cobra.Command) (names []string, canonical map[string]string) {
	canonical = map[string]string{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	for _, s := range config.All() {
		if s.Alias() != "" && cmd.Flags().Lookup(s.Flag()) != nil {
			names = append(names, s.Alias())
			if !strings.HasPrefix(s.Alias(), "no-") {
				canonical[s.Alias()] = s.Flag()
			}
		}
	}
	return names, canonical
}

// lookupProblem finds a problem named on the command line; an unknown one is a
// usage error.
func lookupProblem(name string) (engine.Problem, error) {
	if p, ok := engine.Lookup(name); ok {
		return p, nil
	}
	return nil, usagef("%v", config.ProblemError(name))
}

// completeProblems completes a PROBLEM argument or flag.
func completeProblems(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return engine.Names(), cobra.ShellCompDirectiveNoFileComp
}

// problemArgs checks a command's arguments: a PROBLEM, then at most extra more (a
// FILE).
func problemArgs(extra int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < 1 || len(args) > 1+extra {
			return usagef("want %s, got %d arguments (problems: %s)", what, len(args), strings.Join(engine.Names(), ", "))
		}
		_, err := lookupProblem(args[0])
		return err
	}
}

// noArgs refuses arguments, saying what the command takes instead.
func noArgs(takes string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unexpected argument %q: %s %s", args[0], cmd.Name(), takes)
		}
		return nil
	}
}

func versionCommand(io stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "prints the version, the commit and the Go version",
		Args:  noArgs("takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(io.out, versionLine())
			return err
		},
	}
}

func completionCommand(root *cobra.Command, io stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "prints the shell's completion script",
		Long: "Prints the completion script of bash, zsh or fish on stdout: commands, flags,\n" +
			"problems and log levels. For the current shell: source <(scoreboard completion bash).",
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(cmd.ValidArgs, args[0]) {
				return usagef("want one shell: bash, zsh or fish")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(io.out, true)
			case "zsh":
				return root.GenZshCompletion(io.out)
			default:
				return root.GenFishCompletion(io.out, true)
			}
		},
	}
}

func manpageCommand(root *cobra.Command) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "manpage --directory DIR",
		Short:  "writes the man pages: scoreboard.1 and one per command",
		Hidden: true,
		Args:   noArgs("takes only --directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usagef("--directory: want the directory to write the man pages in")
			}
			return writeManPages(root, dir)
		},
	}
	cmd.Flags().StringVar(&dir, "directory", "", "the `directory` to write the man pages in")
	return cmd
}

// checkPositive is a duration flag's check.
func checkPositive(flag string, d time.Duration, example string) error {
	if d <= 0 {
		return usagef("--%s %v: want a positive duration such as %s", flag, d, example)
	}
	return nil
}
