package config

import (
	"context"
	"io"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/logging"
)

// ConnOptions are the connection options of c's [nats] settings for url.
func (c *Config) ConnOptions(url, name string) bus.ConnOptions {
	n := c.NATS
	return bus.ConnOptions{
		URL: url, User: n.User, Password: n.Password, Token: n.Token,
		NKeySeedFile: n.NKey, CredsFile: n.Creds, TLSCA: n.TLSCA, TLSCert: n.TLSCert, TLSKey: n.TLSKey,
		Name: name,
	}
}

// Connect connects a tool to nats.url, or to a local daemon's embedded server when
// it is empty.
func (c *Config) Connect(name string, log zerolog.Logger) (*nats.Conn, error) {
	return bus.Connect(c.ConnOptions(c.NATSURL(), name), log)
}

// ConnectWait is Connect for a process that may start before its server: it waits
// for it until ctx ends (bus.ConnectWait).
func (c *Config) ConnectWait(ctx context.Context, name string, log zerolog.Logger) (*nats.Conn, error) {
	return bus.ConnectWait(ctx, c.ConnOptions(c.NATSURL(), name), log)
}

// NATSURL is where a tool connects: nats.url, else $NATS_URL as every NATS client
// takes it, else a local daemon's embedded server.
func (c *Config) NATSURL() string {
	if c.NATS.URL == "" {
		return bus.DefaultURL(os.Getenv)
	}
	return c.NATS.URL
}

func (c *Config) Subjects() bus.Subjects { return bus.Subjects{Prefix: c.NATS.Prefix} }

// Logger builds the logger the settings ask for: the logging package's formats
// (json, console, journald, or picked from where stderr goes) when w is the
// process's stderr; JSON lines otherwise (a command run in-process by a test), one
// writer at a time, since every actor logs.
func (c *Config) Logger(w io.Writer) (zerolog.Logger, error) {
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
