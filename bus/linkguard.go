package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// auditSubject is where the embedded server tells of every JetStream API call in
// the club's account, with who made it: a request that came down the hub's link
// names the leaf connection as its client, whatever the hub put in its headers
// (the server replaces a leaf's Nats-Request-Info with the leaf's own).
const auditSubject = "$JS.EVENT.ADVISORY.API"

// guardLogFirst and guardLogEvery bound the guard's log: the first guardLogFirst
// consumers deleted are logged each, then one in guardLogEvery, with the
// count.
const (
	guardLogFirst = 20
	guardLogEvery = 100
)

// GuardLink keeps the hub to the consumers its sourcing makes on the club's
// history: ephemeral, no deliver group, delivering under $LEAGUE.<club>. Subject
// permissions on the link cannot see a consumer's settings (they are in the
// request's body), so a hub could make the club's own server deliver its history
// into the workers' queue group, or anywhere in the club, again and again, and for
// good with a durable. The guard deletes every other consumer the link makes, at
// once, logging it (nothing without a link); and before it returns it deletes
// every consumer already on the stream that delivers into the club's own subjects
// or to a deliver group, which nothing of the club makes (its readers are ordered
// consumers): those a hub left under an earlier version, or made in the moment
// before the guard was there. It is called before the workers subscribe; it runs
// until ctx ends.
//
// A consumer deleted after it was made may have delivered what it could in the
// moment it lived: measured, one made in the sourcing's own request form with
// deliver policy all handed the workers the whole stream once before it went.
// ClubDenyImports refuses the other request forms before they reach the server,
// so only that one comes this far. Judging the request before the server sees it
// (a mapping of the domain's consumer API to the guard) stalled the real sourcing
// at a nats-server hub under -race, and was left out.
func GuardLink(ctx context.Context, nc *nats.Conn, h *HubLink, prefix string, log zerolog.Logger) error {
	if h == nil {
		return nil
	}
	g := &linkGuard{nc: nc, club: h.Club, prefix: prefix, stream: Subjects{Prefix: prefix}.Stream(),
		log: log.With().Str("component", "hub link guard").Logger()}
	audit, err := nc.Subscribe(auditSubject, g.audit)
	if err != nil {
		return fmt.Errorf("hub link guard: subscribe %s: %w", auditSubject, err)
	}
	if err := nc.Flush(); err != nil {
		return fmt.Errorf("hub link guard: subscribe %s: %w", auditSubject, err)
	}
	g.sweep(ctx)
	go func() {
		<-ctx.Done()
		_ = audit.Unsubscribe()
	}()
	return nil
}

type linkGuard struct {
	nc                   *nats.Conn
	club, prefix, stream string
	log                  zerolog.Logger
	told                 atomic.Int64 // consumers deleted
}

// consumerInfo is the part of a consumer's info the guard judges.
type consumerInfo struct {
	Stream string `json:"stream_name"`
	Name   string `json:"name"`
	Config struct {
		Durable        string `json:"durable_name"`
		DeliverSubject string `json:"deliver_subject"`
		DeliverGroup   string `json:"deliver_group"`
	} `json:"config"`
	Error *struct {
		Description string `json:"description"`
	} `json:"error"`
}

// audit deletes a consumer made through the link that the hub may not have.
func (g *linkGuard) audit(m *nats.Msg) {
	if ci, why := g.judgeAudit(m.Data); why != "" {
		g.remove(ci, why, "consumer made through the hub's link deleted")
	}
}

// judgeAudit reads an API call's advisory: for a consumer made by a request that
// came down the link, what is wrong with it, or "". It judges the response (what
// the server made), not the request.
func (g *linkGuard) judgeAudit(data []byte) (consumerInfo, string) {
	var a struct {
		Client *struct {
			Kind string `json:"kind"`
		} `json:"client"`
		Subject  string `json:"subject"`
		Response string `json:"response"`
	}
	var ci consumerInfo
	if json.Unmarshal(data, &a) != nil || a.Client == nil || a.Client.Kind != "Leafnode" {
		return ci, ""
	}
	if !strings.HasPrefix(a.Subject, "$JS.API.CONSUMER.CREATE.") && !strings.HasPrefix(a.Subject, "$JS.API.CONSUMER.DURABLE.CREATE.") {
		return ci, ""
	}
	if json.Unmarshal([]byte(a.Response), &ci) != nil || ci.Error != nil || ci.Name == "" {
		return ci, "" // nothing was made
	}
	return ci, g.linkRule(ci)
}

// linkRule says what is wrong with a consumer the hub made, or "".
func (g *linkGuard) linkRule(ci consumerInfo) string {
	c := ci.Config
	switch {
	case ci.Stream != g.stream:
		return "not on the club's history stream " + g.stream
	case c.Durable != "":
		return "durable (" + c.Durable + ")"
	case c.DeliverGroup != "":
		return "a deliver group (" + c.DeliverGroup + ")"
	case !strings.HasPrefix(c.DeliverSubject, "$LEAGUE."+g.club+"."):
		return fmt.Sprintf("it delivers on %q, not under $LEAGUE.%s.", c.DeliverSubject, g.club)
	}
	return ""
}

// sweepRule says what is wrong with a consumer found on the stream, made by
// anyone: nothing of the club delivers its history into the club's own subjects,
// nor to a deliver group.
func (g *linkGuard) sweepRule(ci consumerInfo) string {
	c := ci.Config
	switch {
	case c.DeliverGroup != "":
		return "a deliver group (" + c.DeliverGroup + ")"
	case c.DeliverSubject == g.prefix || strings.HasPrefix(c.DeliverSubject, g.prefix+"."):
		return fmt.Sprintf("it delivers on %q, the club's own subjects", c.DeliverSubject)
	}
	return ""
}

// sweep deletes what the link made before the guard was there (a daemon of an
// earlier version, or the moment before this one subscribed).
func (g *linkGuard) sweep(ctx context.Context) {
	api := "$JS.API.CONSUMER.LIST." + g.stream
	for offset := 0; ctx.Err() == nil; {
		req, _ := json.Marshal(map[string]int{"offset": offset})
		m, err := g.nc.Request(api, req, 5*time.Second)
		if err != nil {
			g.log.Warn().Err(err).Str("stream", g.stream).Msg("hub link guard: list the stream's consumers")
			return
		}
		var page struct {
			Total     int            `json:"total"`
			Limit     int            `json:"limit"`
			Consumers []consumerInfo `json:"consumers"`
			Error     *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(m.Data, &page); err != nil || page.Error != nil {
			return // no stream yet: nothing on it
		}
		for _, ci := range page.Consumers {
			ci.Stream = g.stream
			if why := g.sweepRule(ci); why != "" {
				g.remove(ci, why, "consumer found on the club's history deleted")
			}
		}
		offset += len(page.Consumers)
		if len(page.Consumers) == 0 || offset >= page.Total {
			return
		}
	}
}

// remove deletes a consumer and tells of it, once.
func (g *linkGuard) remove(ci consumerInfo, why, what string) {
	m, err := g.nc.Request("$JS.API.CONSUMER.DELETE."+ci.Stream+"."+ci.Name, nil, 5*time.Second)
	if err == nil && strings.Contains(string(m.Data), `"error"`) && !strings.Contains(string(m.Data), "consumer not found") {
		err = fmt.Errorf("%s", m.Data)
	}
	if err != nil {
		g.log.Error().Err(err).Str("stream", ci.Stream).Str("consumer", ci.Name).Str("why", why).Msg("hub link guard: could not delete a consumer the hub may not have")
		return
	}
	g.tell(ci, why, what)
}

// tell logs what the guard did: each of the first guardLogFirst, then one in
// guardLogEvery, with the count, so that a hub that keeps asking does not fill the
// club's disk.
func (g *linkGuard) tell(ci consumerInfo, why, what string) {
	if n := g.told.Add(1); n <= guardLogFirst || n%guardLogEvery == 0 {
		g.log.Warn().Str("stream", ci.Stream).Str("consumer", ci.Name).Str("why", why).Int64("count", n).
			Msg(what + ": the hub may make only its sourcing's consumers (ephemeral, no deliver group, delivering under $LEAGUE.<club>.)")
	}
}
