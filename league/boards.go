package league

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/result"
)

// Bucket is the hub's KV bucket of each club's ports' latest boards, keyed
// <club>.<port>: the bucket a page under the prefix "league" follows
// (bus.Subjects{Prefix: "league"}.Boards()), so the club's page serves the league.
const Bucket = "LEAGUE_BOARDS"

// maxUnits bounds the units the board keeper holds while their results are on the
// way: a club's units in flight, many times over.
const maxUnits = 4096

// setupBoards creates the bucket.
func setupBoards(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      Bucket,
		Description: "scoreboard league: each club's ports' latest result, with its unit",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("hub: bucket %s: %w", Bucket, err)
	}
	return kv, nil
}

// RunBoards keeps the bucket up to date from LEAGUE until ctx ends: each club's
// ports' latest result with its unit's text, so what it shows came from the club's
// own stream and nowhere else. It reads LEAGUE from its last message of each subject
// on, so a restart of the hub shows the boards at once.
func (h *Hub) RunBoards(ctx context.Context) error {
	kv, err := setupBoards(ctx, h.js, h.replicas)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		err := h.followBoards(ctx, kv)
		if ctx.Err() != nil {
			return nil
		}
		h.log.Warn().Err(err).Msg("league boards: following LEAGUE ended; starting again")
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

func (h *Hub) followBoards(ctx context.Context, kv jetstream.KeyValue) error {
	c, err := h.js.OrderedConsumer(ctx, Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{SubjectPrefix + ".>"},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	it, err := c.Messages()
	if err != nil {
		return fmt.Errorf("messages: %w", err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	units := map[string][]byte{} // club origin seq -> unit, until its result comes
	for {
		m, err := it.Next()
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return err
		}
		club, rest, err := ParseSubject(m.Subject())
		if err != nil {
			continue
		}
		kind, _, _ := strings.Cut(rest, ".")
		switch kind {
		case "dump":
			if len(units) >= maxUnits {
				clear(units) // results that never came; the boards miss a unit, never more
			}
			d, _ := bus.ReadDump(m.Headers())
			units[fmt.Sprintf("%s %s %d", club, d.Origin, d.Seq)] = m.Data()
		case "result":
			r, err := result.Decode(m.Data())
			if err != nil || !bus.ValidToken(r.Port) {
				continue
			}
			key := fmt.Sprintf("%s %s %d", club, r.Origin, r.Seq)
			unit := units[key]
			delete(units, key)
			var board []string
			if r.Problem == "othello" && unit != nil {
				board, _ = engine.OthelloBoardAfter(unit)
			}
			// The club's time of the result, not the time LEAGUE got it (a catch-up's).
			at, ok := bus.ParseTime(m.Headers().Get(bus.HeaderTime))
			if md, err := m.Metadata(); !ok && err == nil {
				at = md.Timestamp
			} else if !ok {
				at = time.Now()
			}
			h.sawPort(club, r.Port)
			if _, err := kv.Put(ctx, club+"."+r.Port, history.AppendRecord(nil, m.Data(), unit, at, board, false)); err != nil && ctx.Err() == nil {
				h.log.Warn().Err(err).Str("club", club).Str("port", r.Port).Msg("league boards: put refused")
			}
		}
	}
}
