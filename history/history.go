// Package history keeps every unit the daemon's own ports read and the outcome
// each took, in JetStream, and each port's latest result in a KV bucket: it sets up
// the stream and the bucket, runs the actors that record into the stream and keep
// the bucket up to date, and reads the history back.
//
// The stream takes nothing off the bus. Whatever its replicas, it captures only the
// Repair subjects, which only the daemon may publish (a tool or a worker may not),
// and stores each message under its own subject again (a subject transform). The
// daemon's Recorder publishes there, with acks, a copy of each dump its ports
// publish and of each result a port took as the unit's outcome (the answer it
// matched to its dump by origin, seq and the unit's digest, or its own error
// result), and sends again what is refused or not acked. So a tool's dumps, which it
// may publish on the bus with any header (a port's origin and seqs, any
// Nats-Msg-Id), are answered by the workers on the tool's inbox and kept nowhere:
// they cannot take the place of a port's unit, push it out of the stream, or crowd
// it out of the stream's intake, and the ids the stream deduplicates by
// (bus.DumpID, bus.ResultID: each unit and its outcome kept once, a copy sent again
// after a lost ack dropped) are the Recorder's alone.
//
// The ports never wait for the stream to publish: the Recorder copies without
// blocking them. A display writer holds each answer until the stream has acked its
// result (daemon.Stored, told by the Recorder as the ack comes), 2 s at most.
package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/prune"
	"github.com/goclub/scoreboard/result"
)

// Defaults of the limits.
const (
	DefaultMaxAge   = 90 * 24 * time.Hour
	DefaultMaxBytes = 1 << 30
)

// DefaultDuplicates is the stream's deduplication window when Config leaves it out
// (JetStream's own default).
const DefaultDuplicates = 2 * time.Minute

// Config is the history's setup.
type Config struct {
	Prefix   string        // the subjects' prefix; the names derive from it
	MaxAge   time.Duration // units older than this are dropped
	MaxBytes int64         // the oldest units are dropped beyond this
	Replicas int           // copies on a cluster; 1 on one server
	// Duplicates is how long the stream remembers a Nats-Msg-Id: a unit published
	// again, or answered again, within it is kept once. Every id costs the server
	// memory for that long, so it should be no longer than a unit's attempts with
	// some margin; DefaultDuplicates when 0.
	Duplicates time.Duration
	// Sync is how often the store is synced to disk (--history-sync): the embedded
	// server's setting, given to it as it starts (bus.ServerOptions); the zero value
	// is the server's default (every 2 minutes). An external server has its own.
	Sync Sync
}

// ErrNoJetStream is returned by Setup when the server has no JetStream.
var ErrNoJetStream = errors.New("the NATS server has no JetStream")

// Setup creates the stream and the bucket, or updates them to c, and returns the
// bucket.
func Setup(ctx context.Context, js jetstream.JetStream, c Config) (jetstream.KeyValue, error) {
	subj := bus.Subjects{Prefix: c.Prefix}
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return nil, fmt.Errorf("%w (%v)", ErrNoJetStream, err)
		}
		return nil, fmt.Errorf("history: jetstream account info: %w", err)
	}
	replicas := max(c.Replicas, 1)
	// The pairings' bucket first: the stream sources it (pairing.HistorySource),
	// so that the hub's sourcing of the history brings each port's game too. A
	// bucket that cannot be made leaves the history without it (the daemon says so
	// where it opens it): the units matter more than their players' names.
	_, perr := pairing.Setup(ctx, js, c.Prefix, replicas)
	// The stream takes only the Recorder's acknowledged copies, on the Repair
	// subjects, stored under the original ones: nothing a tool publishes.
	sc := jetstream.StreamConfig{
		Name:             subj.Stream(),
		Description:      "scoreboard history: every unit the daemon's ports read (the dump) and its outcome (the result)",
		Subjects:         []string{subj.AllRepairs()},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: subj.AllRepairs(), Destination: c.Prefix + ".>"},
		Retention:        jetstream.LimitsPolicy,
		Discard:          jetstream.DiscardOld,
		MaxAge:           c.MaxAge,
		Storage:          jetstream.FileStorage,
		Replicas:         replicas,
		Duplicates:       min(nonZero(c.Duplicates, DefaultDuplicates), nonZero(c.MaxAge, DefaultDuplicates)),
		MaxMsgSize:       MaxMsgSize(),
	}
	if perr == nil {
		sc.Sources = []*jetstream.StreamSource{pairing.HistorySource(c.Prefix)}
	}
	if c.MaxBytes > 0 {
		// Held by the daemon's keeper (package prune), not by the server's
		// max_bytes, which from 32 MiB up gives 8 MiB blocks: nats-server keeps the
		// last one's cache while it is written and loads a block whole to purge
		// it, 8 MiB each on a Pi's 64 MiB (RELIABILITY.md, "Long runs"); 4 MiB so.
		sc = prune.WithShare(sc, c.MaxBytes)
	}
	_, err := js.CreateOrUpdateStream(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("history: stream %s: %w", subj.Stream(), err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      subj.Boards(),
		Description: "scoreboard: each port's latest result, with its unit and, for othello, the board",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("history: bucket %s: %w", subj.Boards(), err)
	}
	return kv, nil
}

func nonZero(d, or time.Duration) time.Duration {
	if d <= 0 {
		return or
	}
	return d
}

// AppendRecord appends a result's JSON with the unit's text and the time as more
// fields: what the bucket holds and `history --json` prints. res must be a JSON
// object. board, if not nil, is added as "board"; unanswered adds "unanswered":true.
func AppendRecord(dst, res, unit []byte, at time.Time, board []string, unanswered bool) []byte {
	if n := len(res); n >= 2 && res[n-1] == '}' {
		dst = append(dst, res[:n-1]...)
		if n > 2 {
			dst = append(dst, ',')
		}
	} else {
		dst = append(dst, '{')
	}
	dst = append(dst, `"unit":`...)
	dst = result.AppendJSONString(dst, string(unit))
	dst = append(dst, `,"time":"`...)
	dst = at.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if board != nil {
		dst = append(dst, `,"board":[`...)
		for i, row := range board {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendQuote(dst, row) // rows are '-', 'B' and 'W' only
		}
		dst = append(dst, ']')
	}
	if unanswered {
		dst = append(dst, `,"unanswered":true`...)
	}
	return append(dst, '}')
}

// Recovered reads what the stream holds after a start on a store from before, and
// says what recovering it dropped (a block a power cut or a kill left short or
// damaged): "" when nothing was seen dropped, else one line for the log and the
// systemd status. The server does not say how many messages a block cut short
// held, so the count is a floor: the messages it reports lost, those missing in the
// middle (interior deletes: the limits drop only the oldest), and those beyond the
// last readable up to the highest stream sequence the bucket's values name.
// dir, if not nil, keeps the interior deletes already reported, so each is told once.
func Recovered(ctx context.Context, js jetstream.JetStream, prefix string, dir *StateDir) (kept uint64, dropped string, err error) {
	subj := bus.Subjects{Prefix: prefix}
	s, err := js.Stream(ctx, subj.Stream())
	if err != nil {
		return 0, "", err
	}
	st := s.CachedInfo().State
	var lost uint64
	if st.Lost != nil {
		lost = uint64(len(st.Lost.Msgs))
	}
	var tail uint64
	if kv, err := js.KeyValue(ctx, subj.Boards()); err == nil {
		if w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes()); err == nil {
			for e := range w.Updates() {
				if e == nil {
					break
				}
				var v struct {
					StreamSeq uint64 `json:"stream_seq"`
				}
				if json.Unmarshal(e.Value(), &v) == nil && v.StreamSeq > st.LastSeq {
					tail = max(tail, v.StreamSeq-st.LastSeq)
				}
			}
			w.Stop()
		}
	}
	middle := uint64(st.NumDeleted)
	if dir != nil {
		seen := dir.note(deletedNote)
		if middle != seen {
			dir.setNote(deletedNote, middle)
		}
		middle -= min(middle, seen)
	}
	if lost+tail+middle == 0 {
		return st.Msgs, "", nil
	}
	return st.Msgs, fmt.Sprintf("history: the store was damaged: dropped at least %d messages it could not read (%d reported lost, %d missing in the middle, %d after the last readable), kept %d",
		lost+tail+middle, lost, middle, tail, st.Msgs), nil
}

// MaxMsgSize is the largest message the stream keeps: the largest unit of any
// problem, with room for its headers. A larger dump is one no worker answers (it
// gets an oversize error result, which is kept), so keeping it would only push real
// games out of a small store; and nats-server holds what the stream writes in
// memory for a while, so a flood of such dumps would cost the daemon its size.
func MaxMsgSize() int32 { return int32(engine.LargestUnit() + 64<<10) }
