package club

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/pairing"
)

// pairings is the club's side of the pairings (package pairing): it serves the
// load endpoint, writing the bucket with the daemon's rights after checking the
// round and mapping its tables to the ports ([[port]] table), and follows the
// bucket so that each unit a port takes is stamped with its game.
type pairings struct {
	kv     jetstream.KeyValue
	prefix string
	log    zerolog.Logger
	ports  atomic.Pointer[[]daemon.PortConfig] // the running ports, reloads included
	// refused counts the loads neither applied nor answered (bus.RequestRefusal);
	// warn samples their warnings, one client's flood being one line a second.
	refused atomic.Int64
	warn    *logging.Sampler

	mu  sync.Mutex
	now map[string]string // port -> result.Players' JSON of its game now
}

func newPairings(kv jetstream.KeyValue, prefix string, ports []daemon.PortConfig, log zerolog.Logger) *pairings {
	p := &pairings{kv: kv, prefix: prefix, log: log.With().Str("component", "pairings").Logger(), now: map[string]string{},
		warn: logging.NewSampler(10, time.Second, 100)}
	p.setPorts(ports)
	return p
}

func (p *pairings) setPorts(ports []daemon.PortConfig) { p.ports.Store(&ports) }

// Players is daemon.Config.Players: the game on port now.
func (p *pairings) Players(port string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now[port]
}

// follow keeps now up to date until ctx ends, watching again after a failure;
// ready is closed once the bucket's values are all taken.
func (p *pairings) follow(ctx context.Context, ready chan<- struct{}) {
	for ctx.Err() == nil {
		err := pairing.Follow(ctx, p.kv, func(c pairing.Change) {
			if c.Ready {
				if ready != nil {
					close(ready)
					ready = nil
				}
				return
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if c.Current == nil {
				delete(p.now, c.Key)
				return
			}
			p.now[c.Key] = c.Current.Players().JSON()
		})
		if ctx.Err() != nil {
			return
		}
		p.log.Warn().Err(err).Msg("following the pairings bucket ended; starting again")
		sleepCtx(ctx, time.Second)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// serve answers the load requests on nc until ctx ends.
func (p *pairings) serve(ctx context.Context, nc *nats.Conn) error {
	sub, err := nc.Subscribe(pairing.LoadSubject(p.prefix), func(m *nats.Msg) {
		// nc has the daemon's rights: a load is applied and answered only when it
		// came from a requester waiting on its inbox.
		if why := bus.RequestRefusal(m); why != "" {
			n := p.refused.Add(1)
			if e := p.warn.Warn(&p.log, why); e != nil {
				e.Str("reply", logging.Clip(m.Reply)).Int64("refused", n).
					Msg("pairings load refused: " + why + "; neither applied nor answered (scoreboard pairings load requests on its inbox)")
			}
			return
		}
		rep := p.load(ctx, m.Data)
		data, _ := json.Marshal(rep)
		if err := m.Respond(data); err != nil {
			p.log.Warn().Err(err).Msg("reply to a pairings load")
		}
	})
	if err != nil {
		return err
	}
	context.AfterFunc(ctx, func() { _ = sub.Unsubscribe() })
	return nc.Flush()
}

// load checks and applies one request: all of the round or, on any error,
// nothing.
func (p *pairings) load(ctx context.Context, data []byte) pairing.Report {
	var req pairing.Load
	if err := json.Unmarshal(data, &req); err != nil {
		return pairing.Report{Error: "the request is no pairings load (" + err.Error() + "): use scoreboard pairings load"}
	}
	if err := pairing.Check(req.Round); err != nil {
		return pairing.Report{Error: req.File + ": " + err.Error()}
	}
	ports := *p.ports.Load()
	byPort := make(map[string]int, len(ports))
	names := make([]string, 0, len(ports))
	for _, pc := range ports {
		byPort[pc.Name] = pc.Table
		names = append(names, pc.Name)
	}
	tables, err := pairing.PortTables(byPort)
	if err != nil {
		return pairing.Report{Error: "the configuration: " + err.Error()}
	}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rep, err := pairing.Apply(actx, p.kv, req.Round, tables, names, time.Now().UTC())
	if err != nil {
		rep.Error = err.Error()
		p.log.Error().Err(err).Str("file", req.File).Int("round", req.Round.Round).Msg("pairings load failed")
		return rep
	}
	p.log.Info().Str("file", req.File).Str("tournament", req.Round.Tournament).Int("round", req.Round.Round).
		Int("games", len(req.Round.Games)).Int("ports", len(rep.Ports)).Ints("tables_without_port", rep.NoPort).Msg("pairings loaded")
	return rep
}

// startPairings opens the pairings bucket the history set up, serves its load
// endpoint on hnc (the history's connection: the daemon's rights), and has the
// ports stamp each unit with its game.
func (d *Daemon) startPairings(ctx context.Context, p *parts, hnc *nats.Conn) error {
	js, err := jetstream.New(hnc)
	if err != nil {
		return err
	}
	prefix := d.cfg.Settings.NATS.Prefix
	kv, err := pairing.Setup(ctx, js, prefix, d.cfg.Settings.History.Replicas)
	if err != nil {
		// As the history without room: the ports answer, without their players.
		d.log.Error().Err(err).Str("component", "pairings").
			Msg("pairings are OFF: their bucket cannot be made; every port still answers, without players; free some space on the state dir's disk and restart")
		return nil
	}
	p.pairings = newPairings(kv, prefix, p.ports.Ports, d.log)
	p.ports.Players = p.pairings.Players
	// The ports' first units are stamped too: the games are taken before the
	// ports start (a bucket that does not answer in time is followed on).
	fctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	d.onClose(stop)
	ready := make(chan struct{})
	go p.pairings.follow(fctx, ready)
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		d.log.Warn().Str("bucket", pairing.Bucket(prefix)).Msg("the pairings bucket did not answer within 5s: the ports start without their games, which come when it does")
	case <-ctx.Done():
		return ctx.Err()
	}
	// The endpoint lives as long as the daemon: Shutdown closes hnc.
	return p.pairings.serve(context.WithoutCancel(ctx), hnc)
}

// teeReloads hands each reloaded configuration to the ports, its ports' tables
// first to the pairings' load; nil stays nil.
func (p *parts) teeReloads(ctx context.Context, in <-chan daemon.Config) <-chan daemon.Config {
	if in == nil || p.pairings == nil {
		return in
	}
	out := make(chan daemon.Config)
	go func() {
		for {
			var c daemon.Config
			select {
			case <-ctx.Done():
				return
			case c = <-in:
			}
			p.pairings.setPorts(c.Ports)
			select {
			case out <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
