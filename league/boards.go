package league

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/render"
	"github.com/goclub/scoreboard/result"
)

// Bucket is the hub's KV bucket of each club's ports' latest boards, keyed
// <club>.<port>: the bucket a page under the prefix "league" follows
// (bus.Subjects{Prefix: "league"}.Boards()), so the club's page serves the league.
const Bucket = "LEAGUE_BOARDS"

// maxUnits bounds the units a club's board follower holds while their results are
// on the way: a club's units in flight, many times over.
const maxUnits = 4096

// boardsMaxBytes bounds the bucket, which is held in memory: a league's 800 boards
// take about 1.2 MB, and a club that fills all its maxPorts with the largest results
// and units some 25 MB; beyond it the oldest boards give way.
const boardsMaxBytes = 256 << 20

// setupBoards creates the bucket, in memory: it holds each port's latest board, which
// the boards keeper makes again from the clubs' streams when the hub starts (it reads
// each subject's last message first), so a copy on disk would only cost a write per
// board. A bucket of an earlier hub, on disk, is made again in memory.
func setupBoards(ctx context.Context, js jetstream.JetStream, replicas int, maxBytes int64) error {
	cfg := jetstream.KeyValueConfig{
		Bucket:      Bucket,
		Description: "scoreboard league: each club's ports' latest result, with its unit",
		History:     1,
		Storage:     jetstream.MemoryStorage,
		MaxBytes:    maxBytes,
		Replicas:    max(replicas, 1),
	}
	if old, err := js.KeyValue(ctx, Bucket); err == nil {
		if st, err := old.Status(ctx); err == nil && st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Storage != jetstream.MemoryStorage {
			if err := js.DeleteKeyValue(ctx, Bucket); err != nil {
				return fmt.Errorf("hub: bucket %s on disk, to be made again in memory: %w", Bucket, err)
			}
		}
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, cfg); err != nil {
		return fmt.Errorf("hub: bucket %s: %w", Bucket, err)
	}
	return nil
}

// RunBoards keeps the bucket up to date from the clubs' streams until ctx ends:
// each club's ports' latest result with its unit's text, so what it shows came from
// the club's own stream and nowhere else, and only what is a valid result of a known
// problem (checkResult; the rest is counted as junk, per club). Each club has its own
// follower, which reads its stream from its last message of each subject on (a
// restart of the hub shows the boards at once), and its own writer, which puts at
// most boardsPerSecond boards a second, the latest of each port: a club that floods
// its stream fills its own share of the store and shows its own latest boards, and
// the bucket and the page go on for the other clubs. SetClubs starts and stops the
// followers.
func (h *Hub) RunBoards(ctx context.Context) error {
	if err := setupBoards(ctx, h.js, h.replicas, cmp.Or(h.boardsBytes, boardsMaxBytes)); err != nil {
		if ctx.Err() != nil {
			// Stopped before the bucket was set up (the hub's server away): a stop,
			// not a failure of the hub.
			return nil
		}
		return err
	}
	if err := h.setupPairings(ctx); err != nil {
		// The boards matter more than their players' names.
		h.log.Error().Err(err).Msg("league: pairings are OFF: the boards are kept and shown without players")
	}
	type running struct {
		cancel context.CancelFunc
		done   chan struct{}
	}
	followers := map[string]running{}
	defer func() {
		for _, r := range followers {
			r.cancel()
			<-r.done
		}
	}()
	for {
		h.mu.Lock()
		clubs := names(h.clubs)
		h.mu.Unlock()
		for club, r := range followers {
			if !slices.Contains(clubs, club) {
				r.cancel()
				<-r.done
				delete(followers, club)
			}
		}
		for _, club := range clubs {
			if _, ok := followers[club]; ok {
				continue
			}
			fctx, cancel := context.WithCancel(ctx)
			r := running{cancel: cancel, done: make(chan struct{})}
			followers[club] = r
			go func() {
				defer close(r.done)
				h.followClub(fctx, club)
			}()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-h.clubsChanged:
		}
	}
}

// notifyClubs tells RunBoards the clubs changed.
func (h *Hub) notifyClubs() {
	select {
	case h.clubsChanged <- struct{}{}:
	default:
	}
}

// followClub keeps a club's boards until ctx ends: its writer, and its follower
// started again when it ends.
func (h *Hub) followClub(ctx context.Context, club string) {
	w := &boardWriter{h: h, club: club, wake: make(chan struct{}, 1), pending: map[string]pendingBoard{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()
	defer func() { <-done }()
	js, closeJS := h.readerJS(club)
	defer closeJS()
	for ctx.Err() == nil {
		err := h.followBoards(ctx, js, club, w)
		if ctx.Err() != nil {
			return
		}
		h.log.Warn().Err(err).Str("club", club).Msg("league boards: following the club's stream ended; starting again")
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// Bounds of what a club may make the hub hold or do for its boards.
const (
	// maxUnitBytes bounds the units' text a club's follower holds while their
	// results are on the way, beside maxUnits.
	maxUnitBytes = 8 << 20
	// maxPorts is how many ports of a club the bucket and the page show; a result
	// of another port is junk (too_many_ports). A club has a few.
	maxPorts = 64
	// boardsPerSecond is how many boards a second a club's writer puts at most,
	// after a burst of boardsBurst; a port's results that come faster are shown
	// latest first (the page shows a port's latest only).
	boardsPerSecond = 50
	boardsBurst     = 50
	// maxResultBytes is the largest result a board takes: a record is a few
	// hundred bytes.
	maxResultBytes = 64 << 10
	// maxErrorBytes is the longest error a result may say.
	maxErrorBytes = 4 << 10
)

// readerBatch bounds the messages a club's follower has on their way from the
// server at once (its pull's batch): its default, 500, was 4 MB of a club's 8
// KiB junk. A bound in bytes would have to take the largest message a stream
// holds (1.7 MB) whole.
const readerBatch = 64

// readerJS is the JetStream API a club's follower reads its stream with: on the
// hub's own server, a connection of the club's follower alone, closed by the
// returned func. The server closes a connection whose pending bytes pass its
// max_pending (64 MiB) as a slow consumer: on the hub's one connection, the
// followers of 200 clubs behind their streams' 8 KiB junk (4 MB a club) passed
// it together, and each close dropped every follower, the page's watch of the
// boards and the writers' boards with it, again as each follower read its batch
// anew (the league benchmark's p99 of 21-27 s at the streams' limits). Each
// follower apart, a club behind its stream, whatever its messages' size, holds
// up its own boards only. On an external server (Attach) the followers share the
// hub's connection, readerBatch each.
func (h *Hub) readerJS(club string) (jetstream.JetStream, func()) {
	if h.ns == nil {
		return h.js, func() {}
	}
	nc, err := hubConn(h.ns, "scoreboard hub: club "+club+"'s boards")
	var js jetstream.JetStream
	if err == nil {
		if js, err = jetstream.New(nc); err != nil {
			nc.Close()
		}
	}
	if err != nil {
		h.log.Warn().Err(err).Str("club", club).Msg("league boards: no connection of the club's follower's own; it reads on the hub's")
		return h.js, func() {}
	}
	return js, nc.Close
}

func (h *Hub) followBoards(ctx context.Context, js jetstream.JetStream, club string, w *boardWriter) error {
	c, err := js.OrderedConsumer(ctx, ClubStream(club), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{ClubSubjects(club)},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	it, err := c.Messages(jetstream.PullMaxMessages(readerBatch))
	if err != nil {
		return fmt.Errorf("messages: %w", err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	units := map[string][]byte{} // origin seq -> unit, until its result comes
	unitBytes := 0
	for {
		m, err := it.Next()
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return err
		}
		_, rest, err := ParseSubject(m.Subject())
		if err != nil {
			h.junk.add(h, club, "bad_subject")
			continue
		}
		kind, _, _ := strings.Cut(rest, ".")
		switch kind {
		case "dump":
			if reason := checkDump(rest, m.Data()); reason != "" {
				h.junk.add(h, club, reason)
				continue
			}
			if len(units) >= maxUnits || unitBytes+len(m.Data()) > maxUnitBytes {
				clear(units) // results that never came; the boards miss a unit, never more
				unitBytes = 0
			}
			d, _ := bus.ReadDump(m.Headers())
			units[fmt.Sprintf("%s %d", d.Origin, d.Seq)] = m.Data()
			unitBytes += len(m.Data())
		case "pairing":
			h.takePairing(ctx, club, rest, m.Data())
		case "result":
			r, reason := checkResult(rest, m.Data())
			if reason != "" {
				h.junk.add(h, club, reason)
				continue
			}
			key := fmt.Sprintf("%s %d", r.Origin, r.Seq)
			unit := units[key]
			if unit != nil {
				delete(units, key)
				unitBytes -= len(unit)
			}
			// The club's time of the result, not the time the hub got it (a catch-up's).
			at, ok := bus.ParseTime(m.Headers().Get(bus.HeaderTime))
			if md, err := m.Metadata(); !ok && err == nil {
				at = md.Timestamp
			} else if !ok {
				at = time.Now()
			}
			if !w.offer(r.Port, pendingBoard{problem: r.Problem, failed: r.Error != "", result: m.Data(), unit: unit, at: at}) {
				h.junk.add(h, club, "too_many_ports")
			}
		default:
			h.junk.add(h, club, "bad_subject")
		}
	}
}

// checkDump says why a club's dump (rest: dump.<problem>.<port>) is junk, or "".
func checkDump(rest string, unit []byte) string {
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return "bad_subject"
	}
	p, ok := engine.Lookup(parts[1])
	switch {
	case !ok:
		return "unknown_problem"
	case !bus.ValidToken(parts[2]):
		return "bad_port"
	case len(unit) > p.Limits().MaxUnit:
		return "too_large"
	case !utf8.Valid(unit):
		return "invalid_utf8"
	}
	return ""
}

// checkResult reads a club's result (rest: result.<problem>.<port>) and says why it
// is junk, or "": what the page shows is valid UTF-8 and JSON, a result of a known
// problem on a port that is a subject token, the one its subject names, with an
// answer no longer than the problem's longest, and players no longer than a dump
// may carry.
func checkResult(rest string, data []byte) (result.Record, string) {
	parts := strings.Split(rest, ".")
	switch {
	case len(parts) != 3:
		return result.Record{}, "bad_subject"
	case len(data) > maxResultBytes:
		return result.Record{}, "too_large"
	case !utf8.Valid(data):
		return result.Record{}, "invalid_utf8"
	}
	r, err := result.Decode(data)
	if err != nil {
		return r, "malformed"
	}
	p, ok := engine.Lookup(r.Problem)
	switch {
	case !ok:
		return r, "unknown_problem"
	case !bus.ValidToken(r.Port):
		return r, "bad_port"
	case r.Problem != parts[1] || r.Port != parts[2]:
		return r, "bad_subject"
	case len(r.Answer) > p.Limits().MaxAnswer || len(r.Error) > maxErrorBytes:
		return r, "too_large"
	case r.Players != nil && len(r.Players.JSON()) > result.MaxPlayers:
		return r, "too_large" // more than any round's names: a dump's header is cut there
	}
	return r, ""
}

// boardSubject is the subject of a port's key in the bucket.
func boardSubject(club, port string) string { return "$KV." + Bucket + "." + club + "." + port }

// pendingBoard is a port's latest result, waiting for its club's writer.
type pendingBoard struct {
	problem string
	failed  bool // the result is an error: its unit is not drawn
	result  []byte
	unit    []byte
	at      time.Time
}

// boardWriter puts a club's boards into the bucket, at most boardsPerSecond a
// second: each port's latest.
type boardWriter struct {
	h    *Hub
	club string
	wake chan struct{}

	mu      sync.Mutex
	pending map[string]pendingBoard // port -> its latest result not put yet
	ports   map[string]bool         // the ports shown (at most maxPorts)
}

// offer hands the writer a port's result; false when the club has maxPorts ports
// already and this is another.
func (w *boardWriter) offer(port string, b pendingBoard) bool {
	w.mu.Lock()
	if w.ports == nil {
		w.ports = map[string]bool{}
	}
	if !w.ports[port] && len(w.ports) >= maxPorts {
		w.mu.Unlock()
		return false
	}
	w.ports[port] = true
	w.pending[port] = b
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

func (w *boardWriter) run(ctx context.Context) {
	// A token bucket: a burst of boardsBurst (a club's ports answering at once
	// pass at once), then boardsPerSecond.
	tokens, last := float64(boardsBurst), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		}
		for {
			w.mu.Lock()
			var port string
			var b pendingBoard
			for port, b = range w.pending {
				break
			}
			if port != "" {
				delete(w.pending, port)
			}
			w.mu.Unlock()
			if port == "" {
				break
			}
			now := time.Now()
			tokens = min(boardsBurst, tokens+now.Sub(last).Seconds()*boardsPerSecond)
			last = now
			if tokens < 1 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Duration((1 - tokens) / boardsPerSecond * float64(time.Second))):
				}
				tokens, last = 1, time.Now()
			}
			tokens--
			w.put(ctx, port, b)
		}
	}
}

// put puts a port's board: the result, its unit (when it is one the problem reads),
// and othello's board after it.
func (w *boardWriter) put(ctx context.Context, port string, b pendingBoard) {
	unit := b.unit
	if unit != nil && !b.failed {
		if _, err := render.Solve(b.problem, unit); err != nil {
			w.h.junk.add(w.h, w.club, "bad_unit")
			unit = nil
		}
	}
	var board []string
	if b.problem == "othello" && unit != nil {
		board, _ = engine.OthelloBoardAfter(unit)
	}
	w.h.sawPort(w.club, port)
	// Published, not put: the bucket's stream takes it without an acknowledgement
	// to wait for and decode (a put was two fifths of the keeper's CPU in the hub's
	// profile at 20 clubs).
	// A board the server could not take is one the port's next result replaces.
	if err := w.h.nc.Publish(boardSubject(w.club, port), history.AppendRecord(nil, b.result, unit, b.at, board, false)); err != nil && ctx.Err() == nil {
		w.h.log.Warn().Err(err).Str("club", w.club).Str("port", port).Msg("league boards: put refused")
	}
}
