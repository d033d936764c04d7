package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/daemon"
)

// addSettings gives cmd the flags of the settings of keys (settings.go), and returns
// what loads them once the command line is parsed: from the flags given, the
// environment, and the config file at path ("" for none).
func addSettings(cmd *cobra.Command, keys ...string) func(path string) (config.Config, error) {
	ss := config.Lookup(keys...)
	config.Bind(cmd.Flags(), ss, &config.Config{}, &daemon.PortConfig{})
	complete := map[string][]string{
		"port-problem": nil, // the problems
		"log-level":    {"trace", "debug", "info", "warn", "error"},
		"log-format":   {"json", "console", "journald"},
	}
	for _, s := range ss {
		if words, ok := complete[s.Flag()]; ok {
			f := completeProblems
			if words != nil {
				f = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
					return words, cobra.ShellCompDirectiveNoFileComp
				}
			}
			_ = cmd.RegisterFlagCompletionFunc(s.Flag(), f)
		}
	}
	return func(path string) (config.Config, error) { return config.Load(cmd.Flags(), ss, path) }
}

// quietLogger is the logger of the one-shot tools (solve, send, watch): they report
// errors themselves, so only the bus's warnings (disconnects) show, as console lines.
// Colours only on a terminal: in a file they are noise.
func quietLogger(w io.Writer) zerolog.Logger {
	f, ok := w.(*os.File)
	color := ok && isatty.IsTerminal(f.Fd())
	return zerolog.New(zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05", NoColor: !color}).Level(zerolog.WarnLevel).With().Timestamp().Logger()
}
