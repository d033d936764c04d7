package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/prune"
	"github.com/goclub/scoreboard/systemd"
	webpkg "github.com/goclub/scoreboard/web"
)

func init() { register(hubCommand) }

func hubCommand(io stdio) *cobra.Command {
	var path string
	var check bool
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "a league's hub: the clubs' daemons join it as leaf nodes; it keeps each club's history in its stream LEAGUE_<CLUB>",
		Long: "Runs a league's hub: a NATS server with JetStream (domain \"league\"), a leaf-node\n" +
			"listener the clubs' daemons join (scoreboard run --hub-url URL --hub-club NAME), and\n" +
			"a stream per club, LEAGUE_<CLUB>, which sources the club's history across its\n" +
			"JetStream domain with the club's name in the subjects:\n" +
			"league.<club>.dump.<problem>.<port> and league.<club>.result.<problem>.<port>, and\n" +
			"keeps the club's share of the hub's store (--league-club-max-bytes, max_bytes in\n" +
			"its [[club]] table). The clubs are the [[club]] tables of --config (name, nkey or token);\n" +
			"SIGHUP reads them again: clubs added are let in, clubs removed are refused and\n" +
			"their links closed, no restart. With --nats-url the hub is an existing nats-server\n" +
			"(configs/league-hub.conf), and scoreboard hub manages the streams on it. At the\n" +
			"hub, history --club, watch --club and render --club read a club's units.\n" +
			"docs/league.md.",
		Example: "  scoreboard hub --config /etc/scoreboard/league-hub.toml\n" +
			"  scoreboard hub --check --config /etc/scoreboard/league-hub.toml\n" +
			"  scoreboard history --nats-url nats://127.0.0.1:4322 --club north --last 10",
		Args: noArgs("takes only flags (the clubs: [[club]] tables in --config)"),
	}
	cmd.Flags().StringVar(&path, "config", "", "the hub's configuration `file` (TOML): [league], [nats], [log], [memory] and one [[club]] table per club")
	cmd.Flags().BoolVar(&check, "check", false, "check the file (its clubs, its settings, the leaf listener's certificate) as the hub would at start, say it is good, and exit; a bad file exits non-zero with the hub's own errors")
	load := addSettings(cmd, config.HubKeys()...)
	cmd.AddCommand(hubKeyCommand(io))
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if path == "" {
			return usagef("--config is needed: the clubs are its [[club]] tables (name, token)")
		}
		// The clubs first: a file that cannot be read is named with the hub's own
		// example (configs/league-hub.toml), not run's.
		cfg, err := readHubConfig(path)
		if err != nil {
			return err
		}
		c, err := load(path)
		if err != nil {
			return err
		}
		if check {
			return checkHub(c, cfg, path, io)
		}
		return runHub(cmd.Context(), c, cfg, path, io)
	}
	return cmd
}

func runHub(ctx context.Context, c config.Config, cfg league.Config, path string, io stdio) error {
	// SIGHUP is caught from the start, before anything is logged: its default ends
	// the process, and one sent while the hub starts is a reload once it runs.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	cfg.Clubs = league.WithDefaults(cfg.Clubs, c.League.ClubMaxBytes, c.League.ClubMaxAge)
	opts := league.Options{
		Listen:     c.League.Listen,
		LeafListen: c.League.LeafListen,
		StoreDir:   c.League.StateDir,
		Clubs:      cfg.Clubs,

		LeafTLSCert: c.League.LeafTLSCert,
		LeafTLSKey:  c.League.LeafTLSKey,

		LeafTLSClientCA: c.League.LeafTLSClientCA,
	}
	log, err := c.Logger(io.err)
	if err != nil {
		return err
	}
	notify, err := systemd.FromEnv()
	if err != nil {
		return err
	}
	budget, logBudget := applyBudget(c, true, log)
	opts.MaxMemory = budget / 4
	var hub *league.Hub
	if c.NATS.URL != "" {
		nc, err := c.Connect("scoreboard hub", log)
		if err != nil {
			return err
		}
		if hub, err = league.Attach(ctx, nc, cfg.Clubs, c.League.Replicas, log); err != nil {
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
		opts.State = store
		if hub, err = league.Start(ctx, opts, log); err != nil {
			return err
		}
	}
	defer hub.Shutdown()
	hub.SetTables(cfg.TableMap())
	logBudget()

	g, gctx := errgroup.WithContext(ctx)
	var clubs atomic.Int64
	clubs.Store(int64(len(cfg.Clubs)))
	g.Go(func() error { return hub.RunBoards(gctx) })
	g.Go(func() error { hub.WatchLinks(gctx, time.Second); return nil })
	// The intakes' rooms, so that clubs catching up at once keep to the budget.
	g.Go(func() error { hub.RunGate(gctx); return nil })
	// The page's delays: SIGHUP's [[club]] tables change the clubs' at once.
	delays := webpkg.NewDelays(c.League.HTTPDelay, nil)
	delays.SetLeague(league.Names(cfg.Clubs), league.ClubDelays(cfg.Clubs))
	// The league page and /metrics, each on its listener or off.
	page, err := hub.OpenPage(league.PageOf(&c), log)
	if err != nil {
		return err
	}
	defer page.Close()
	// Said once every listener is bound (the page's too, whose connections wait in
	// its backlog until it serves), so that whoever waits for the line can connect.
	log.Info().Str("listen", hub.ClientURL()).Str("leaf_listen", hub.LeafURL()).Int("clubs", len(cfg.Clubs)).Msg("league hub running")
	// The clubs' streams: their oldest units dropped a chunk at a time before each
	// share's max_bytes, where nats-server would drop them one by one (prune).
	keeper, err := newHubPruner(hub, log)
	if err != nil {
		return err
	}
	if met := page.Metrics(); met != nil {
		met.Counter("scoreboard_league_pruned_messages_total", "Messages of the clubs' streams' oldest units (a dump and its result are two) dropped to keep each below its share's max_bytes and max_age a chunk at a time.",
			func() float64 { return float64(keeper.Dropped()) })
	}
	g.Go(func() error { keeper.Run(gctx, prune.DefaultEvery); return nil })
	g.Go(func() error {
		// The clubs' page, on the league's bucket (prefix "league": LEAGUE_BOARDS).
		return page.Serve(gctx, func() (*webpkg.Server, error) {
			s, err := webpkg.New(hub.Conn(), league.SubjectPrefix, log)
			if err == nil {
				s.WithDelays(delays)
				s.WithPairings()
			}
			return s, err
		})
	})
	// READY=1 once the leaf listener, the tools' and the page's are up, and SIGHUP
	// reloads (systemctl reload waits for READY=1).
	goHubSystemd(g, gctx, notify, hub, &clubs, log)
	for {
		select {
		case <-gctx.Done():
			err := g.Wait()
			log.Info().Msg("hub stopped")
			return err
		case <-hup:
			if n, ok := reloadHub(gctx, hub, delays, path, c.League.ClubMaxBytes, c.League.ClubMaxAge, log); ok {
				clubs.Store(int64(n))
			}
		}
	}
}

func newHubPruner(hub *league.Hub, log zerolog.Logger) (*prune.Keeper, error) {
	js, err := jetstream.New(hub.Conn())
	if err != nil {
		return nil, fmt.Errorf("hub: prune: %w", err)
	}
	return prune.New(js, league.IsClubStream, log), nil
}

// reloadHub sets the clubs of the file at path, and says how many; a bad file is
// logged and the running clubs kept.
func reloadHub(ctx context.Context, hub *league.Hub, delays *webpkg.Delays, path, maxBytes, maxAge string, log zerolog.Logger) (int, bool) {
	cfg, err := readHubConfig(path)
	if err == nil {
		err = hub.SetClubs(ctx, league.WithDefaults(cfg.Clubs, maxBytes, maxAge))
	}
	if err != nil {
		log.Error().Err(err).Str("config", path).Msg("SIGHUP: the hub's file is not taken; the running clubs are kept")
		return 0, false
	}
	delays.SetLeague(league.Names(cfg.Clubs), league.ClubDelays(cfg.Clubs))
	hub.SetTables(cfg.TableMap())
	log.Info().Str("config", path).Int("clubs", len(cfg.Clubs)).Msg("SIGHUP: clubs reloaded")
	return len(cfg.Clubs), true
}

// readHubConfig reads the hub's file; one others may read with tokens in it
// exits 2, as a bad flag does.
func readHubConfig(path string) (league.Config, error) {
	cfg, err := league.ReadConfig(path)
	if errors.Is(err, league.ErrReadableTokens) {
		return cfg, exitError{err, 2}
	}
	return cfg, err
}

// exitError is an error that says the exit status (runMain).
type exitError struct {
	error
	code int
}

func (e exitError) ExitCode() int { return e.code }
