package history

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/logging"
)

// Store is the embedded server's JetStream as the Keeper sees it (bus.Server).
type Store interface {
	// StoreFailing reports that the store failed to write (a full disk).
	StoreFailing() bool
	// RestartJetStream starts JetStream again, recovering the streams.
	RestartJetStream() error
}

// keeperPoll is how often the Keeper looks at the store.
const keeperPoll = 500 * time.Millisecond

// Keeper is the actor that keeps the embedded server's history storing through a
// full disk. nats-server turns JetStream off when its store cannot write; the
// ports go on answering (they need only the bus), and the Keeper says once that
// the history is not storing (then sampled, with the count of units not stored),
// and starts JetStream again by itself once the state dir's filesystem has room
// again (need bytes free), with no restart of the daemon. The updater's reader of
// the stream then goes on where it was.
type Keeper struct {
	store Store
	dir   *StateDir
	need  int64
	units func() uint64 // units read so far by the daemon's ports; nil: not counted

	ok        atomic.Bool
	notStored atomic.Uint64
	log       zerolog.Logger
	warn      *logging.Sampler
}

// NewKeeper makes the actor for store, whose files are in dir; Run runs it. units,
// if not nil, counts the units the daemon's ports have read (daemon.Recent.Units).
func NewKeeper(store Store, dir *StateDir, need int64, units func() uint64, log zerolog.Logger) *Keeper {
	k := &Keeper{store: store, dir: dir, need: max(need, MinBytes), units: units,
		log: log.With().Str("component", "history").Logger(), warn: logging.NewSampler(1, time.Minute, 120)}
	k.ok.Store(true)
	return k
}

// OK reports whether the history is storing (scoreboard_history_ok). Safe for
// concurrent use.
func (k *Keeper) OK() bool { return k.ok.Load() }

// NotStored is how many units the ports read while the history was not storing
// (scoreboard_history_units_not_stored_total). Safe for concurrent use.
func (k *Keeper) NotStored() uint64 { return k.notStored.Load() }

// Run watches the store until ctx ends.
func (k *Keeper) Run(ctx context.Context) {
	tick := time.NewTicker(keeperPoll)
	defer tick.Stop()
	var since, base uint64 // units read when it stopped storing, and not stored before
	count := func() uint64 {
		if k.units == nil {
			return 0
		}
		return k.units()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !k.store.StoreFailing() {
			continue
		}
		free, _ := k.dir.Free()
		if k.ok.Load() {
			k.ok.Store(false)
			since, base = count(), k.notStored.Load()
			k.log.Error().Str("store", k.dir.Path).Int64("free_bytes", free).
				Msg("history is not storing: its store could not write (a full disk); every port still answers; it starts again by itself when there is room")
		} else {
			k.notStored.Store(base + count() - since)
			k.warn.Warn(&k.log, "not storing").Str("store", k.dir.Path).Int64("free_bytes", free).Uint64("units_not_stored", k.notStored.Load()).
				Msg("history still not storing: the state dir's filesystem is full")
		}
		if free < k.need {
			continue
		}
		if err := k.store.RestartJetStream(); err != nil {
			k.warn.Warn(&k.log, "restart").Err(err).Msg("history: starting JetStream again failed; trying again")
			continue
		}
		k.notStored.Store(base + count() - since)
		k.ok.Store(true)
		k.log.Info().Str("store", k.dir.Path).Int64("free_bytes", free).Uint64("units_not_stored", k.notStored.Load()).
			Msg("history storing again: the state dir has room again")
	}
}
