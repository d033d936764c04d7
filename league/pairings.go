package league

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/pairing"
)

// PairingsBucket is the hub's bucket of the game on each club's ports now, keyed
// <club>.<port> as LEAGUE_BOARDS is: the organiser's loads at the hub ([tables]
// maps a table to club.port), and each club's own loads, which come in the club's
// stream (league.<club>.pairing.<port>) as its units do, checked. The later load
// of a port wins (pairing.Current.Loaded). On disk: nothing could make an
// organiser's load again.
var PairingsBucket = pairing.Bucket(SubjectPrefix)

// hubPairings is the hub's side of the pairings: its bucket, the tables of the
// hub's file, and each club's ports that have a game (at most maxPorts).
type hubPairings struct {
	kv     jetstream.KeyValue
	mu     sync.Mutex
	tables map[int]string
	ports  map[string]map[string]bool // club -> its ports in the bucket
	// refused counts the loads neither applied nor answered (bus.RequestRefusal);
	// warn samples their warnings.
	refused atomic.Int64
	warn    *logging.Sampler
}

// SetTables gives the organiser's loads the hub file's [tables]: table -> club.port.
func (h *Hub) SetTables(tables map[int]string) {
	h.pairings.mu.Lock()
	defer h.pairings.mu.Unlock()
	h.pairings.tables = tables
}

// setupPairings makes the hub's bucket and serves the organiser's load endpoint
// ($LEAGUE_PAIRINGS.load, which the hub's tools may request) on the hub's own
// connection until ctx ends.
func (h *Hub) setupPairings(ctx context.Context) error {
	kv, err := pairing.Setup(ctx, h.js, SubjectPrefix, h.replicas)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	h.pairings.mu.Lock()
	h.pairings.kv = kv
	if h.pairings.ports == nil {
		h.pairings.ports = map[string]map[string]bool{}
	}
	h.pairings.warn = logging.NewSampler(10, time.Second, 100)
	h.pairings.mu.Unlock()
	sub, err := h.nc.Subscribe(pairing.LoadSubject(SubjectPrefix), func(m *nats.Msg) {
		// The hub's connection has every right, and any tool may request a load: it
		// is applied and answered only when the requester waits on its inbox.
		if why := bus.RequestRefusal(m); why != "" {
			n := h.pairings.refused.Add(1)
			if e := h.pairings.warn.Warn(&h.log, why); e != nil {
				e.Str("reply", logging.Clip(m.Reply)).Int64("refused", n).
					Msg("league: pairings load refused: " + why + "; neither applied nor answered (scoreboard pairings load --league requests on its inbox)")
			}
			return
		}
		data, _ := json.Marshal(h.loadPairings(ctx, m.Data))
		if err := m.Respond(data); err != nil {
			h.log.Warn().Err(err).Msg("league: reply to a pairings load")
		}
	})
	if err != nil {
		return fmt.Errorf("hub: pairings endpoint: %w", err)
	}
	context.AfterFunc(ctx, func() { _ = sub.Unsubscribe() })
	return h.nc.Flush()
}

// loadPairings applies an organiser's round: every table of the hub's [tables]
// its game, every other port of the bucket none.
func (h *Hub) loadPairings(ctx context.Context, data []byte) pairing.Report {
	var req pairing.Load
	if err := json.Unmarshal(data, &req); err != nil {
		return pairing.Report{Error: "the request is no pairings load (" + err.Error() + "): use scoreboard pairings load --league"}
	}
	if err := pairing.Check(req.Round); err != nil {
		return pairing.Report{Error: req.File + ": " + err.Error()}
	}
	h.pairings.mu.Lock()
	kv, tables := h.pairings.kv, h.pairings.tables
	h.pairings.mu.Unlock()
	if len(tables) == 0 {
		return pairing.Report{Error: "the hub's file has no [tables]: map each table to its club.port there (docs/pairings.md), then SIGHUP the hub"}
	}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rep, err := pairing.Apply(actx, kv, req.Round, tables, nil, time.Now().UTC())
	if err != nil {
		rep.Error = err.Error()
		h.log.Error().Err(err).Str("file", req.File).Msg("league: pairings load failed")
		return rep
	}
	rep.Unseen = h.unseenPorts(rep.Ports)
	h.log.Info().Str("file", req.File).Str("tournament", req.Round.Tournament).Int("round", req.Round.Round).
		Int("games", len(req.Round.Games)).Int("ports", len(rep.Ports)).Ints("tables_without_port", rep.NoPort).Msg("league: pairings loaded")
	return rep
}

// unseenPorts are those of ports (club.port) that have shown no board at the hub:
// [tables] can name only the file's clubs, not their ports, so a misspelt port
// takes its game silently and no tile ever shows it.
func (h *Hub) unseenPorts(ports map[int]string) []string {
	h.portsMu.Lock()
	defer h.portsMu.Unlock()
	var out []string
	for _, key := range ports {
		club, port, _ := strings.Cut(key, ".")
		if !h.ports[club][port] {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// takePairing puts a club's port's game from its stream (rest is
// "pairing.<port>") into the bucket, unless what the bucket holds was loaded
// later; a value that is not a game, or a port past the club's maxPorts, is junk.
func (h *Hub) takePairing(ctx context.Context, club, rest string, data []byte) {
	port := strings.TrimPrefix(rest, "pairing.")
	if !bus.ValidToken(port) {
		h.junk.add(h, club, "bad_subject")
		return
	}
	c, err := pairing.Decode(data)
	if err != nil {
		h.junk.add(h, club, "bad_pairing")
		return
	}
	p := &h.pairings
	p.mu.Lock()
	kv := p.kv
	if kv == nil {
		p.mu.Unlock()
		return // pairings are off
	}
	seen := p.ports[club]
	if seen == nil {
		seen = map[string]bool{}
		p.ports[club] = seen
	}
	full := !seen[port] && len(seen) >= maxPorts
	if !full {
		seen[port] = true
	}
	p.mu.Unlock()
	if full {
		h.junk.add(h, club, "too_many_ports")
		return
	}
	key := club + "." + port
	if e, err := kv.Get(ctx, key); err == nil {
		if old, err := pairing.Decode(e.Value()); err == nil && !old.Loaded.Before(c.Loaded) {
			return // the organiser's, or a later load, holds the port
		}
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		h.log.Warn().Err(err).Str("key", key).Msg("league: read a port's pairing")
		return
	}
	if _, err := kv.Put(ctx, key, c.Encode()); err != nil {
		h.log.Warn().Err(err).Str("key", key).Msg("league: put a club's pairing")
	}
}

// ParseTables reads a hub file's [tables]: "12" = "north.board1". Every error is
// returned, naming the table; clubs are the [[club]] names.
func ParseTables(tables map[string]string, clubs []string) (map[int]string, error) {
	out := map[int]string{}
	known := map[string]bool{}
	for _, c := range clubs {
		known[c] = true
	}
	ports := map[string]int{}
	var errs []error
	for k, v := range tables {
		t, err := strconv.Atoi(k)
		if err != nil || t < 1 || t > pairing.MaxTable {
			errs = append(errs, fmt.Errorf("[tables] %q: a table is a number from 1 to %d", k, pairing.MaxTable))
			continue
		}
		club, port, ok := strings.Cut(v, ".")
		switch {
		case !ok || !bus.ValidToken(club) || !bus.ValidToken(port):
			errs = append(errs, fmt.Errorf("[tables] %d = %q: want \"club.port\", the club's [[club]] name and the port's name", t, v))
			continue
		case !known[club]:
			errs = append(errs, fmt.Errorf("[tables] %d = %q: %q is no [[club]] of the file", t, v, club))
			continue
		}
		if other, dup := ports[v]; dup {
			errs = append(errs, fmt.Errorf("[tables] %d and %d are both %s: a board plays one game", min(t, other), max(t, other), v))
			continue
		}
		ports[v] = t
		out[t] = v
	}
	return out, errors.Join(errs...)
}
