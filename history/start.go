package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/backoff"
)

// Start is how a daemon's history begins, whatever command runs it.
type Start struct {
	Config
	// Store is the embedded server's state directory; nil for an external server.
	Store *StateDir
	// Held says the store held the stream before the server started: the server
	// must then have recovered it, and what it dropped is said once.
	Held bool
	// SyncAsked is --history-sync as given: an external server syncs as its own
	// sync_interval says, which a setting other than the default is warned about.
	SyncAsked string
	// RequestTimeout and Attempts are the daemon's: how long a unit's publishes
	// may repeat, which the stream's deduplication window covers.
	RequestTimeout time.Duration
	Attempts       int
}

// Run sets up the stream and the bucket on nc's server and returns the bucket's
// updater, subscribed; nil when the server has no JetStream and the store is not
// the daemon's own (one warning says so; everything else works). damaged is what
// recovering a held store dropped, for the systemd status.
func (s Start) Run(ctx context.Context, nc *nats.Conn, log zerolog.Logger) (_ *Updater, damaged string, _ error) {
	cfg := s.Config
	// The recorder sends again what got no ack within recordAckWait, after its
	// back-off: a unit's span of attempts covers that with room to spare, and the
	// ids of a busy port held longer would only cost the server memory.
	cfg.Duplicates = max(10*time.Second, 2*time.Duration(s.Attempts)*s.RequestTimeout)
	if cfg.Replicas > 1 {
		// And after elections too.
		cfg.Duplicates = max(cfg.Duplicates, RecordDuplicates)
	}
	js, err := NewJetStream(nc)
	if err != nil {
		return nil, "", fmt.Errorf("history: %w", err)
	}
	subj := bus.Subjects{Prefix: cfg.Prefix}
	if s.Held {
		// StartServer made sure the server opened it, or moved it aside.
		if kept, dropped, err := Recovered(ctx, js, cfg.Prefix, s.Store); err == nil && dropped != "" {
			damaged = dropped
			log.Error().Str("component", "history").Str("store", s.Store.Path).Uint64("kept_msgs", kept).Msg(dropped)
		}
	}
	if _, err := SetupWait(ctx, js, cfg, log); err != nil {
		if errors.Is(err, ErrNoJetStream) && s.Store == nil {
			log.Warn().Str("component", "history").Err(err).Msg("history is off: the NATS server has no JetStream (start it with -js, or enable JetStream for this account); everything else works")
			return nil, "", nil
		}
		return nil, "", err
	}
	where, sync := "server", "the server's own"
	if s.Store != nil {
		where, sync = s.Store.Path, cfg.Sync.String()
		if cfg.Sync == (Sync{}) {
			sync = DefaultSync
		}
	} else if s.SyncAsked != "" && s.SyncAsked != DefaultSync {
		log.Warn().Str("component", "history").Str("sync", s.SyncAsked).Msg("--history-sync applies to the embedded server's store only: an external server syncs as its own sync_interval says")
	}
	log.Info().Str("component", "history").Str("stream", subj.Stream()).Str("bucket", subj.Boards()).
		Str("store", where).Dur("max_age_ms", cfg.MaxAge).Int64("max_bytes", cfg.MaxBytes).Int("replicas", cfg.Replicas).Str("sync", sync).Msg("history on")
	u := NewUpdater(nc, js, cfg.Prefix, log)
	r, err := NewRecorder(nc, cfg.Prefix, log)
	if err != nil {
		return nil, "", err
	}
	u.WithRecorder(r)
	// The stream may lose its leader between its set-up and the readers' start (a
	// node killed as the daemon starts): tried again as the set-up is.
	deadline := time.Now().Add(setupPatience)
	for attempt := 1; ; attempt++ {
		err := u.Subscribe()
		if err == nil || !notReady(ctx, err) || time.Now().After(deadline) {
			return u, damaged, err
		}
		if backoff.Logged(attempt) {
			log.Warn().Str("component", "history").Err(err).Int("attempts", attempt).Msg("the history stream does not answer yet (no leader?): trying again")
		}
		if cerr := backoff.Sleep(ctx, setupRetry.Wait(attempt-1)); cerr != nil {
			return nil, "", fmt.Errorf("%w (waiting for the history stream: %v)", err, cerr)
		}
	}
}

// FitStore fits the history to the state dir's filesystem (StateDir.Fit), and says
// so in one line when it keeps less than want: fitted is then the size it keeps (0
// when want fits). ok is false, said loudly, when there is no room for any history:
// the daemon then runs without one.
func FitStore(store *StateDir, want int64, log zerolog.Logger) (fitted int64, ok bool) {
	size, room, err := store.Fit(want)
	switch {
	case err != nil:
		log.Warn().Str("component", "history").Err(err).Msg("the state dir's free space is unknown: the history keeps --history-max-bytes")
	case size < MinBytes:
		log.Error().Str("component", "history").Str("store", store.Path).Int64("room_bytes", room).Int64("min_bytes", 2*MinBytes).
			Msg("history is OFF: the state dir's filesystem has no room for a history; every port still answers; free some space, or give another --daemon-state-dir, and restart")
		return 0, false
	case size < want:
		log.Warn().Str("component", "history").Str("store", store.Path).Int64("max_bytes", size).Int64("asked_bytes", want).Int64("room_bytes", room).
			Msg("history fitted to the disk: it keeps at most half the room its filesystem has, less than --history-max-bytes")
		return size, true
	}
	return 0, true
}

// StartServer starts the embedded server on the state dir. A store from before
// (held) that the server cannot open at all is moved aside
// (<state dir>/damaged-<time>/) and a fresh one started: the ports' answers matter
// more than the history.
func StartServer(opts bus.ServerOptions, store *StateDir, held bool, log zerolog.Logger) (*bus.Server, error) {
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
