// Package prune keeps JetStream streams below their byte and age limits by
// dropping their oldest units a chunk at a time, before the server's own limits
// do it one unit at a time.
//
// Why: a file stream at its max_bytes drops its oldest message for every one it
// stores, and nats-server (2.15) loads the whole first block of the store, 8 MiB
// for a stream of 32 MiB or more, to drop each one ("TODO(dlc) - Figure out a way
// not to have to load it in", filestore.go). It holds that block while the drops
// go on, and loads it again after a collection. A hub's 20 clubs at their limits
// stepped from a 416 MiB peak to 580-814 MiB (RELIABILITY.md, "Long runs"); 200
// clubs would hold 200 more blocks, 1.6 GiB. Its max_age expires units the same
// way, one by one from the loaded first block. A purge up to a sequence removes
// the blocks before it whole, and loads at most the one it ends in, once.
package prune

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// DefaultEvery is how often a Keeper looks at its streams. A stream grows by its
// share's sixteenth (High's headroom) between two looks only at a rate no club
// reaches: 64 MiB in 10 s for the default 1 GiB share. One that does meets the
// server's limit, which drops its oldest units as before, or, its share the
// Keeper's alone (ShareKey), passes it until the next look.
const DefaultEvery = 10 * time.Second

// Marks: a stream holding more than High(max) bytes is pruned to Low(max). The
// sixteenth below the limit is the headroom the stream has to grow in between
// two looks. The chunk pruned at once is a sixteenth too, but at least two of
// the store's blocks (16 MiB; a quarter of a share under 64 MiB): a purge loads
// the block it ends in, so the fewer purges, the fewer loads (a sixteenth of a
// 33 MiB share, 2 MiB, loaded each 8 MiB block four times). So a 1 GiB share
// keeps from 7/8 to 15/16 of it, and a 64 MiB one from 11/16 to 15/16.
func High(share int64) int64 { return share - share/16 }

// Low is what a pruned stream keeps: see High.
func Low(share int64) int64 { return High(share) - max(share/16, min(16<<20, share/4)) }

// The marks of age, as those of bytes: a stream whose oldest unit is older than
// OldAge(max_age) is pruned of those older than YoungAge(max_age). The server
// would expire each unit at max_age, loading the first block to drop it, as at
// max_bytes; a club's stream at a real hub meets its 90 days long before its
// 1 GiB. The headroom and the chunk are a sixteenth of max_age, at most a day:
// a 90-day share keeps 88 to 89 days.
func OldAge(max time.Duration) time.Duration { return max - ageStep(max) }

// YoungAge: see OldAge.
func YoungAge(max time.Duration) time.Duration { return max - 2*ageStep(max) }

func ageStep(max time.Duration) time.Duration { return min(max/16, 24*time.Hour) }

// Keeper prunes the streams it owns. It is an actor: Run owns its looks.
type Keeper struct {
	js   jetstream.JetStream
	owns func(stream string) bool
	log  zerolog.Logger

	dropped atomic.Uint64
	purges  atomic.Uint64
}

// New returns a Keeper of the streams of js for which owns is true. Of those it
// prunes only the ones the server would otherwise trim one unit at a time (file
// streams with limits retention and a max_age, or a max_bytes with the oldest
// discarded), and those whose share it alone holds (ShareKey).
func New(js jetstream.JetStream, owns func(stream string) bool, log zerolog.Logger) *Keeper {
	return &Keeper{js: js, owns: owns, log: log.With().Str("component", "prune").Logger()}
}

// Dropped is how many units the Keeper has dropped, and Purges in how many purges.
func (k *Keeper) Dropped() uint64 { return k.dropped.Load() }

// Purges: see Dropped.
func (k *Keeper) Purges() uint64 { return k.purges.Load() }

// Run looks at the streams every interval until ctx ends. A look that fails is
// logged and the next one tries again: meanwhile the server's own limits hold,
// and a share the Keeper alone holds (ShareKey) is not held.
func (k *Keeper) Run(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var failing bool
	for {
		err := k.Look(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failing:
			k.log.Warn().Err(err).Msg("could not prune the streams: meanwhile the server's limits drop their oldest units, and a stream whose share only the keeper holds grows past it")
		case err == nil && failing:
			k.log.Info().Msg("pruning the streams again")
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// PurgesPerLook bounds a look's purges of streams below their limits: each loads
// a block of the store or more (4 or 8 MiB), and 200 clubs' streams filled together would be 1.6 GB read in one
// look. The most urgent go first, the others at the next looks, 10 s apart: a
// stream has a sixteenth of its share to grow in meanwhile (64 MiB of 1 GiB).
// (The 200-club benchmark's p99 at its limits was 21.2 s with all 200 purged in
// one look, and 27.5 s with this bound: not the purges' doing.)
//
// A stream at or past its limit is purged at each look whatever the bound: one
// whose share the Keeper alone holds (ShareKey) would grow on, and the server
// drops the others' oldest units one by one. The 200-club benchmark's fill, every
// club's stream past its share at once, purged 4 of them a look: the others grew
// on, for 50 looks.
const PurgesPerLook = 4

// due is a stream to purge below keep; urgency is how near it is to the server's
// own limit, as a share of it (its bytes of max_bytes, its oldest unit's age of
// max_age).
type due struct {
	info    *jetstream.StreamInfo
	keep    uint64
	urgency float64
}

// Look prunes the streams it owns that hold more than their High mark, or a unit
// older than their OldAge: at most PurgesPerLook of them, the most urgent first,
// and every one at or past its limit.
func (k *Keeper) Look(ctx context.Context) error {
	list := k.js.ListStreams(ctx)
	var errs []error
	var todo []due
	for info := range list.Info() {
		if !k.owns(info.Config.Name) || !prunable(info.Config) {
			continue
		}
		d, err := k.plan(ctx, info)
		if err != nil {
			errs = append(errs, err)
		} else if d.keep > info.State.FirstSeq {
			todo = append(todo, d)
		}
	}
	if err := list.Err(); err != nil {
		errs = append(errs, fmt.Errorf("prune: list the streams: %w", err))
	}
	slices.SortFunc(todo, func(a, b due) int { return cmp.Compare(b.urgency, a.urgency) })
	for i, d := range todo {
		if i >= PurgesPerLook && d.urgency < 1 {
			break
		}
		if err := k.prune(ctx, d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// prunable: the server trims a file stream with limits retention by age, and by
// bytes when it discards the oldest (a memory stream holds no blocks to load).
func prunable(c jetstream.StreamConfig) bool {
	return c.Storage == jetstream.FileStorage && c.Retention == jetstream.LimitsPolicy &&
		(bytesKept(c) || c.MaxAge > 0)
}

func bytesKept(c jetstream.StreamConfig) bool { return MaxBytes(c) > 0 }

// ShareKey is the stream config's metadata key of a share the Keeper alone
// holds: the bytes (decimal) of a stream given no max_bytes of the server's.
//
// Why a stream would: nats-server sizes a file stream's blocks from its
// max_bytes, 8 MiB from 32 MiB up, and the block being written is cached whole
// while the stream is written (its buffer from a pool of 8 MiB ones). A hub's 200
// club streams written at once held 200 of them, 1.6 GiB, whatever their share
// (BENCHMARKS.md, "Memory budget"). A stream with no max_bytes and a
// max_msgs_per_subject gets 4 MiB blocks, as a KV bucket does, and no client
// setting sizes them otherwise. Its share is then this key's, held by the Keeper
// alone: the stream may pass it by what it is written between two looks.
const ShareKey = "scoreboard_max_bytes"

// MaxBytes is the bytes a stream is held to: the server's max_bytes when it
// discards the oldest, else its ShareKey's; 0: none.
func MaxBytes(c jetstream.StreamConfig) int64 {
	if c.Discard == jetstream.DiscardOld && c.MaxBytes > 0 {
		return c.MaxBytes
	}
	if n, err := strconv.ParseInt(c.Metadata[ShareKey], 10, 64); err == nil && n > 0 {
		return n
	}
	return 0
}

// WithShare is cfg held to maxBytes by a Keeper alone (ShareKey): no max_bytes of
// the server's, and a max_msgs_per_subject no stream reaches, so that its blocks
// are 4 MiB. Metadata is copied, not shared.
func WithShare(cfg jetstream.StreamConfig, maxBytes int64) jetstream.StreamConfig {
	md := maps.Clone(cfg.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	md[ShareKey] = strconv.FormatInt(maxBytes, 10)
	cfg.Metadata, cfg.MaxBytes, cfg.MaxMsgsPerSubject = md, 0, math.MaxInt64
	return cfg
}

// plan says below which sequence to purge the stream: its oldest units down to
// about Low bytes and, with a max_age, to those younger than YoungAge, the later
// of the two. It keeps the last unit whatever happens.
func (k *Keeper) plan(ctx context.Context, info *jetstream.StreamInfo) (due, error) {
	st, c := info.State, info.Config
	d := due{info: info, keep: st.FirstSeq}
	if st.Msgs == 0 {
		return d, nil
	}
	if bytesKept(c) {
		share := MaxBytes(c)
		d.urgency = float64(st.Bytes) / float64(share)
		if st.Bytes > uint64(High(share)) {
			d.keep = KeepFrom(st.FirstSeq, st.LastSeq, st.Bytes, uint64(Low(share)))
		}
	}
	if age := time.Since(st.FirstTime); c.MaxAge > 0 {
		d.urgency = max(d.urgency, float64(age)/float64(c.MaxAge))
		if age > OldAge(c.MaxAge) {
			seq, err := k.seqFromTime(ctx, c.Name, time.Now().Add(-YoungAge(c.MaxAge)))
			if err != nil {
				return d, fmt.Errorf("prune: stream %s: the first unit younger than %v: %w", c.Name, YoungAge(c.MaxAge), err)
			}
			d.keep = max(d.keep, min(seq, st.LastSeq))
		}
	}
	return d, nil
}

// prune purges a stream below d.keep, and counts what it dropped.
func (k *Keeper) prune(ctx context.Context, d due) error {
	st, c, keep := d.info.State, d.info.Config, d.keep
	n, err := k.purge(ctx, c.Name, keep)
	if err != nil {
		return fmt.Errorf("prune: stream %s: purge below %d: %w", c.Name, keep, err)
	}
	k.dropped.Add(n)
	k.purges.Add(1)
	k.log.Debug().Str("stream", c.Name).Uint64("bytes", st.Bytes).Int64("max_bytes", MaxBytes(c)).
		Time("first_time", st.FirstTime).Dur("max_age_ms", c.MaxAge).
		Uint64("keep_from", keep).Uint64("dropped", n).Msg("dropped the oldest units to stay below max_bytes and max_age")
	return nil
}

// seqFromTime is the sequence of the stream's first unit stored at or after t, or
// the largest sequence when there is none.
func (k *Keeper) seqFromTime(ctx context.Context, stream string, t time.Time) (uint64, error) {
	var resp struct {
		Message *struct {
			Seq uint64 `json:"seq"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	req := struct {
		StartTime time.Time `json:"start_time"`
		NoHeaders bool      `json:"no_hdr"`
	}{t.UTC(), true}
	if err := k.request(ctx, "STREAM.MSG.GET."+stream, req, &resp); err != nil {
		return 0, err
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return math.MaxUint64, nil
	case resp.Error != nil:
		return 0, resp.Error
	case resp.Message == nil:
		return 0, errors.New("the server's answer has no message")
	}
	return resp.Message.Seq, nil
}

// purge is JetStream's purge below keep, and says how many units it dropped
// (jetstream's Stream.Purge does not, and would cost a stream info more).
func (k *Keeper) purge(ctx context.Context, stream string, keep uint64) (uint64, error) {
	var resp struct {
		Purged uint64              `json:"purged"`
		Error  *jetstream.APIError `json:"error"`
	}
	req := struct {
		Seq uint64 `json:"seq"`
	}{keep}
	if err := k.request(ctx, "STREAM.PURGE."+stream, req, &resp); err != nil {
		return 0, err
	}
	if resp.Error != nil {
		return 0, resp.Error
	}
	return resp.Purged, nil
}

// request is a JetStream API request, its answer decoded into resp.
func (k *Keeper) request(ctx context.Context, api string, req, resp any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, requestWait)
	defer cancel()
	msg, err := k.js.Conn().RequestWithContext(ctx, apiPrefix(k.js.Options())+api, data)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("the server's answer %.80q: %w", msg.Data, err)
	}
	return nil
}

// apiPrefix is the prefix jetstream's own requests take (it keeps it unexported).
func apiPrefix(o jetstream.JetStreamOptions) string {
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	}
	return jetstream.DefaultAPIPrefix
}

// requestWait bounds a request: a purge or a look-up by time loads at most a
// block, and a replicated stream's goes through its leader.
const requestWait = 30 * time.Second

// KeepFrom is the first sequence to keep of a stream of sequences first..last
// holding bytes, for it to hold about low: the sequences below it are the share
// of the span that bytes-low is of bytes, rounded up. It is never past last.
func KeepFrom(first, last, bytes, low uint64) uint64 {
	if bytes <= low || last < first {
		return first
	}
	hi, lo := bits.Mul64(last-first+1, bytes-low)
	drop, rem := bits.Div64(hi, lo, bytes) // hi < bytes: the quotient is below the span
	if rem > 0 {
		drop++
	}
	return min(first+drop, last)
}
