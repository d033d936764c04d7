package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/logging"
)

func init() {
	register(command{
		name:    "run",
		summary: "the daemon: ports, workers, display writers, embedded NATS",
		run:     runRun,
	})
}

// runFlags are every flag of run, bound in one place. The settings they share with
// the config file (--config) are merged by loadConfig: a flag given on the command
// line wins over the file.
type runFlags struct {
	config string
	nats   *natsFlags
	listen string
	log    *logFlags
	port   daemon.PortConfig
	// The daemon's timing, flags only.
	requestTimeout, drain time.Duration
}

func addRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{}
	fs.StringVar(&f.config, "config", "", "the configuration `file` (TOML): NATS, logging, and one [[port]] table per scoreboard")
	f.nats = addNATSFlags(fs, "empty: embed a NATS server")
	fs.StringVar(&f.listen, "nats-listen", bus.DefaultListen, "the embedded NATS server's listener, `HOST:PORT` (port 0: any free one), or \"off\"")
	f.log = addLogFlags(fs)
	fs.StringVar(&f.port.Device, "port", "", "the scoreboard's serial device `PATH`, or - for stdin and stdout; none: workers only")
	fs.StringVar(&f.port.Problem, "problem", "", "the `problem` the port's dumps are: "+strings.Join(engine.Names(), ", "))
	fs.StringVar(&f.port.Name, "port-name", defaultPortName, "the port's `name` in subjects")
	fs.IntVar(&f.port.Line.Baud, "baud", 9600, "the serial line's speed, in bits per second")
	fs.IntVar(&f.port.Line.DataBits, "data-bits", 8, "the serial line's data bits, 5 to 8")
	fs.StringVar(&f.port.Line.Parity, "parity", "none", "the serial line's parity: none, odd, even, mark or space")
	fs.StringVar(&f.port.Line.StopBits, "stop-bits", "1", "the serial line's stop bits: 1, 1.5 or 2")
	fs.BoolVar(&f.port.ErrorLine, "error-line", false, "write a one-line error to the port for a unit that gets no answer (the contest protocol has none)")
	fs.DurationVar(&f.requestTimeout, "request-timeout", 2*time.Second, "how long a unit waits for a worker before it is sent again (3 attempts)")
	fs.DurationVar(&f.drain, "drain", 5*time.Second, "on SIGINT or SIGTERM, how long units in flight may still be answered")
	return f
}

// load merges the config file, the environment and the flags given into f, and
// returns the daemon's configuration.
func (f *runFlags) load(fs *flag.FlagSet) (daemon.Config, error) {
	c, err := loadConfig(f.config, fs)
	if err != nil {
		return daemon.Config{}, err
	}
	n := c.NATS
	*f.nats = natsFlags{
		url: n.URL, user: n.User, password: n.Password, token: n.Token,
		nkey: n.NKey, creds: n.Creds, tlsCA: n.TLSCA, tlsCert: n.TLSCert, tlsKey: n.TLSKey,
		prefix: n.Prefix,
	}
	f.listen = n.Listen
	f.log.level, f.log.format = c.Log.Level, c.Log.Format
	cfg := daemon.Config{Prefix: n.Prefix, RequestTimeout: f.requestTimeout, Drain: f.drain}
	for _, p := range c.Ports {
		cfg.Ports = append(cfg.Ports, daemon.PortConfig{
			Name: p.Name, Device: p.Device, Problem: p.Problem, Line: p.LineSettings, ErrorLine: p.ErrorLine,
		})
	}
	return cfg, cfg.Validate()
}

// newRunLogger builds the daemon's logger: the logging package's formats (json,
// console, journald, or picked from where stderr goes) when w is the process's
// stderr; JSON lines otherwise (a command run in-process by a test), one writer at a
// time, since every actor logs.
func newRunLogger(level, format string, w io.Writer) (zerolog.Logger, error) {
	if f, ok := w.(*os.File); ok {
		log, _, err := logging.New(logging.Options{Level: level, Format: format, Stderr: f})
		return log, err
	}
	lv, err := logging.ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), err
	}
	return zerolog.New(zerolog.SyncWriter(w)).Level(lv).With().Timestamp().Logger(), nil
}

func runRun(ctx context.Context, args []string, io stdio) error {
	about := "Runs the daemon. By default it embeds a NATS server, listening on --nats-listen\n" +
		"for local tools, and serves every problem on it (the 'scoreboard' micro service\n" +
		"and the dump consumer). With --nats-url it joins an existing NATS server or\n" +
		"cluster instead. With --port (or [[port]] tables in --config) it reads the\n" +
		"scoreboards' dumps from serial devices (or stdin, with -), has them solved, and\n" +
		"writes each answer back in order; at the end of stdin it exits once every unit\n" +
		"is answered. SIGINT or SIGTERM stop it cleanly: reading stops, and the units in\n" +
		"flight are answered within --drain."
	fs := newFlagSet("run", "", about, io)
	f := addRunFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	cfg, err := f.load(fs)
	if err != nil {
		return err
	}
	cfg.Stdin, cfg.Stdout = io.in, io.out
	log, err := newRunLogger(f.log.level, f.log.format, io.err)
	if err != nil {
		return err
	}
	return serve(ctx, f, cfg, log)
}

// serve runs the actors: the embedded NATS server (unless joining one), the workers,
// and the ports. It returns when ctx ends, or when every port has ended (stdin did).
func serve(ctx context.Context, f *runFlags, cfg daemon.Config, log zerolog.Logger) error {
	// The bus: the embedded server, or an existing one. The workers and the ports
	// have a connection each: one connection's single reader and writer would carry
	// every dump and every answer twice, and serialise the pipeline.
	var (
		connect func(name string) (*nats.Conn, error)
		url     string // what other processes connect to, if anything
	)
	if f.nats.url == "" {
		srv, err := bus.StartServer(f.listen, log)
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		url = srv.ClientURL()
		connect = func(name string) (*nats.Conn, error) {
			return bus.Connect(bus.ConnOptions{Server: srv, Name: name}, log)
		}
	} else {
		url = f.nats.url
		connect = func(name string) (*nats.Conn, error) {
			return bus.Connect(f.nats.options(f.nats.url, name), log)
		}
	}

	// The workers: solve the dumps of every port, and requests from anyone.
	wnc, err := connect("scoreboard run workers")
	if err != nil {
		return err
	}
	defer wnc.Close()
	workers, err := bus.StartWorkers(wnc, bus.WorkerOptions{Prefix: f.nats.prefix, Version: version}, log)
	if err != nil {
		return err
	}
	log.Info().Str("nats_url", url).Str("version", version).Int("ports", len(cfg.Ports)).Msg("scoreboard running")

	// The ports: a reader, a display writer and a device writer each. They stop first,
	// so that the units they have in flight can still be answered by the workers.
	var portsErr error
	if len(cfg.Ports) == 0 {
		<-ctx.Done()
	} else if pnc, err := connect("scoreboard run ports"); err != nil {
		portsErr = err
	} else {
		portsErr = daemon.Run(ctx, pnc, cfg, log)
		// The error results the ports published must leave before the connection
		// closes.
		if err := pnc.FlushTimeout(2 * time.Second); err != nil {
			log.Warn().Err(err).Msg("flush nats connection")
		}
		pnc.Close()
	}

	log.Info().Msg("stopping")
	if err := workers.Stop(); err != nil {
		log.Warn().Err(err).Msg("stop workers")
	}
	// Results already published must leave before the connection closes.
	if err := wnc.FlushTimeout(2 * time.Second); err != nil {
		log.Warn().Err(err).Msg("flush nats connection")
	}
	log.Info().Msg("stopped")
	return portsErr
}
