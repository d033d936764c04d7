package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/metrics"
	webpkg "github.com/goclub/scoreboard/web"
)

// Defaults of the hub's listeners: its tools on loopback, beside a club daemon's
// 4222; the clubs on NATS's leaf-node port, on every interface.
const (
	defaultHubListen     = "127.0.0.1:4322"
	defaultHubLeafListen = "0.0.0.0:7422"
	defaultHubHTTP       = "127.0.0.1:8090"
)

func init() {
	register(command{
		name:    "hub",
		summary: "a league's hub: the clubs' daemons join it as leaf nodes; it keeps every club's history in LEAGUE",
		run:     runHub,
	})
}

func runHub(ctx context.Context, args []string, io stdio) error {
	about := "Runs a league's hub: a NATS server with JetStream (domain \"league\"), a leaf-node\n" +
		"listener the clubs' daemons join (scoreboard run --hub URL --club NAME), and the\n" +
		"LEAGUE stream, which sources every club's history across the club's JetStream\n" +
		"domain with the club's name in the subjects: league.<club>.dump.<problem>.<port>\n" +
		"and league.<club>.result.<problem>.<port>. The clubs are the [[club]] tables of\n" +
		"--config (name, token); SIGHUP reads it again: clubs added are let in, clubs\n" +
		"removed are refused and their links closed, no restart. docs/league.md says more."
	fs := newFlagSet("hub", "", about, io)
	config := fs.String("config", "", "the hub's configuration `file` (TOML): [hub] and one [[club]] table per club")
	listen := fs.String("listen", defaultHubListen, "the hub's listener for its tools, loopback `HOST:PORT`")
	leafListen := fs.String("leaf-listen", defaultHubLeafListen, "the listener the clubs join, `HOST:PORT`")
	httpListen := fs.String("http", defaultHubHTTP, "the league page's listener, `HOST:PORT`, or \"off\"")
	stateDir := fs.String("state-dir", "", "the LEAGUE stream's store `directory`; empty: $STATE_DIRECTORY/hub, else $XDG_STATE_HOME/scoreboard/hub")
	natsf := addNATSFlags(fs, "empty: embed the hub's server; else an existing nats-server (configs/league-hub.conf) with rights to manage its streams")
	logf := addLogFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(fs, "unexpected argument %q: hub takes only flags (the clubs: [[club]] tables in --config)", fs.Arg(0))
	}
	if *config == "" {
		return usageErr(fs, "--config is needed: the clubs are its [[club]] tables (name, token)")
	}
	cfg, err := readHubConfig(*config)
	if err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	pick := func(flagName, flagVal, fileVal string) string {
		if !given[flagName] && fileVal != "" {
			return fileVal
		}
		return flagVal
	}
	opts := league.Options{
		Listen:     pick("listen", *listen, cfg.Hub.Listen),
		LeafListen: pick("leaf-listen", *leafListen, cfg.Hub.LeafListen),
		StoreDir:   pick("state-dir", *stateDir, cfg.Hub.StateDir),
		Clubs:      cfg.Clubs,
	}
	log, err := logf.logger(io.err)
	if err != nil {
		return err
	}
	var hub *league.Hub
	if natsf.url != "" {
		nc, err := natsf.connect("scoreboard hub", log)
		if err != nil {
			return err
		}
		if hub, err = league.Attach(ctx, nc, cfg.Clubs, log); err != nil {
			nc.Close()
			return err
		}
	} else {
		if opts.StoreDir == "" {
			d, err := history.DefaultStateDir(os.Getenv)
			if err != nil {
				return err
			}
			opts.StoreDir = filepath.Join(d, "hub")
		}
		store, err := history.OpenStateDir(opts.StoreDir)
		if err != nil {
			return err
		}
		defer store.Close()
		if hub, err = league.Start(ctx, opts, log); err != nil {
			return err
		}
	}
	defer hub.Shutdown()
	log.Info().Str("listen", hub.ClientURL()).Str("leaf_listen", hub.LeafURL()).Int("clubs", len(cfg.Clubs)).Msg("league hub running")

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return hub.RunBoards(gctx) })
	g.Go(func() error { hub.WatchLinks(gctx, time.Second); return nil })
	if web := pick("http", *httpListen, cfg.Hub.HTTP); web != httpOff {
		met := metrics.New()
		met.Gauge("scoreboard_league_clubs_linked", "How many of the league's clubs have their link to the hub up.",
			func() float64 { return float64(hub.LinkedClubs()) })
		g.Go(func() error {
			// The club's page, on the league's bucket (prefix "league": LEAGUE_BOARDS).
			if err := servePage(gctx, "league page", web, func() (*webpkg.Server, error) {
				return webpkg.New(hub.Conn(), league.SubjectPrefix, log)
			}, met, log); err != nil {
				log.Error().Err(err).Str("component", "web").Msg("the league page is not served; the hub goes on without it")
			}
			return nil
		})
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-gctx.Done():
			err := g.Wait()
			log.Info().Msg("hub stopped")
			return err
		case <-hup:
			reloadHub(gctx, hub, *config, log)
		}
	}
}

// reloadHub sets the clubs of the file at path; a bad file is logged and the
// running clubs kept.
func reloadHub(ctx context.Context, hub *league.Hub, path string, log zerolog.Logger) {
	cfg, err := readHubConfig(path)
	if err == nil {
		err = hub.SetClubs(ctx, cfg.Clubs)
	}
	if err != nil {
		log.Error().Err(err).Str("config", path).Msg("SIGHUP: the hub's file is not taken; the running clubs are kept")
		return
	}
	log.Info().Str("config", path).Int("clubs", len(cfg.Clubs)).Msg("SIGHUP: clubs reloaded")
}

func readHubConfig(path string) (league.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return league.Config{}, fmt.Errorf("hub config: %w (--config names a TOML file; configs/league-hub.toml in the source is an example)", err)
	}
	return league.ParseConfig(path, data)
}
