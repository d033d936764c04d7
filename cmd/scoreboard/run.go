package main

import (
	"context"
	"errors"
	"flag"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{
		name:    "run",
		summary: "the daemon: embedded NATS and workers (headless when no port is configured)",
		run:     runRun,
	})
}

func runRun(ctx context.Context, args []string, io stdio) error {
	about := "Runs the daemon. By default it embeds a NATS server, listening on --nats-listen\n" +
		"for local tools, and serves every problem on it (the 'scoreboard' micro service\n" +
		"and the dump consumer). With --nats-url it joins an existing NATS server or\n" +
		"cluster instead. SIGINT or SIGTERM stop it cleanly."
	fs := newFlagSet("run", "", about, io)
	nf := addNATSFlags(fs, "empty: embed a NATS server")
	listen := fs.String("nats-listen", bus.DefaultListen, "the embedded NATS server's listener, `HOST:PORT` (port 0: any free one), or \"off\"")
	lf := addLogFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	if err := nf.check(); err != nil {
		return err
	}
	if nf.url != "" && flagSet(fs, "nats-listen") {
		return errors.New("--nats-listen is for the embedded server; it cannot go with --nats-url")
	}
	if *listen != bus.ListenOff {
		if _, _, err := bus.ParseListen(*listen); err != nil {
			return err
		}
	}
	log, err := lf.logger(io.err)
	if err != nil {
		return err
	}

	var (
		nc  *nats.Conn
		url string // what other processes connect to, if anything
	)
	if nf.url == "" {
		srv, err := bus.StartServer(*listen, log)
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		url = srv.ClientURL()
		nc, err = bus.Connect(bus.ConnOptions{Server: srv, Name: "scoreboard run"}, log)
		if err != nil {
			return err
		}
	} else {
		url = nf.url
		nc, err = bus.Connect(nf.options(nf.url, "scoreboard run"), log)
		if err != nil {
			return err
		}
	}
	defer nc.Close()

	workers, err := bus.StartWorkers(nc, bus.WorkerOptions{Prefix: nf.prefix, Version: version}, log)
	if err != nil {
		return err
	}
	log.Info().Str("nats_url", url).Str("version", version).Msg("scoreboard running")
	<-ctx.Done()
	log.Info().Msg("stopping")
	if err := workers.Stop(); err != nil {
		log.Warn().Err(err).Msg("stop workers")
	}
	// Results already published must leave before the connection closes.
	if err := nc.FlushTimeout(2 * time.Second); err != nil {
		log.Warn().Err(err).Msg("flush nats connection")
	}
	log.Info().Msg("stopped")
	return nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
