package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/logging"
)

// Environment variables that carry NATS secrets, used when the flag is not given, so
// they need not show in the process list.
const (
	envNATSPassword = "SCOREBOARD_NATS_PASSWORD"
	envNATSToken    = "SCOREBOARD_NATS_TOKEN"
)

// defaultNATSURL is where the tools find a daemon's embedded server by default.
const defaultNATSURL = "nats://" + bus.DefaultListen

// natsFlags are the NATS connection flags shared by run, work, solve, send and watch.
type natsFlags struct {
	url, user, password, token string
	nkey, creds                string
	tlsCA, tlsCert, tlsKey     string
	prefix                     string
}

// addNATSFlags binds the NATS connection flags to fs. urlHelp says what an empty
// --nats-url means for the command.
func addNATSFlags(fs *flag.FlagSet, urlHelp string) *natsFlags {
	f := &natsFlags{}
	fs.StringVar(&f.url, "nats-url", "", "NATS server `URL`s, comma-separated; "+urlHelp)
	fs.StringVar(&f.user, "nats-user", "", "NATS user `name`")
	fs.StringVar(&f.password, "nats-password", "", "NATS `password` (or $"+envNATSPassword+")")
	fs.StringVar(&f.token, "nats-token", "", "NATS authentication `token` (or $"+envNATSToken+")")
	fs.StringVar(&f.nkey, "nats-nkey", "", "`file` holding an nkey seed to authenticate with")
	fs.StringVar(&f.creds, "nats-creds", "", "NATS credentials `file` (user JWT and nkey seed)")
	fs.StringVar(&f.tlsCA, "nats-tls-ca", "", "PEM `file` of CAs to trust for the server's certificate")
	fs.StringVar(&f.tlsCert, "nats-tls-cert", "", "client certificate PEM `file`, for TLS client authentication")
	fs.StringVar(&f.tlsKey, "nats-tls-key", "", "client certificate's private key PEM `file`")
	fs.StringVar(&f.prefix, "nats-prefix", bus.DefaultPrefix, "first `token`(s) of every subject")
	return f
}

// check validates the flags that do not need a connection.
func (f *natsFlags) check() error {
	if !bus.ValidPrefix(f.prefix) {
		return fmt.Errorf("--nats-prefix %q: want dot-separated tokens of lowercase letters, digits, '-' and '_'", f.prefix)
	}
	return nil
}

// options are the connection options for url, with the secrets from the environment
// where the flags leave them out.
func (f *natsFlags) options(url, name string) bus.ConnOptions {
	o := bus.ConnOptions{
		URL:          url,
		User:         f.user,
		Password:     f.password,
		Token:        f.token,
		NKeySeedFile: f.nkey,
		CredsFile:    f.creds,
		TLSCA:        f.tlsCA,
		TLSCert:      f.tlsCert,
		TLSKey:       f.tlsKey,
		Name:         name,
	}
	if o.Password == "" {
		o.Password = os.Getenv(envNATSPassword)
	}
	if o.Token == "" {
		o.Token = os.Getenv(envNATSToken)
	}
	return o
}

// connect connects a tool to --nats-url, or to a local daemon's embedded server when
// it is empty.
func (f *natsFlags) connect(name string, log zerolog.Logger) (*nats.Conn, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return bus.Connect(f.options(f.urlOrDefault(), name), log)
}

// connectWait is connect for a process that may start before its server: it waits
// for it until ctx ends (bus.ConnectWait).
func (f *natsFlags) connectWait(ctx context.Context, name string, log zerolog.Logger) (*nats.Conn, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	return bus.ConnectWait(ctx, f.options(f.urlOrDefault(), name), log)
}

func (f *natsFlags) urlOrDefault() string {
	if f.url == "" {
		return bus.DefaultURL(os.Getenv) // $NATS_URL, else defaultNATSURL
	}
	return f.url
}

func (f *natsFlags) subjects() bus.Subjects { return bus.Subjects{Prefix: f.prefix} }

// set takes the connection settings merged by loadConfig (flags over environment
// over file).
func (f *natsFlags) set(n configNATS) {
	*f = natsFlags{
		url: n.URL, user: n.User, password: n.Password, token: n.Token,
		nkey: n.NKey, creds: n.Creds, tlsCA: n.TLSCA, tlsCert: n.TLSCert, tlsKey: n.TLSKey,
		prefix: n.Prefix,
	}
}

// logFlags are --log-level and --log-format.
type logFlags struct{ level, format string }

func addLogFlags(fs *flag.FlagSet) *logFlags {
	l := &logFlags{}
	fs.StringVar(&l.level, "log-level", "info", "log `level`: trace, debug, info, warn or error")
	fs.StringVar(&l.format, "log-format", "", "log `format`: json (lines on stderr), console or journald; empty: journald under systemd, console on a terminal, json otherwise")
	return l
}

// set takes the log settings merged by loadConfig.
func (l *logFlags) set(c configLog) { l.level, l.format = c.Level, c.Format }

// logger builds the logger the flags ask for: the logging package's formats (json,
// console, journald, or picked from where stderr goes) when w is the process's
// stderr; JSON lines otherwise (a command run in-process by a test), one writer at a
// time, since every actor logs.
func (l *logFlags) logger(w io.Writer) (zerolog.Logger, error) {
	if f, ok := w.(*os.File); ok {
		log, _, err := logging.New(logging.Options{Level: l.level, Format: l.format, Stderr: f})
		return log, err
	}
	lv, err := logging.ParseLevel(l.level)
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
