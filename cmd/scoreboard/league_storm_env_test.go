package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/league"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// storm is TestLeagueStorm's league: its hub, clubs and daemons, and their play.
type storm struct {
	t               *testing.T // the whole test's: what lives as long as the league
	bin, root, conf string
	hub             *hubProcess
	nc              *nats.Conn // a tool of the hub's
	js              jetstream.JetStream
	baseKiB         int // the peak RSS of a hub with no club

	clubs       []*stormClub
	daemons     []*leagueClub
	daemonLinks []*linkProxy

	ctx context.Context
	wg  sync.WaitGroup
	// gate is held to pause the play: while the clubs are counted.
	gate sync.RWMutex
	// followers are the page's viewers the clubs' results are marked sent to.
	followers atomic.Pointer[[]*pageDelays]
}

// stormClub is a benchClub that plays in its own goroutine.
type stormClub struct {
	*benchClub
	js    jetstream.JetStream
	mu    sync.Mutex // the benchClub's maps and its units: its play, the test's backlogs
	units int        // published
	quiet atomic.Bool
}

func (c *stormClub) play(n int, sent func(string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range n {
		if c.unit(fmt.Sprintf("p%d", k%stormPorts), sent) == nil {
			c.units++
		}
	}
}

func (c *stormClub) published() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.units
}

// addClubs starts the clubs, each playing; 8 at a time, as 200 embedded servers
// with JetStream take a while and memory.
func (s *storm) addClubs(t *testing.T, names []string) []*stormClub {
	t.Helper()
	leaf := fmt.Sprintf("127.0.0.1:%d", s.hub.leafPort)
	clubs := make([]*stormClub, len(names))
	for i, name := range names {
		clubs[i] = &stormClub{benchClub: &benchClub{name: name, proxy: newLinkProxy(s.t, leaf), origin: map[string]string{}, seq: map[string]uint64{}}}
	}
	nop := zerolog.Nop()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, c := range clubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			b := bustest.Start(s.t, bustest.Options{Off: true, StoreDir: filepath.Join(s.root, c.name), Log: &nop,
				Hub: &bus.HubLink{URL: "nats-leaf://" + c.proxy.addr, Club: c.name, Token: "token-" + c.name}})
			c.srv, c.nc = b.Server, b.Daemon()
			c.js, _ = jetstream.New(c.nc)
			if _, err := history.Setup(context.Background(), c.js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 1 << 30}); err != nil {
				t.Errorf("club %s: %v", c.name, err)
				c.js = nil
			}
		}()
	}
	wg.Wait()
	for _, c := range clubs {
		if c.js == nil {
			t.FailNow()
		}
		// The storm's t, not the subtest's: a club joined in one subtest plays on
		// in the next, and a capture ended with its subtest recorded nothing more.
		bustest.CaptureHistory(s.t, c.nc, bus.DefaultPrefix) // the club's ports
	}
	for i, c := range clubs {
		s.wg.Add(1)
		go s.playing(c, time.Duration(i)*500*time.Millisecond/time.Duration(len(clubs)))
	}
	s.clubs = append(s.clubs, clubs...)
	return clubs
}

// playing is a club's ports answering a unit each every 500 ms, the clubs' ticks
// spread by offset, until the test ends.
func (s *storm) playing(c *stormClub, offset time.Duration) {
	defer s.wg.Done()
	select {
	case <-s.ctx.Done():
		return
	case <-time.After(offset):
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		var sent func(string)
		if f := s.followers.Load(); f != nil && !c.quiet.Load() {
			sent = func(key string) {
				for _, p := range *f {
					p.sent(key)
				}
			}
		}
		s.gate.RLock()
		c.play(stormPorts, sent)
		s.gate.RUnlock()
	}
}

// allLinked says whether every bench club has its link up (as the club sees it:
// cheap, where the hub's /metrics is a request).
func (s *storm) allLinked() bool {
	for _, c := range s.clubs {
		if !c.srv.HubLinked() {
			return false
		}
	}
	return true
}

// links are every club's line to the hub, the daemons' too.
func (s *storm) links() []*linkProxy {
	l := slices.Clone(s.daemonLinks)
	for _, c := range s.clubs {
		l = append(l, c.proxy)
	}
	return l
}

// names are the clubs', the daemons' too, but skip.
func (s *storm) names(skip string) []string {
	var n []string
	for _, c := range s.clubs {
		if c.name != skip {
			n = append(n, c.name)
		}
	}
	for _, d := range s.daemons {
		n = append(n, d.name)
	}
	return n
}

// targets is, per club, the messages its stream at the hub must hold for every
// unit it has published (a daemon: answered): a unit is its dump and its result.
func (s *storm) targets() map[string]int {
	t := map[string]int{}
	for _, c := range s.clubs {
		t[c.name] = 2 * c.published()
	}
	for _, d := range s.daemons {
		t[d.name] = 2 * len(d.want)
	}
	return t
}

func (s *storm) answeredCounts() string {
	var l []string
	for _, d := range s.daemons {
		d.mu.Lock()
		l = append(l, fmt.Sprintf("%s %d of %d", d.name, len(d.answers), len(d.want)))
		d.mu.Unlock()
	}
	return strings.Join(l, ", ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// leagueCounts is the messages of each club's stream at the hub, by club: one
// request of the hub's stream list, which a wait can afford every 100 ms at 200
// clubs where a read of each stream could not.
func (s *storm) leagueCounts() (map[string]int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	byStream := map[string]int{}
	l := s.js.ListStreams(ctx)
	for info := range l.Info() {
		byStream[info.Config.Name] = int(info.State.Msgs)
	}
	if l.Err() != nil {
		return nil, l.Err()
	}
	counts := map[string]int{}
	for _, name := range s.names("") {
		counts[name] = byStream[league.ClubStream(name)]
	}
	return counts, nil
}

// waitIn waits, within, until each club of targets has its target of messages in
// its stream at the hub, calling each, if set, with the counts at every look; it
// fails saying how many clubs are complete and how many units are missing.
func (s *storm) waitIn(t *testing.T, what string, within time.Duration, targets map[string]int, each func(map[string]int)) {
	t.Helper()
	bustest.WaitWithin(t, within, what, every(100*time.Millisecond, func() (bool, string) {
		counts, err := s.leagueCounts()
		if err != nil {
			return false, fmt.Sprintf("the hub's streams: %v", err)
		}
		if each != nil {
			each(counts)
		}
		complete, missing, worst := 0, 0, ""
		most := 0
		for club, want := range targets {
			m := max(0, want-counts[club])
			if m == 0 {
				complete++
			}
			if m > most {
				most, worst = m, fmt.Sprintf("%s with %d of %d units", club, counts[club]/2, want/2)
			}
			missing += m
		}
		return complete == len(targets), fmt.Sprintf("%d of %d clubs complete, %d units missing (the furthest behind: %s)", complete, len(targets), missing/2, worst)
	}))
}

// finishing is when each club of a wait's targets was complete: how a catch-up
// spreads over the clubs.
type finishing struct {
	targets map[string]int
	at      map[string]time.Time
}

func (f *finishing) look(counts map[string]int) {
	now := time.Now()
	for club, want := range f.targets {
		if _, ok := f.at[club]; !ok && counts[club] >= want {
			f.at[club] = now
		}
	}
}

func (f *finishing) spread(from time.Time) string {
	var d []time.Duration
	for _, at := range f.at {
		d = append(d, at.Sub(from))
	}
	slices.Sort(d)
	if len(d) == 0 {
		return "no club complete"
	}
	return fmt.Sprintf("the clubs complete from %v, half by %v, the last %v", d[0].Round(time.Millisecond), d[len(d)/2].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
}

// every makes cond look every period only, for a wait that polls each 10 ms.
func every(period time.Duration, cond func() (bool, string)) func() (bool, string) {
	var at time.Time
	var ok bool
	var counts string
	return func() (bool, string) {
		if time.Since(at) >= period {
			at = time.Now()
			ok, counts = cond()
		}
		return ok, counts
	}
}

func (s *storm) waitPage(t *testing.T, page string) {
	t.Helper()
	bustest.Wait(t, "the hub's page", func() (bool, string) {
		r, err := http.Get(page + "/metrics")
		if err == nil {
			r.Body.Close()
		}
		return err == nil, fmt.Sprintf("GET /metrics: %v", err)
	})
}

// linkedAtHub is the hub's scoreboard_league_clubs_linked.
func (s *storm) linkedAtHub() (int, error) {
	r, err := http.Get(s.hub.page + "/metrics")
	if err != nil {
		return -1, err
	}
	defer r.Body.Close()
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "scoreboard_league_clubs_linked "); ok {
			n, err := strconv.ParseFloat(v, 64)
			return int(n), err
		}
	}
	return -1, fmt.Errorf("no scoreboard_league_clubs_linked in /metrics (%v)", sc.Err())
}

// settle pauses the play, waits until each club's stream at the hub holds every
// unit the club has, and counts per club what it lost, holds twice and holds out of
// the club's order: a bench club's against its own stream, read as the hub read it;
// a daemon's against what its port answered (tally). The play goes on after.
func (s *storm) settle(t *testing.T, what string) {
	t.Helper()
	s.gate.Lock()
	defer s.gate.Unlock()
	paused := time.Now()
	for _, d := range s.daemons {
		d.answered(2 * time.Minute)
	}
	targets := s.targets()
	bustest.Wait(t, what+": each club's own stream holds what it published", every(100*time.Millisecond, func() (bool, string) {
		short := 0
		for _, c := range s.clubs {
			if n, err := ownCount(c.js); err != nil || n < targets[c.name] {
				short++
			}
		}
		return short == 0, fmt.Sprintf("%d clubs' own streams short of what they published", short)
	}))
	s.waitIn(t, what+": every club's units in LEAGUE", bustest.Long, targets, nil)

	type count struct{ lost, twice, disorder, foreign int }
	var mu sync.Mutex
	bad := map[string]string{}
	units := 0
	check := func(club string, dumps, results []string, d, r count) {
		mu.Lock()
		defer mu.Unlock()
		units += len(dumps)
		if d != (count{}) || r != (count{}) {
			bad[club] = fmt.Sprintf("%s: units lost %d, twice %d, out of order %d, not the club's %d; results lost %d, twice %d, out of order %d, not the club's %d (%d+%d in LEAGUE)",
				club, d.lost, d.twice, d.disorder, d.foreign, r.lost, r.twice, r.disorder, r.foreign, len(dumps), len(results))
		}
	}
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, c := range s.clubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			dumps, results := s.leagueRead(t, c.name, targets[c.name])
			own, ownResults, err := ownUnits(c.js, targets[c.name])
			if err != nil {
				t.Errorf("%s: the club's own stream: %v", c.name, err)
				return
			}
			var d, r count
			d.lost, d.twice, d.disorder, d.foreign = compare(own, dumps)
			r.lost, r.twice, r.disorder, r.foreign = compare(ownResults, results)
			check(c.name, dumps, results, d, r)
		}()
	}
	wg.Wait()
	for _, dm := range s.daemons {
		dumps, results := s.leagueRead(t, dm.name, targets[dm.name])
		var d, r count
		d.lost, d.twice, d.disorder = tally(dumps, []int{len(dm.want)}, true)
		r.lost, r.twice, _ = tally(results, []int{len(dm.want)}, false)
		check(dm.name, dumps, results, d, r)
	}
	if len(bad) > 0 {
		var l []string
		for _, v := range bad {
			l = append(l, v)
		}
		slices.Sort(l)
		t.Errorf("%s: %d of %d clubs' streams at the hub are not their clubs': %s", what, len(bad), len(targets), strings.Join(l, "; "))
		return
	}
	t.Logf("%s: %d clubs, %d units in LEAGUE: lost 0, twice 0, out of order 0 in every club (the play paused %v to count)",
		what, len(targets), units, time.Since(paused).Round(time.Millisecond))
}
