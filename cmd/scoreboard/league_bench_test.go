package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
)

// TestLeagueScaleBench is the league's benchmark (BENCHMARKS.md), run only with
// LEAGUE_BENCH=1: a hub as real processes and LEAGUE_BENCH_CLUBS clubs (20), each an
// embedded server with its own JetStream domain and history stream, fed by this
// test as a daemon's ports and workers feed it (the stand-in issue 34 allows), 4
// ports a club, each answering 2 units a second (a unit each LEAGUE_BENCH_INTERVAL,
// 500ms) for LEAGUE_BENCH_DURATION (5m),
// while LEAGUE_BENCH_VIEWERS (100) viewers hold the hub page's event stream open
// (benchViewer: each opens it again when the page drops it as too slow, as a
// browser does; the first decodes the boards into a pageDelays, followPage's,
// which does not reconnect).
// It reports the delay from a club's result (when the club published it) to the hub
// page's event (p50, p99, max); the hub's CPU a unit and share of a core, its RSS
// and peak, its disk writes a unit; the bytes a unit on the links; the events each
// viewer got; then the catch-up rate of one club after a cut whose backlog is
// LEAGUE_BENCH_BACKLOG units (4800: 10 minutes of 4 ports at 2 units/s; 0: none),
// published at once while its line is cut; and last one line,
// LEAGUE_BENCH_RESULT key=value ..., for a script that collects a curve.
//
// LEAGUE_BENCH_CLUSTER=1 makes the hub three nats-server processes
// (configs/league-hub-cluster.conf) and `scoreboard hub --nats-url` with
// league.replicas = 3; club i joins node i%3. Its CPU, memory and writes are the
// four processes' together. LEAGUE_BENCH_EXTERNAL=1 makes it one nats-server
// (configs/league-hub.conf) and `scoreboard hub --nats-url`: the server's CPU (the
// sourcing and the stores) apart from the keeper's and the page's.
// LEAGUE_BENCH_HUB_CPUPROFILE=FILE: the hub process writes its CPU profile there
// (SCOREBOARD_CPUPROFILE), from its start to its SIGTERM at the end, after the
// catch-up (LEAGUE_BENCH_BACKLOG=0: right after the measured time).
// LEAGUE_BENCH_START_PARALLEL (8): how many clubs start at a time.
// LEAGUE_BENCH_PAIRINGS=1: every board named, loaded at the hub first (league_bench_pairings_test.go).
// LEAGUE_BENCH_FILL=1: every club's stream at the hub brought to its share first, so
// that it is pruned in the measured time (league_bench_fill_test.go).
func TestLeagueScaleBench(t *testing.T) {
	if os.Getenv("LEAGUE_BENCH") == "" {
		t.Skip("the league benchmark: LEAGUE_BENCH=1 (BENCHMARKS.md)")
	}
	env := func(k string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return v
		}
		return def
	}
	nClubs, backlog := env("LEAGUE_BENCH_CLUBS", 20), env("LEAGUE_BENCH_BACKLOG", 4800)
	nViewers, parallel := env("LEAGUE_BENCH_VIEWERS", 100), env("LEAGUE_BENCH_START_PARALLEL", 8)
	nodes := 0
	switch {
	case env("LEAGUE_BENCH_CLUSTER", 0) != 0:
		nodes = 3
	case env("LEAGUE_BENCH_EXTERNAL", 0) != 0:
		nodes = 1
	}
	dur, err := time.ParseDuration(os.Getenv("LEAGUE_BENCH_DURATION"))
	if err != nil {
		dur = 5 * time.Minute
	}
	// LEAGUE_BENCH_INTERVAL: a unit a port every this long (500ms); 30s is a club's
	// realistic rate (issue 44: 800 boards, a unit a board every 30 s).
	interval, err := time.ParseDuration(os.Getenv("LEAGUE_BENCH_INTERVAL"))
	if err != nil || interval <= 0 {
		interval = 500 * time.Millisecond
	}
	profile := os.Getenv("LEAGUE_BENCH_HUB_CPUPROFILE")
	if profile != "" {
		if profile, err = filepath.Abs(profile); err != nil {
			t.Fatal(err)
		}
		os.Remove(profile) // so that a profile there at the end is this run's
	}
	const ports = 4
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	names := make([]string, nClubs)
	for i := range names {
		names[i] = fmt.Sprintf("c%02d", i)
	}
	t0 := time.Now()
	named, tables := env("LEAGUE_BENCH_PAIRINGS", 0) != 0, ""
	if named {
		tables = benchHubTables(names, ports)
	}
	h := startBenchHub(t, bin, root, names, nodes, profile, tables)
	t.Logf("hub (%s) up in %v", h.mode, time.Since(t0).Round(time.Millisecond))
	if named {
		loadBenchPairings(t, bin, root, h, nClubs, ports)
	}

	// The viewers first: they hold the page open from before the clubs' first
	// boards to the end. The first measures.
	events := &pageDelays{sentAt: map[string]time.Time{}, last: map[string]uint64{}}
	viewers := startBenchViewers(t, h.page, max(nViewers, 1), events)
	sent := events.sent

	_, rss0, _ := procStat(t, os.Getpid())
	t0 = time.Now()
	clubs := startBenchClubs(t, root, names, h.leaf, parallel)
	_, rss1, _ := procStat(t, os.Getpid())
	t.Logf("clubs: %d started in %v, %d at a time; this process's RSS %d MiB, %d KiB more a club (each club's embedded server, its proxy and publisher)",
		nClubs, time.Since(t0).Round(time.Millisecond), parallel, rss1/1024, (rss1-rss0)/max(nClubs, 1))
	fill := newBenchFill(t, h, clubs) // LEAGUE_BENCH_FILL: the streams at their shares first
	fill.fill(t, parallel)

	// The clubs play: every port a unit each interval, the clubs' ticks spread.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	locks := make([]sync.Mutex, nClubs) // a club's connection and counts are also its backlog's
	var units atomic.Int64
	for i, c := range clubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(i) * interval / time.Duration(nClubs)):
			}
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				locks[i].Lock()
				for p := range ports {
					c.unit(fmt.Sprintf("p%d", p), sent)
				}
				locks[i].Unlock()
				units.Add(ports)
			}
		}()
	}
	linked := func() int {
		n := 0
		for _, c := range clubs {
			if c.srv.HubLinked() {
				n++
			}
		}
		return n
	}
	// Measured once every club's sources run and what the clubs published before
	// is on the page.
	t0 = time.Now()
	bustest.WaitWithin(t, 10*time.Minute, "every club's boards on the page", func() (bool, string) {
		on := 0
		for _, c := range clubs {
			for p := range ports {
				if events.lastSeq(fmt.Sprintf("%s.p%d", c.name, p)) > 0 {
					on++
				}
			}
		}
		return on == nClubs*ports, fmt.Sprintf("%d of %d boards on the page; %d of %d clubs linked", on, nClubs*ports, linked(), nClubs)
	})
	firstBoards := time.Since(t0)
	target := map[string]uint64{}
	for i, c := range clubs {
		locks[i].Lock()
		for p, s := range c.seq {
			target[c.name+"."+p] = s
		}
		locks[i].Unlock()
	}
	bustest.WaitWithin(t, 10*time.Minute, "the page up to date", func() (bool, string) {
		behind := 0
		for k, s := range target {
			if events.lastSeq(k) < s {
				behind++
			}
		}
		return behind == 0, fmt.Sprintf("%d of %d boards behind what their clubs had published", behind, len(target))
	})
	t.Logf("warm-up: every club's boards on the page %v after the clubs started, the page up to date %v after", firstBoards.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))

	fill.topUp(t, ports*int64(dur/interval)*1390) // a unit takes ~1,390 bytes of the hub's store
	fill.start(t)
	events.measure(true)
	window := time.Now()
	s0 := h.sample(t, &units, clubs, viewers)
	time.Sleep(dur)
	s1 := h.sample(t, &units, clubs, viewers)
	events.measure(false)
	fillEnd := fill.end(t)
	elapsed := s1.at.Sub(s0.at)
	var rss, hwm int
	var cpu time.Duration
	var each []string
	for i, p := range h.procs {
		_, r, w := procStat(t, p.pid)
		rss, hwm, cpu = rss+r, hwm+w, cpu+s1.cpu[i]-s0.cpu[i]
		each = append(each, fmt.Sprintf("%s %.1f%% of a core, RSS %d MiB (peak %d MiB)", p.name, 100*(s1.cpu[i]-s0.cpu[i]).Seconds()/elapsed.Seconds(), r/1024, w/1024))
	}
	d, pending := events.take()
	pct := func(p float64) time.Duration { return percentile(d, p) }
	n := s1.units - s0.units
	perUnit := func(v int64) float64 { return float64(v) / float64(max(n, 1)) }
	cpuPct := 100 * cpu.Seconds() / elapsed.Seconds()
	genPct := 100 * (s1.genCPU - s0.genCPU).Seconds() / elapsed.Seconds()
	t.Logf("league: %d clubs x %d ports, a unit a port every %v, for %v: %d units (%.1f units/s)", nClubs, ports, interval, elapsed.Round(time.Second), n, float64(n)/elapsed.Seconds())
	t.Logf("hub (%s): CPU %.1f%% of a core (%v in %v), %.0f µs a unit; RSS %d MiB (peak %d MiB)",
		h.mode, cpuPct, cpu.Round(10*time.Millisecond), elapsed.Round(time.Second), float64(cpu.Microseconds())/float64(max(n, 1)), rss/1024, hwm/1024)
	if len(h.procs) > 1 {
		t.Logf("hub's processes: %s", strings.Join(each, "; "))
	}
	t.Logf("club's result published -> hub page's event: p50 %v, p99 %v, max %v (%d events; %d results not seen on the page, the page showing a port's latest only)",
		pct(0.50).Round(100*time.Microsecond), pct(0.99).Round(100*time.Microsecond), pct(1).Round(100*time.Microsecond), len(d), pending)
	if slow := events.slowReport(window); len(slow) > 0 {
		t.Logf("results slower than %v or not seen, by club (%d clubs):\n\t%s", slowAfter, len(slow), strings.Join(slow, "\n\t"))
	}
	t.Logf("links: %d bytes for %d units: %.0f bytes a unit (the unit and its result, ~%d + ~%d bytes of data)", s1.linkBytes-s0.linkBytes, n, perUnit(s1.linkBytes-s0.linkBytes), 19*19*2+20, 200)
	t.Logf("hub's disk: %.0f bytes written a unit (write_bytes), %.2f write calls a unit (syscw, sockets' too); its stores grew %.0f bytes a unit",
		perUnit(s1.writeBytes-s0.writeBytes), perUnit(s1.syscw-s0.syscw), perUnit(s1.store-s0.store))
	vMin, vMax, vBytes, vEvents, vDrops, vNamed := int64(-1), int64(-1), int64(0), int64(0), int64(0), int64(0)
	for i := range viewers {
		e := s1.viewerEvents[i] - s0.viewerEvents[i]
		if vMin < 0 || e < vMin {
			vMin = e
		}
		vMax, vEvents = max(vMax, e), vEvents+e
		vBytes += s1.viewerBy[i] - s0.viewerBy[i]
		vDrops += s1.viewerDrops[i] - s0.viewerDrops[i]
		vNamed += s1.viewerNamed[i] - s0.viewerNamed[i]
	}
	mDrops := s1.viewerDrops[0] - s0.viewerDrops[0]
	t.Logf("viewers: %d (the first measuring), each got %d to %d events (%.0f bytes an event); the page dropped %d streams as too slow (%d of the measuring one's), each opened again a second later as a browser does",
		len(viewers), vMin, vMax, float64(vBytes)/float64(max(vEvents, 1)), vDrops, mDrops)
	mEvents, mKnown := s1.viewerEvents[0]-s0.viewerEvents[0], s1.known-s0.known
	t.Logf("players (LEAGUE_BENCH_PAIRINGS %t): %d of the viewers' %d events carried them; the measuring viewer knew the players of %d of its %d events",
		named, vNamed, vEvents, mKnown, mEvents)
	checkBenchPlayers(t, named, mEvents, mKnown, vNamed)
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("this process (the clubs, their proxies, the viewers): %.1f%% of a core; load average %s", genPct, strings.TrimSpace(string(load)))
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) }
	result := fmt.Sprintf("LEAGUE_BENCH_RESULT mode=%s clubs=%d ports=%d secs=%.0f units=%d units_per_s=%.1f cpu_us_per_unit=%.1f cpu_pct=%.1f rss_mib=%d hwm_mib=%d p50_ms=%s p99_ms=%s max_ms=%s events=%d link_bytes_per_unit=%.0f disk_bytes_per_unit=%.0f disk_syscw_per_unit=%.2f store_bytes_per_unit=%.0f viewers=%d viewer_events_min=%d viewer_events_max=%d viewer_drops=%d named=%t viewer_named_events=%d viewer0_known_events=%d gen_cpu_pct=%.1f load1=%s",
		h.mode, nClubs, ports, elapsed.Seconds(), n, float64(n)/elapsed.Seconds(), float64(cpu.Microseconds())/float64(max(n, 1)), cpuPct, rss/1024, hwm/1024,
		ms(pct(0.50)), ms(pct(0.99)), ms(pct(1)), len(d), perUnit(s1.linkBytes-s0.linkBytes), perUnit(s1.writeBytes-s0.writeBytes), perUnit(s1.syscw-s0.syscw), perUnit(s1.store-s0.store),
		len(viewers), vMin, vMax, vDrops, named, vNamed, mKnown, genPct, strings.Fields(string(load) + " -")[0])
	result += fmt.Sprintf(" interval=%v budget=%s", interval, cmp.Or(os.Getenv("SCOREBOARD_MEMORY_BUDGET"), "default"))

	if backlog > 0 {
		result += " " + benchCatchUp(t, h, clubs[0], &locks[0], backlog, ports)
	}
	stop()
	wg.Wait()
	result += fillEnd + fill.lost(t, locks)
	// SIGTERM: the hub writes its profile as it exits. Waited for longer than
	// proctest's Stop does before its kill, which would lose the profile.
	t0 = time.Now()
	h.hub.Signal(syscall.SIGTERM)
	select {
	case <-h.hub.Done():
		t.Logf("the hub stopped (SIGTERM) in %v: %v", time.Since(t0).Round(time.Millisecond), h.hub.Err())
	case <-time.After(2 * time.Minute):
		t.Logf("the hub did not stop within 2 minutes of SIGTERM: killed")
		h.hub.Kill()
	}
	if f := os.Getenv("LEAGUE_BENCH_HUB_LOG"); f != "" {
		if err := os.WriteFile(f, []byte(h.hub.Output()), 0o644); err != nil {
			t.Logf("the hub's log: %v", err)
		}
	}
	if profile != "" {
		if fi, err := os.Stat(profile); err == nil {
			t.Logf("the hub's CPU profile: %s, %d bytes (go tool pprof %s %s)", profile, fi.Size(), bin, profile)
		} else {
			t.Logf("the hub wrote no CPU profile at %s (SCOREBOARD_CPUPROFILE unknown to this hub?): %v", profile, err)
		}
	}
	fmt.Println(result)
}

// benchCatchUp cuts club c's line, publishes backlog units while it is cut, and
// measures how long the hub takes to have them all once the line is back. It
// returns the figures as key=value.
func benchCatchUp(t *testing.T, h *benchHub, c *benchClub, lock *sync.Mutex, backlog, ports int) string {
	t.Helper()
	c.proxy.down()
	bustest.Wait(t, c.name+" unlinked", func() (bool, string) { return !c.srv.HubLinked(), c.name + " still linked" })
	hnc, err := nats.Connect(h.tools)
	if err != nil {
		t.Fatal(err)
	}
	defer hnc.Close()
	hjs, _ := jetstream.New(hnc)
	count := func() int {
		s, err := hjs.Stream(context.Background(), league.ClubStream(c.name))
		if err != nil {
			return -1
		}
		info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(league.Subject(c.name, "result.>")))
		if err != nil {
			return -1
		}
		total := 0
		for _, v := range info.State.Subjects {
			total += int(v)
		}
		return total
	}
	lock.Lock()
	for k := range backlog {
		c.unit(fmt.Sprintf("p%d", k%ports), nil)
	}
	var want int
	for _, s := range c.seq {
		want += int(s)
	}
	lock.Unlock()
	if !c.settle(0, 5*time.Minute) {
		t.Fatalf("catch-up: %s's recorder still holds %d not stored after 5 minutes", c.name, c.rec.Held())
	}
	if os.Getenv("LEAGUE_BENCH_DEBUG") != "" {
		go func() {
			for range 20 {
				time.Sleep(2 * time.Second)
				s, err := hjs.Stream(context.Background(), league.ClubStream(c.name))
				if err != nil {
					continue
				}
				info, _ := s.Info(context.Background())
				for _, si := range info.Sources[:1] {
					t.Logf("debug: source %s lag %d active %v err %v; %s %d msgs", si.External.APIPrefix, si.Lag, si.Active, si.Error, info.Config.Name, info.State.Msgs)
				}
			}
		}()
	}
	before := count()
	up := time.Now()
	c.proxy.up()
	var first time.Time
	deadline := time.Now().Add(10 * time.Minute)
	for {
		n := count()
		if first.IsZero() && n > before {
			first = time.Now()
		}
		if n >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("catch-up: %d of %d results after 10 minutes", n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	done := time.Now()
	behind := want - before
	rate := float64(behind) / done.Sub(first).Seconds()
	t.Logf("catch-up of %s: %d units behind; link back -> first sourced %v; then %d units in %v: %.0f units/s (link back -> all: %v)",
		c.name, behind, first.Sub(up).Round(time.Millisecond), behind, done.Sub(first).Round(time.Millisecond),
		rate, done.Sub(up).Round(time.Millisecond))
	return fmt.Sprintf("catchup_units=%d catchup_first_s=%.2f catchup_units_per_s=%.0f catchup_all_s=%.2f",
		behind, first.Sub(up).Seconds(), rate, done.Sub(up).Seconds())
}
