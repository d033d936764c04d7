package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/result"
)

// stormPorts is a club's ports, each answering a unit every 500 ms, as in
// TestLeagueScaleBench.
const stormPorts = 4

// TestLeagueStorm is issue 34's storms on one hub, run only with
// LEAGUE_STORM_CLUBS set (CI: 20; the issue: 200):
//
//	LEAGUE_STORM_CLUBS=200 LEAGUE_STORM_OUTAGE=5m LEAGUE_STORM_FLAP=10m \
//	  go test -count=1 -v -timeout 60m -run TestLeagueStorm ./cmd/scoreboard
//
// A hub as a real process (page on), LEAGUE_STORM_CLUBS clubs as in
// TestLeagueScaleBench (embedded servers with their history stream, each linked
// through a proxy, 4 ports x 2 units/s) and two clubs as real `scoreboard run`
// daemons, on whose ports the test shows that a club answers whatever the hub does.
// In the hub's life, one after the other:
//   - kill9: the hub killed with SIGKILL while the clubs play; every club publishes
//     a minute's units (480) while it is down; restarted on its state dir, every
//     club's units are in LEAGUE_<CLUB> within 60 s, the hub's peak memory within
//     5 MiB a club over a hub without clubs (the 2 MB is missed: below);
//   - outage: every link cut at once for LEAGUE_STORM_OUTAGE (20s), the clubs
//     playing on; the catch-up rate when they are back;
//   - join: LEAGUE_STORM_JOIN clubs (min(50, clubs)), playing and refused, let in by
//     one SIGHUP;
//   - flap: one club's link down 3 s and up 3 s for LEAGUE_STORM_FLAP (30s); every
//     other club's events go on coming on the hub's page.
//
// After each, the play paused, every club's stream at the hub is counted against
// the club's own (the daemons': against what their port answered): lost 0, twice 0,
// out of order 0. The waits are bounded and fail with their counts; the times,
// rates and memory are reported, the memory's bound asserted.
func TestLeagueStorm(t *testing.T) {
	nClubs, err := strconv.Atoi(os.Getenv("LEAGUE_STORM_CLUBS"))
	if err != nil || nClubs < 1 {
		t.Skip("the league's storms: LEAGUE_STORM_CLUBS=20 (the issue's: 200)")
	}
	dur := func(k string, def time.Duration) time.Duration {
		v := os.Getenv(k)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("$%s=%q: %v", k, v, err)
		}
		return d
	}
	outage, flap := dur("LEAGUE_STORM_OUTAGE", 20*time.Second), dur("LEAGUE_STORM_FLAP", 30*time.Second)
	nJoin := min(50, nClubs)
	if v := os.Getenv("LEAGUE_STORM_JOIN"); v != "" {
		if nJoin, err = strconv.Atoi(v); err != nil || nJoin < 1 {
			t.Fatalf("$LEAGUE_STORM_JOIN=%q: want a number of clubs", v)
		}
	}
	began := time.Now()
	s := &storm{t: t, bin: proctest.Scoreboard(t), root: t.TempDir()}

	// What a hub holds with no club at all, measured here, in this run, on this
	// machine: the bound of kill9 is this and 5 MiB a club.
	bare := startHubProcess(t, s.bin, t.TempDir())
	s.waitPage(t, bare.page)
	for range 10 {
		_, _, hwm := procStat(t, bare.PID())
		s.baseKiB = max(s.baseKiB, hwm)
		time.Sleep(100 * time.Millisecond)
	}
	bare.Stop()
	t.Logf("a hub with no club: peak RSS %d MiB", s.baseKiB/1024)

	names := make([]string, nClubs)
	for i := range names {
		names[i] = fmt.Sprintf("c%03d", i)
	}
	daemons := []string{"runa", "runb"}
	s.hub = startHubProcess(t, s.bin, s.root, append(slices.Clone(names), daemons...)...)
	s.conf = filepath.Join(s.root, "hub.toml") // startHubProcess's
	s.waitPage(t, s.hub.page)
	s.nc, err = nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", s.hub.hubPort), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.nc.Close()
	s.js, _ = jetstream.New(s.nc)
	var cancel context.CancelFunc
	s.ctx, cancel = context.WithCancel(context.Background())
	defer func() {
		cancel()
		s.wg.Wait()
	}()
	t0 := time.Now()
	s.addClubs(t, names)
	for i, name := range daemons {
		p := newLinkProxy(t, fmt.Sprintf("127.0.0.1:%d", s.hub.leafPort))
		s.daemonLinks = append(s.daemonLinks, p)
		s.daemons = append(s.daemons, startLeagueClub(t, s.bin, name, "nats-leaf://"+p.addr, filepath.Join(s.root, name), i*100000))
	}
	bustest.Wait(t, "every club linked", func() (bool, string) {
		n, err := s.linkedAtHub()
		return n == nClubs+len(daemons), fmt.Sprintf("%d of %d clubs linked at the hub (%v)", n, nClubs+len(daemons), err)
	})
	t.Logf("%d clubs and %d daemons started and linked in %v", nClubs, len(daemons), time.Since(t0).Round(time.Millisecond))
	for _, d := range s.daemons {
		d.feed(10)
	}
	// A second of play, so that every club's source is seen flowing before the storms.
	bustest.Wait(t, "every club playing", func() (bool, string) {
		n := 0
		for _, c := range s.clubs {
			if c.published() >= 2*stormPorts {
				n++
			}
		}
		return n == len(s.clubs), fmt.Sprintf("%d of %d clubs played a second", n, len(s.clubs))
	})
	s.settle(t, "linked")

	t.Run("kill9", func(t *testing.T) {
		held, err := s.leagueCounts()
		if err != nil {
			t.Fatal(err)
		}
		s.hub.Kill()
		// A minute of each club's units while the hub is down, at once.
		backlog := stormPorts * 2 * 60
		for _, c := range s.clubs {
			c.play(backlog, nil)
		}
		for _, d := range s.daemons {
			d.feed(backlog)
		}
		for _, d := range s.daemons {
			d.answered(2 * time.Minute)
		}
		t.Logf("hub down: every club published %d units, the daemons' ports answered them (%s)", backlog, s.answeredCounts())
		targets := s.targets()
		restart := time.Now()
		s.hub.Process = proctest.Start(s.t, s.bin, "hub", "--config", s.conf, "--log-format", "json")
		s.hub.WaitOutput("league hub running", 2*time.Minute)
		running := time.Since(restart)
		var rssMax int
		fin := finishing{targets: targets, at: map[string]time.Time{}}
		s.waitIn(t, "after the hub's restart, every club's units in LEAGUE", 60*time.Second-running, targets, func(counts map[string]int) {
			fin.look(counts)
			_, rss, _ := procStat(t, s.hub.PID())
			rssMax = max(rssMax, rss)
		})
		allIn := time.Since(restart)
		cpu, rss, hwm := procStat(t, s.hub.PID())
		clubs := len(targets)
		t.Logf("kill -9 of the hub, %d clubs, %d units behind: restart -> running %v, -> every club's units in LEAGUE %v (%s); hub CPU %v since its start",
			clubs, (sum(targets)-sum(held))/2, running.Round(time.Millisecond), allIn.Round(time.Millisecond), fin.spread(restart), cpu)
		t.Logf("hub memory in the catch-up: RSS %d MiB at the end, %d MiB the most seen, peak (VmHWM) %d MiB: %.2f MiB a club, %.2f MiB a club over the %d MiB of a hub with no club",
			rss/1024, rssMax/1024, hwm/1024, float64(hwm)/1024/float64(clubs), float64(hwm-s.baseKiB)/1024/float64(clubs), s.baseKiB/1024)
		// What a hub holds with no club (the Go runtime, the nats-server and its
		// JetStream, the page) is no club's: measured above, in this run, it is the
		// base. The issue asks about 2 MB a club on it; a club costs more, and it is
		// nats-server's: its file store keeps the block a stream is writing in memory,
		// in a buffer of 256 KB, 1, 4, then 8 MB as the block fills (BENCHMARKS.md,
		// "A league: 200 clubs": 1,600 of 1,768 MB of heap at 200 clubs after 10
		// minutes). Here each club's stream holds 1 to 2 MB, in a 4 MB buffer: the
		// hub's peak was 3.3 and 3.6 MiB a club over the base at 22 clubs (heap and
		// the garbage collector's room), with one stream a club. Since each club has
		// an account and an intake stream at the hub (league review F7), two streams
		// a club are written: 5.50 MiB a club over the base in CI's run. The bound,
		// 7 MiB, fails a regression of a MiB and more a club (S2's buffers on the
		// links were 2).
		if bound := s.baseKiB + 7*1024*clubs; hwm > bound {
			t.Errorf("the hub's peak memory in the catch-up is %d MiB, over the bound of %d MiB (%d MiB of a hub with no club + 7 MiB x %d clubs): %.2f MiB a club over the base",
				hwm/1024, bound/1024, s.baseKiB/1024, clubs, float64(hwm-s.baseKiB)/1024/float64(clubs))
		}
		s.settle(t, "kill9")
	})

	t.Run("outage", func(t *testing.T) {
		links := s.links()
		for _, p := range links {
			p.down()
		}
		cut := time.Now()
		bustest.Wait(t, "every link down", func() (bool, string) {
			n, err := s.linkedAtHub()
			return err == nil && n == 0, fmt.Sprintf("%d clubs linked at the hub (%v)", n, err)
		})
		fed := len(s.daemons[0].want)
		tick := time.NewTicker(time.Second)
		for time.Since(cut) < outage {
			for _, d := range s.daemons {
				d.feed(2)
			}
			<-tick.C
		}
		tick.Stop()
		for _, d := range s.daemons {
			d.answered(time.Minute)
		}
		if n, _ := s.linkedAtHub(); n != 0 {
			t.Fatalf("%d clubs linked at the hub in the outage", n)
		}
		t.Logf("outage of %v: the daemons' ports answered %d units each with their links down (%s)",
			time.Since(cut).Round(time.Second), len(s.daemons[0].want)-fed, s.answeredCounts())
		targets := s.targets()
		counts, err := s.leagueCounts()
		if err != nil {
			t.Fatal(err)
		}
		before := sum(counts)
		behind := (sum(targets) - before) / 2
		back := time.Now()
		for _, p := range links {
			p.up()
		}
		var first, relinked time.Time
		fin := finishing{targets: targets, at: map[string]time.Time{}}
		s.waitIn(t, "the links back, every club's units in LEAGUE", bustest.Long, targets, func(counts map[string]int) {
			fin.look(counts)
			if first.IsZero() && sum(counts) > before {
				first = time.Now()
			}
			if relinked.IsZero() && s.allLinked() {
				relinked = time.Now()
			}
		})
		done := time.Now()
		_, rss, hwm := procStat(t, s.hub.PID())
		if relinked.IsZero() {
			relinked = done
		}
		t.Logf("outage of %d links for %v: %d units behind; links back -> first sourced %v, then all in %v: %.0f units/s (goal >= 5,000); links back -> every bench club linked %v, -> all in %v (%s); hub RSS %d MiB (peak %d MiB)",
			len(links), outage, behind, first.Sub(back).Round(time.Millisecond), done.Sub(first).Round(time.Millisecond),
			float64(behind)/done.Sub(first).Seconds(), relinked.Sub(back).Round(time.Millisecond), done.Sub(back).Round(time.Millisecond), fin.spread(back), rss/1024, hwm/1024)
		s.settle(t, "outage")
	})

	t.Run("join", func(t *testing.T) {
		joined := make([]string, nJoin)
		for i := range joined {
			joined[i] = fmt.Sprintf("j%03d", i)
		}
		t0 := time.Now()
		clubs := s.addClubs(t, joined)
		t.Logf("%d clubs started in %v, playing", len(clubs), time.Since(t0).Round(time.Millisecond))
		// Refused: each tried the hub twice and is not linked.
		bustest.Wait(t, "every new club tried the hub", func() (bool, string) {
			tried, linked := 0, 0
			for _, c := range clubs {
				if c.proxy.accepted.Load() >= 2 {
					tried++
				}
				if c.srv.HubLinked() {
					linked++
				}
			}
			if linked > 0 {
				t.Fatalf("%d of %d clubs not in the hub's file are linked", linked, len(clubs))
			}
			return tried == len(clubs), fmt.Sprintf("%d of %d new clubs tried twice", tried, len(clubs))
		})
		conf, err := os.ReadFile(s.conf)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range joined {
			conf = fmt.Appendf(conf, "[[club]]\nname = %q\ntoken = \"token-%s\"\n", name, name)
		}
		if err := os.WriteFile(s.conf, conf, 0o600); err != nil {
			t.Fatal(err)
		}
		targets := map[string]int{}
		for _, c := range clubs {
			targets[c.name] = 2 * c.published()
		}
		hup := time.Now()
		if err := s.hub.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		s.hub.WaitOutput("SIGHUP: clubs reloaded", time.Minute)
		reloaded := time.Since(hup)
		bustest.Wait(t, "every new club linked", func() (bool, string) {
			linked := 0
			for _, c := range clubs {
				if c.srv.HubLinked() {
					linked++
				}
			}
			return linked == len(clubs), fmt.Sprintf("%d of %d new clubs linked", linked, len(clubs))
		})
		linked := time.Since(hup)
		fin := finishing{targets: targets, at: map[string]time.Time{}}
		s.waitIn(t, "every new club's units in LEAGUE", bustest.Long, targets, fin.look)
		_, rss, hwm := procStat(t, s.hub.PID())
		t.Logf("%d clubs joined by SIGHUP (%d units behind): SIGHUP -> reloaded %v, -> all linked %v, -> all their units in LEAGUE %v (%s); hub RSS %d MiB (peak %d MiB) with %d clubs",
			len(clubs), sum(targets)/2, reloaded.Round(time.Millisecond), linked.Round(time.Millisecond), time.Since(hup).Round(time.Millisecond), fin.spread(hup), rss/1024, hwm/1024, len(s.clubs)+len(s.daemons))
		s.settle(t, "join")
	})

	t.Run("flap", func(t *testing.T) {
		flapper := s.clubs[0]
		flapper.quiet.Store(true)
		window := min(10*time.Second, flap)
		counts := &pageCounts{window: window, n: map[string][]int{}}
		before, during := followPage(t, s.hub.page, nil), followPage(t, s.hub.page, counts.event)
		s.followers.Store(&[]*pageDelays{before, during})
		bustest.Wait(t, "the page's events", func() (bool, string) {
			n := before.lastSeq(s.clubs[len(s.clubs)-1].name+".p0") * during.lastSeq(s.clubs[len(s.clubs)-1].name+".p0")
			return n > 0, "no event yet of " + s.clubs[len(s.clubs)-1].name + ".p0 on one of the two viewers"
		})
		before.measure(true)
		time.Sleep(window) // the clubs play: the delays of a window before the flap
		before.measure(false)

		counts.begin()
		during.measure(true)
		start, cuts, down := time.Now(), 0, false
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for k := 1; time.Since(start) < flap; k++ {
			<-tick.C
			if k%3 == 0 {
				if down {
					flapper.proxy.up()
				} else {
					flapper.proxy.down()
					cuts++
				}
				down = !down
			}
			for _, d := range s.daemons {
				d.feed(1)
			}
		}
		during.measure(false)
		if down {
			flapper.proxy.up()
		}
		windows := int(flap / window)
		others := s.names(flapper.name)
		var report []string
		silent := 0
		for w := range windows {
			least, who, none := -1, "", 0
			for _, club := range others {
				n := counts.at(club, w)
				if n == 0 {
					none++
				}
				if least < 0 || n < least {
					least, who = n, club
				}
			}
			silent += none
			report = append(report, fmt.Sprintf("window %d: the fewest %d (%s), %d clubs with none; the flapping club %d", w+1, least, who, none, counts.at(flapper.name, w)))
		}
		t.Logf("flap of %s for %v (%d cuts, %d connections taken): events on the page of the %d other clubs, windows of %v: %s",
			flapper.name, flap, cuts, flapper.proxy.accepted.Load(), len(others), window, strings.Join(report, "; "))
		if silent > 0 {
			t.Errorf("while %s's link flapped, %d (club, window) pairs of the other clubs had no event on the page: %s", flapper.name, silent, strings.Join(report, "; "))
		}
		for _, f := range []struct {
			what string
			p    *pageDelays
		}{{"before the flap", before}, {"during the flap", during}} {
			d, _ := f.p.take()
			t.Logf("the other clubs' result -> hub page event %s: p50 %v, p99 %v, max %v (%d events)",
				f.what, percentile(d, 0.5).Round(time.Millisecond), percentile(d, 0.99).Round(time.Millisecond), percentile(d, 1).Round(time.Millisecond), len(d))
		}
		s.followers.Store(nil)
		s.settle(t, "flap")
	})
	t.Logf("the storms at %d clubs (+%d daemons, +%d joined) took %v", nClubs, len(daemons), nJoin, time.Since(began).Round(time.Second))
}

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
