package bus

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/logging"
)

// A tool reads the history with consumers of its own, but NATS subject permissions
// cannot see a request's body: the create subject a tool needs also creates durable
// consumers (review-club F2), push consumers that deliver onto the workers' queue
// group (F8), and updates any existing consumer by name, the daemon's own among them
// (F7: its page's bucket watcher, its history reader). So the embedded server's
// guard reads JetStream's own audit of every API request ($JS.EVENT.ADVISORY.API:
// the client's user, the request and the server's answer) and deletes, at once,
// every consumer a tool made or changed that a tool may not have. A consumer of the
// daemon's that a tool changed is deleted too: its owner makes it again, with its
// own config (ordered consumers and bucket watchers do, by their heartbeats).

// guardMaxInactive bounds a tool's consumer's inactive threshold: past it, a consumer
// is as lasting as a durable one. An hour: the nats CLI's `stream view` pager asks for
// that, on a durable in memory (jsm.go stream_pager.go), which a tool may have.
const guardMaxInactive = time.Hour

// guardRecent is how old a consumer a tool's create request answers with may be:
// older, the request changed an existing consumer rather than made one.
const guardRecent = 2 * time.Second

// guardQueue bounds the audits waiting for the guard; beyond it the server drops
// them for this subscription (a slow consumer), counted in the warning.
const guardQueue = 4096

// guardWait bounds the guard's delete request.
const guardWait = 5 * time.Second

// consumerGuard deletes the consumers tools may not have.
type consumerGuard struct {
	// del deletes a consumer "<stream>.<name>" (a request to the API).
	del func(key string) error
	log zerolog.Logger
	// daemon's consumers by stream and name, as the audits showed them made; a
	// tool's request that answers with one of them changed it.
	own  map[string]time.Time
	warn *logging.Sampler
}

// startConsumerGuard subscribes to the API audit on an in-process connection,
// closed by the server's Shutdown (nc.Close).
func startConsumerGuard(ns *server.Server, log zerolog.Logger) (*nats.Conn, error) {
	done := make(chan struct{})
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name("scoreboard consumer guard"), nats.MaxReconnects(-1),
		nats.ClosedHandler(func(*nats.Conn) { close(done) }))
	if err != nil {
		return nil, err
	}
	g := newConsumerGuard(func(key string) error {
		_, err := nc.Request("$JS.API.CONSUMER.DELETE."+key, nil, guardWait)
		return err
	}, log)
	ch := make(chan *nats.Msg, guardQueue)
	if _, err := nc.ChanSubscribe(server.JSAuditAdvisory, ch); err != nil {
		nc.Close()
		return nil, err
	}
	go func() {
		for {
			select {
			case m := <-ch:
				g.audit(m.Data)
			case <-done: // nats.go never closes ch; the connection's end is the guard's
				return
			}
		}
	}()
	return nc, nc.Flush()
}

func newConsumerGuard(del func(key string) error, log zerolog.Logger) *consumerGuard {
	return &consumerGuard{del: del, log: log, own: map[string]time.Time{}, warn: logging.NewSampler(10, time.Second, 100)}
}

// audit looks at one API request's audit.
func (g *consumerGuard) audit(data []byte) {
	var a server.JSAPIAudit
	if err := json.Unmarshal(data, &a); err != nil || a.Client == nil {
		return
	}
	api := strings.TrimPrefix(a.Subject, "$JS.API.")
	if !strings.HasPrefix(api, "CONSUMER.CREATE.") && !strings.HasPrefix(api, "CONSUMER.DELETE.") && !strings.HasPrefix(api, "CONSUMER.DURABLE.CREATE.") {
		return
	}
	if key, ok := strings.CutPrefix(api, "CONSUMER.DELETE."); ok {
		// A tool may delete a consumer by name, the daemon's too (review-club F3):
		// its owner makes it again; said, so that the resets it costs are seen.
		if a.Client.User == RoleTool && g.own[key] != (time.Time{}) && strings.Contains(a.Response, `"success":true`) {
			g.warn.Warn(&g.log, "deleted").Str("consumer", key).Str("client", a.Client.Host).Uint64("cid", a.Client.ID).
				Msg("a tool deleted one of the daemon's consumers; its owner makes it again")
		}
		delete(g.own, key)
		return
	}
	var resp server.JSApiConsumerCreateResponse
	if err := json.Unmarshal([]byte(a.Response), &resp); err != nil || resp.ConsumerInfo == nil || resp.Config == nil {
		return // refused: nothing made
	}
	key := resp.Stream + "." + resp.Name
	if a.Client.User != RoleTool {
		if a.Client.User == RoleDaemon {
			if len(g.own) >= guardQueue {
				g.prune()
			}
			g.own[key] = resp.Created
		}
		return
	}
	why := g.refuse(resp.ConsumerInfo, key, a.Time)
	if why == "" {
		return
	}
	err := g.del(key)
	if errors.Is(err, nats.ErrConnectionClosed) {
		return // the server is shutting down
	}
	ev := g.warn.Warn(&g.log, "refused")
	if err != nil {
		ev = g.log.Error().Err(err)
	}
	ev.Str("stream", resp.Stream).Str("consumer", resp.Name).Str("client", a.Client.Host).Uint64("cid", a.Client.ID).
		Msg("a tool's consumer deleted: " + why + " (a tool may read with ephemeral consumers of its own only)")
}

// refuse says why a tool may not have the consumer c, or "".
func (g *consumerGuard) refuse(c *server.ConsumerInfo, key string, at time.Time) string {
	cfg := c.Config
	switch {
	case g.own[key] != (time.Time{}):
		return "it is the daemon's own, which a tool changed; its owner makes it again"
	case cfg.Durable != "" && (cfg.InactiveThreshold <= 0 || !cfg.MemoryStorage):
		return "durable, kept on disk or without an inactive threshold"
	case cfg.DeliverGroup != "":
		return "a push consumer with a deliver group"
	case cfg.DeliverSubject != "" && !strings.HasPrefix(cfg.DeliverSubject, "_INBOX."):
		return "a push consumer delivering outside an inbox"
	case cfg.InactiveThreshold > guardMaxInactive:
		return "an inactive threshold over " + guardMaxInactive.String()
	case !at.IsZero() && at.Sub(c.Created) > guardRecent:
		return "an existing consumer changed"
	}
	return ""
}

// prune forgets the daemon's consumers made longest ago, half of them.
func (g *consumerGuard) prune() {
	var ts []time.Time
	for _, t := range g.own {
		ts = append(ts, t)
	}
	// The median by a partial look is enough: drop those older than the mean.
	var sum time.Duration
	base := ts[0]
	for _, t := range ts {
		sum += t.Sub(base)
	}
	cut := base.Add(sum / time.Duration(len(ts)))
	for k, t := range g.own {
		if !t.After(cut) {
			delete(g.own, k)
		}
	}
}
