package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/result"
	"github.com/nats-io/nats.go/jetstream"
)

// leagueRead reads a club's stream at the hub, which holds want messages: again
// while a read comes short.
func (s *storm) leagueRead(t *testing.T, club string, want int) (dumps, results []string) {
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		d, r := map[string][]string{}, map[string][]string{}
		ok := clubUnits(t, ctx, s.js, league.ClubStream(club), d, r)
		cancel()
		dumps, results = d[club], r[club]
		if ok && len(dumps)+len(results) >= want {
			break
		}
	}
	return dumps, results
}

func ownStream(js jetstream.JetStream) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return js.Stream(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Stream())
}

// ownCount is the messages of a club's own stream.
func ownCount(js jetstream.JetStream) (int, error) {
	s, err := ownStream(js)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return int(info.State.Msgs), nil
}

// ownUnits reads a club's own stream, which holds want messages, as clubUnits
// reads its stream at the hub: its units' "origin seq", from their dumps and their
// results, in the stream's order.
func ownUnits(js jetstream.JetStream, want int) (dumps, results []string, err error) {
	for range 5 {
		dumps, results = nil, nil
		if err = func() error {
			s, err := ownStream(js)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{MaxResetAttempts: 3})
			if err != nil {
				return err
			}
			for {
				batch, err := c.FetchNoWait(1000)
				if err != nil {
					return err
				}
				n := 0
				for m := range batch.Messages() {
					n++
					if strings.HasPrefix(m.Subject(), bus.DefaultPrefix+".dump.") {
						h := m.Headers()
						dumps = append(dumps, h.Get(bus.HeaderOrigin)+" "+h.Get(bus.HeaderSeq))
						continue
					}
					var r result.Record
					if err := json.Unmarshal(m.Data(), &r); err != nil {
						return fmt.Errorf("%s: %w", m.Subject(), err)
					}
					results = append(results, r.Origin+" "+strconv.FormatUint(r.Seq, 10))
				}
				if n == 0 {
					return nil
				}
			}
		}(); err == nil && len(dumps)+len(results) >= want {
			return dumps, results, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("read %d+%d of its %d messages", len(dumps), len(results), want)
	}
	return dumps, results, err
}

// compare counts what got (a club's units at the hub, in its stream's order) lost
// of own (the club's own stream's, in its order), holds twice, holds out of own's
// order, and holds that own has not.
func compare(own, got []string) (lost, twice, disorder, foreign int) {
	at := make(map[string]int, len(own))
	for i, u := range own {
		at[u] = i
	}
	seen := make(map[string]bool, len(got))
	last := -1
	for _, u := range got {
		if seen[u] {
			twice++
			continue
		}
		seen[u] = true
		i, ok := at[u]
		if !ok {
			foreign++
			continue
		}
		if i < last {
			disorder++
		}
		last = max(last, i)
	}
	for _, u := range own {
		if !seen[u] {
			lost++
		}
	}
	return lost, twice, disorder, foreign
}

// pageCounts counts the page's events per club in windows from begin.
type pageCounts struct {
	mu     sync.Mutex
	start  time.Time
	window time.Duration
	n      map[string][]int
}

func (p *pageCounts) begin() {
	p.mu.Lock()
	p.start = time.Now()
	p.mu.Unlock()
}

// event is a followPage check: it counts, and refuses nothing.
func (p *pageCounts) event(ev pageEvent) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		return ""
	}
	w := int(time.Since(p.start) / p.window)
	club, _, _ := strings.Cut(ev.Port, ".")
	for len(p.n[club]) <= w {
		p.n[club] = append(p.n[club], 0)
	}
	p.n[club][w]++
	return ""
}

func (p *pageCounts) at(club string, w int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w < len(p.n[club]) {
		return p.n[club][w]
	}
	return 0
}
