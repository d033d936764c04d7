package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/render"
)

func init() {
	register(command{
		name:    "history",
		summary: "lists the units kept in the history, oldest first (--json for records)",
		run:     runHistory,
	})
}

func runHistory(ctx context.Context, args []string, stdio stdio) error {
	about := "Reads the history the daemon keeps in JetStream (the stream " + bus.Subjects{Prefix: bus.DefaultPrefix}.Stream() + ")\n" +
		"and prints one line per unit, oldest first, as watch prints results: port,\n" +
		"problem, sequence number, and the answer or the error; a unit that was read and\n" +
		"never answered shows as unanswered. With --json, one record a line: the result\n" +
		"JSON with \"unit\" (the unit's text) and \"time\" (when the result came). With\n" +
		"--sgf, one SGF collection of the Go games among them (replay, goscore,\n" +
		"territory units that were answered).\n\n" +
		"--since and --until take " + history.TimeForms + "."
	fs := newFlagSet("history", "", about, stdio)
	nf := addNATSFlags(fs, "empty: "+defaultNATSURL+", a local daemon's embedded server")
	raw := fs.Bool("json", false, "print one JSON record a line")
	sgf := fs.Bool("sgf", false, "print the answered Go games (replay, goscore, territory) as one SGF collection")
	q := addQueryFlags(fs, true)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(fs, "unexpected argument %q: history takes only flags (filters: --port, --problem, --since, --until, --last)", fs.Arg(0))
	}
	if *raw && *sgf {
		return errors.New("--json and --sgf: give one of them")
	}
	query, err := q.query(time.Now())
	if err != nil {
		return err
	}
	nc, err := nf.connect("scoreboard history", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	var (
		buf  []byte
		recs []render.Record
	)
	err = history.Read(ctx, js, nf.prefix, query, func(e *history.Entry) error {
		if *sgf {
			if answered(e) && render.HasSGF(e.Problem) {
				recs = append(recs, render.Record{Problem: e.Problem, Unit: e.Unit})
			}
			return nil
		}
		if *raw {
			buf = append(e.JSON(buf[:0]), '\n')
			_, err := stdio.out.Write(buf)
			return err
		}
		_, err := fmt.Fprintln(stdio.out, e.Line())
		return err
	})
	if err != nil || !*sgf {
		return err
	}
	out, n, err := render.Collection(recs)
	if err != nil {
		return fmt.Errorf("--sgf: %w", err)
	}
	if n == 0 {
		return errors.New("--sgf: no answered replay, goscore or territory unit in the selection")
	}
	_, err = stdio.out.Write(out)
	return err
}

// answered says whether a kept unit has its text and an answer, not an error.
func answered(e *history.Entry) bool {
	if e.Unanswered || e.Unit == nil {
		return false
	}
	var r bus.Result
	return json.Unmarshal(e.Result, &r) == nil && r.Error == ""
}

// queryFlags are the filters of history, and of watch's replay.
type queryFlags struct {
	port, problem, since, until *string
	last                        *int
	portFlag                    string
}

// addQueryFlags binds --port (history) or --port-name (watch), --problem, --since,
// --last, and with until --until.
func addQueryFlags(fs *flag.FlagSet, until bool) *queryFlags {
	q := &queryFlags{portFlag: "port"}
	if until {
		q.port = fs.String("port", "", "only this port's units (its `name`)")
		q.until = fs.String("until", "", "only units until this `time` (or this duration before this machine's clock now), compared with when the NATS server stored each unit")
	} else {
		q.portFlag = "port-name"
		q.port = fs.String("port-name", "", "only this `port`'s results")
		empty := ""
		q.until = &empty
	}
	q.problem = fs.String("problem", "", "only this `problem`'s units")
	q.since = fs.String("since", "", "from this `time`, or this duration before this machine's clock now (90m, 7d, 2026-11-22T18:00), compared with when the NATS server stored each unit, by its clock")
	q.last = fs.Int("last", 0, "only the last `N` units")
	return q
}

// query checks the filters and makes them a history.Query.
func (q *queryFlags) query(now time.Time) (history.Query, error) {
	r := history.Query{Port: *q.port, Problem: *q.problem, Last: *q.last}
	for _, f := range []struct{ flag, v string }{{q.portFlag, r.Port}, {"problem", r.Problem}} {
		if f.v != "" && !bus.ValidToken(f.v) {
			return r, fmt.Errorf("--%s %q: want lowercase letters, digits, '-' and '_'", f.flag, f.v)
		}
	}
	if r.Problem != "" {
		// An unknown problem would match nothing, and watch would wait forever.
		if _, err := lookupProblem(r.Problem); err != nil {
			return r, fmt.Errorf("--problem: %w", err)
		}
	}
	if r.Last < 0 {
		return r, fmt.Errorf("--last %d: want a positive number of units, or 0 for all", r.Last)
	}
	for _, f := range []struct {
		flag, v string
		t       *time.Time
	}{{"since", *q.since, &r.Since}, {"until", *q.until, &r.Until}} {
		if f.v == "" {
			continue
		}
		t, err := history.ParseTime(f.v, now)
		if err != nil {
			return r, fmt.Errorf("--%s %w", f.flag, err)
		}
		*f.t = t
	}
	if !r.Until.IsZero() && r.Until.Before(r.Since) {
		return r, fmt.Errorf("--until %s is before --since %s", r.Until.Format(time.RFC3339), r.Since.Format(time.RFC3339))
	}
	return r, nil
}

// daemonAttempts is how many times the daemon publishes a unit (daemon.Config's
// default).
const daemonAttempts = 3

// historyFlags are run's history settings, merged with the config file by loadConfig.
type historyFlags struct {
	on                        bool
	stateDir, maxAge, maxSize string
	sync                      string
	fitted                    int64 // the size fit gave, if less than maxSize
	replicas                  int
}

func addHistoryFlags(fs *flag.FlagSet) *historyFlags {
	h := &historyFlags{}
	fs.BoolVar(&h.on, "history", true, "keep every unit and its result in JetStream, and each port's latest in a KV bucket")
	fs.StringVar(&h.stateDir, "state-dir", "", "the embedded server's store `directory` (the history); empty: $STATE_DIRECTORY, else $XDG_STATE_HOME/scoreboard, else ~/.local/state/scoreboard")
	fs.StringVar(&h.maxAge, "history-max-age", defaultHistoryMaxAge, "drop units older than this `duration` (90d, 36h)")
	fs.StringVar(&h.maxSize, "history-max-bytes", defaultHistoryMaxBytes, "drop the oldest units beyond this `size` (1GiB, 512MiB)")
	fs.StringVar(&h.sync, "history-sync", history.DefaultSync, "how often the embedded server syncs the history to disk: \"always\" (every write) or an `interval` (2m, 10s); a power cut loses what was not synced")
	fs.IntVar(&h.replicas, "history-replicas", 1, "copies of the history on a NATS cluster (`N`, 1 to 5)")
	return h
}

// set takes the settings merged by loadConfig, which checked them.
func (h *historyFlags) set(c config) {
	h.on, h.stateDir, h.maxAge, h.maxSize, h.replicas = c.History.Enabled, c.Daemon.StateDir, c.History.MaxAge, c.History.MaxBytes, c.History.Replicas
	h.sync = c.History.Sync
}

func (h *historyFlags) config(prefix string) history.Config {
	age, _ := history.ParseAge(h.maxAge)
	size, _ := history.ParseSize(h.maxSize)
	if h.fitted > 0 {
		size = h.fitted
	}
	sync, _ := history.ParseSync(h.sync)
	return history.Config{Prefix: prefix, MaxAge: age, MaxBytes: size, Replicas: h.replicas, Sync: sync}
}

// openStore locks the state directory for the embedded server's store; nil with the
// history off.
func (h *historyFlags) openStore() (*history.StateDir, error) {
	if !h.on {
		return nil, nil
	}
	dir := h.stateDir
	if dir == "" {
		var err error
		if dir, err = history.DefaultStateDir(os.Getenv); err != nil {
			return nil, err
		}
	}
	return history.OpenStateDir(dir)
}

// startHistory sets up the stream and the bucket on nc's server and returns the
// bucket's updater, or nil when the history is off: by the flags, or because the
// server has no JetStream (one warning says so; everything else works). store is the
// embedded server's state directory (nil for an external server); recovered says it
// held the stream before the server started, which must then have recovered it.
func startHistory(ctx context.Context, nc *nats.Conn, h *historyFlags, prefix string, requestTimeout time.Duration, store *history.StateDir, held bool, log zerolog.Logger) (_ *history.Updater, damaged string, _ error) {
	if !h.on {
		return nil, "", nil
	}
	cfg := h.config(prefix)
	// Every attempt of a unit, and a worker answering the last one late, with room
	// to spare; the ids of a busy port held longer would only cost the server memory.
	cfg.Duplicates = max(10*time.Second, 2*daemonAttempts*requestTimeout)
	js, err := history.NewJetStream(nc)
	if err != nil {
		return nil, "", fmt.Errorf("history: %w", err)
	}
	name := bus.Subjects{Prefix: prefix}.Stream()
	if held {
		// startStore made sure the server opened it, or moved it aside.
		if kept, dropped, err := history.Recovered(ctx, js, prefix, store); err == nil && dropped != "" {
			damaged = dropped
			log.Error().Str("component", "history").Str("store", store.Path).Uint64("kept_msgs", kept).Msg(dropped)
		}
	}
	if _, err := history.SetupWait(ctx, js, cfg, log); err != nil {
		if errors.Is(err, history.ErrNoJetStream) && store == nil {
			log.Warn().Str("component", "history").Err(err).Msg("history is off: the NATS server has no JetStream (start it with -js, or enable JetStream for this account); everything else works")
			return nil, "", nil
		}
		return nil, "", err
	}
	where, sync := "server", "the server's own"
	if store != nil {
		where, sync = store.Path, cfg.Sync.String()
		if cfg.Sync == (history.Sync{}) {
			sync = history.DefaultSync
		}
	} else if h.sync != history.DefaultSync {
		log.Warn().Str("component", "history").Str("sync", h.sync).Msg("--history-sync applies to the embedded server's store only: an external server syncs as its own sync_interval says")
	}
	log.Info().Str("component", "history").Str("stream", name).Str("bucket", bus.Subjects{Prefix: prefix}.Boards()).
		Str("store", where).Dur("max_age_ms", cfg.MaxAge).Int64("max_bytes", cfg.MaxBytes).Int("replicas", cfg.Replicas).Str("sync", sync).Msg("history on")
	u := history.NewUpdater(nc, js, prefix, log)
	if cfg.Replicas > 1 {
		u.WithRepair(history.NewRepairer(nc, js, prefix, log))
	}
	return u, damaged, u.Subscribe()
}

// fit fits the history to the state dir's filesystem (history.StateDir.Fit), and
// says so in one line when it takes less than --history-max-bytes; false, said
// loudly, when there is no room for any history: the daemon then runs without one.
func (h *historyFlags) fit(store *history.StateDir, log zerolog.Logger) bool {
	want, _ := history.ParseSize(h.maxSize)
	size, room, err := store.Fit(want)
	switch {
	case err != nil:
		log.Warn().Str("component", "history").Err(err).Msg("the state dir's free space is unknown: the history keeps --history-max-bytes")
	case size < history.MinBytes:
		log.Error().Str("component", "history").Str("store", store.Path).Int64("room_bytes", room).Int64("min_bytes", 2*history.MinBytes).
			Msg("history is OFF: the state dir's filesystem has no room for a history; every port still answers; free some space, or give another --state-dir, and restart")
		h.on = false
		return false
	case size < want:
		log.Warn().Str("component", "history").Str("store", store.Path).Int64("max_bytes", size).Int64("asked_bytes", want).Int64("room_bytes", room).
			Msg("history fitted to the disk: it keeps at most half the room its filesystem has, less than --history-max-bytes")
		h.fitted = size
	}
	return true
}

// startStore starts the embedded server on the state dir. A store from before that
// the server cannot open at all is moved aside (<state dir>/damaged-<time>/) and a
// fresh one started: the ports' answers matter more than the history.
func startStore(opts bus.ServerOptions, store *history.StateDir, held bool, log zerolog.Logger) (*bus.Server, error) {
	srv, err := bus.StartServerWith(opts, log)
	if err != nil || !held {
		return srv, err
	}
	name := bus.Subjects{Prefix: opts.Prefix}.Stream()
	nc, err := bus.Connect(bus.ConnOptions{Server: srv, Name: "scoreboard run store check"}, log)
	if err != nil {
		srv.Shutdown()
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = js.Stream(ctx, name)
		cancel()
	}
	nc.Close()
	if err == nil {
		return srv, nil
	}
	srv.Shutdown()
	to, merr := store.MoveAside(time.Now())
	if merr != nil {
		return nil, fmt.Errorf("state dir %s: the history stream %s could not be opened (%v), and %w", store.Path, name, err, merr)
	}
	log.Error().Str("component", "history").Str("store", store.Path).Str("moved_to", to).Err(err).
		Msg("history: the store could not be opened (the nats log lines above say why): moved aside, and a fresh history started; every port answers")
	return bus.StartServerWith(opts, log)
}

// historyStatus is the systemd status: the ports', with what the history dropped
// at start-up, and whether it is storing.
func historyStatus(status func() string, keeper *history.Keeper, damaged string) func() string {
	return func() string {
		s := status()
		if damaged != "" {
			s += "; " + damaged
		}
		if keeper != nil && !keeper.OK() {
			s += fmt.Sprintf("; history NOT storing (full disk): %d units not stored", keeper.NotStored())
		}
		return s
	}
}
