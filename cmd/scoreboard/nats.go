package main

import (
	"context"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/logging"
)

// addSettings gives cmd the flags of the settings of keys (settings.go), and returns
// what loads them once the command line is parsed: from the flags given, the
// environment, and the config file at path ("" for none).
func addSettings(cmd *cobra.Command, keys ...string) func(path string) (config, error) {
	ss := lookupSettings(keys...)
	bindSettings(cmd.Flags(), ss, &config{}, &daemon.PortConfig{})
	complete := map[string][]string{
		"port-problem": nil, // the problems
		"log-level":    {"trace", "debug", "info", "warn", "error"},
		"log-format":   {"json", "console", "journald"},
	}
	for _, s := range ss {
		if words, ok := complete[s.flag()]; ok {
			f := completeProblems
			if words != nil {
				f = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
					return words, cobra.ShellCompDirectiveNoFileComp
				}
			}
			_ = cmd.RegisterFlagCompletionFunc(s.flag(), f)
		}
	}
	return func(path string) (config, error) { return loadConfig(cmd.Flags(), ss, path) }
}

// defaultNATSURL is where the tools find a daemon's embedded server by default.
const defaultNATSURL = "nats://" + bus.DefaultListen

// connOptions are the connection options of c's [nats] settings for url.
func (c *config) connOptions(url, name string) bus.ConnOptions {
	n := c.NATS
	return bus.ConnOptions{
		URL: url, User: n.User, Password: n.Password, Token: n.Token,
		NKeySeedFile: n.NKey, CredsFile: n.Creds, TLSCA: n.TLSCA, TLSCert: n.TLSCert, TLSKey: n.TLSKey,
		Name: name,
	}
}

// connect connects a tool to nats.url, or to a local daemon's embedded server when
// it is empty.
func (c *config) connect(name string, log zerolog.Logger) (*nats.Conn, error) {
	return bus.Connect(c.connOptions(c.natsURL(), name), log)
}

// connectWait is connect for a process that may start before its server: it waits
// for it until ctx ends (bus.ConnectWait).
func (c *config) connectWait(ctx context.Context, name string, log zerolog.Logger) (*nats.Conn, error) {
	return bus.ConnectWait(ctx, c.connOptions(c.natsURL(), name), log)
}

func (c *config) natsURL() string {
	if c.NATS.URL == "" {
		return defaultNATSURL
	}
	return c.NATS.URL
}

func (c *config) subjects() bus.Subjects { return bus.Subjects{Prefix: c.NATS.Prefix} }

// logger builds the logger the settings ask for: the logging package's formats
// (json, console, journald, or picked from where stderr goes) when w is the
// process's stderr; JSON lines otherwise (a command run in-process by a test), one
// writer at a time, since every actor logs.
func (c *config) logger(w io.Writer) (zerolog.Logger, error) {
	if f, ok := w.(*os.File); ok {
		log, _, err := logging.New(logging.Options{Level: c.Log.Level, Format: c.Log.Format, Stderr: f})
		return log, err
	}
	lv, err := logging.ParseLevel(c.Log.Level)
	if err != nil {
		return zerolog.Nop(), err
	}
	return zerolog.New(zerolog.SyncWriter(w)).Level(lv).With().Timestamp().Logger(), nil
}

// quietLogger is the logger of the one-shot tools (solve, send, watch): they report
// errors themselves, so only the bus's warnings (disconnects) show, as console lines.
// Colours only on a terminal: in a file they are noise.
func quietLogger(w io.Writer) zerolog.Logger {
	f, ok := w.(*os.File)
	color := ok && isatty.IsTerminal(f.Fd())
	return zerolog.New(zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05", NoColor: !color}).Level(zerolog.WarnLevel).With().Timestamp().Logger()
}
