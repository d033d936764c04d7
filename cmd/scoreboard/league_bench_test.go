package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/result"
)

// benchClub is a club's embedded server, linked to the hub through a proxy, whose
// ports' units and results the benchmark publishes as a daemon's ports and
// workers do: the history stream captures them, the hub sources them.
type benchClub struct {
	name   string
	proxy  *linkProxy
	srv    *bus.Server
	nc     *nats.Conn
	origin map[string]string // a port's, as a daemon's ports each have their own
	seq    map[string]uint64
}

func (c *benchClub) unit(port string, sent func(key string)) error {
	c.seq[port]++
	seq := c.seq[port]
	if c.origin[port] == "" {
		c.origin[port] = bus.NewOrigin()
	}
	origin := c.origin[port]
	u, a := faulttest.GoscoreBoard(int(seq) % 32000)
	d := nats.NewMsg("scoreboard.dump.goscore." + port)
	d.Data = []byte(u)
	d.Header.Set(bus.HeaderOrigin, origin)
	d.Header.Set(bus.HeaderSeq, strconv.FormatUint(seq, 10))
	d.Header.Set(bus.HeaderMsgID, bus.DumpID(origin, seq))
	if err := c.nc.PublishMsg(d); err != nil {
		return err
	}
	res, _ := json.Marshal(result.Record{Problem: "goscore", Port: port, Seq: seq, Answer: a, Origin: origin, UnitDigest: bus.UnitDigest([]byte(u))})
	r := nats.NewMsg("scoreboard.result.goscore." + port)
	r.Data = res
	r.Header.Set(bus.HeaderMsgID, bus.ResultID(origin, seq))
	if sent != nil {
		sent(fmt.Sprintf("%s.%s %d", c.name, port, seq))
	}
	return c.nc.PublishMsg(r)
}

func procStat(t *testing.T, pid int) (cpu time.Duration, rssKiB, hwmKiB int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	cpu = time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
	s, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(s), "\n") {
		v := strings.Fields(l)
		if len(v) >= 2 && v[0] == "VmRSS:" {
			rssKiB, _ = strconv.Atoi(v[1])
		}
		if len(v) >= 2 && v[0] == "VmHWM:" {
			hwmKiB, _ = strconv.Atoi(v[1])
		}
	}
	return cpu, rssKiB, hwmKiB
}

// TestLeagueScaleBench is the league's benchmark (BENCHMARKS.md), run only with
// LEAGUE_BENCH=1: a hub as a real process and LEAGUE_BENCH_CLUBS clubs (20) of 4
// ports, each port answering 2 units a second for LEAGUE_BENCH_DURATION (5m); it
// reports the hub's CPU and RSS, the delay from a club's result to the hub page's
// event (p50, p99), the bytes on the links per unit, and the catch-up rate of one
// club after a cut whose backlog is LEAGUE_BENCH_BACKLOG units (4800: 10 minutes of
// 4 ports at 2 units/s), published at once while its line is cut.
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
	dur, err := time.ParseDuration(os.Getenv("LEAGUE_BENCH_DURATION"))
	if err != nil {
		dur = 5 * time.Minute
	}
	const ports = 4
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hubPort, leafPort, httpPort := proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)
	var conf strings.Builder
	fmt.Fprintf(&conf, "[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\n", hubPort, leafPort, httpPort, filepath.Join(root, "hub"))
	names := make([]string, nClubs)
	for i := range names {
		names[i] = fmt.Sprintf("c%02d", i)
		fmt.Fprintf(&conf, "[[club]]\nname = %q\ntoken = \"token-%s\"\n", names[i], names[i])
	}
	confPath := filepath.Join(root, "hub.toml")
	os.WriteFile(confPath, []byte(conf.String()), 0o600)
	hub := proctest.Start(t, bin, "hub", "--config", confPath, "--log-format", "json", "--log-level", "warn")
	bustest.Wait(t, "the hub's page", func() (bool, string) {
		r, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", httpPort))
		if err == nil {
			r.Body.Close()
		}
		return err == nil, fmt.Sprintf("GET /metrics: %v", err)
	})

	clubs := make([]*benchClub, nClubs)
	nop := zerolog.Nop()
	for i, name := range names {
		c := &benchClub{name: name, proxy: newLinkProxy(t, fmt.Sprintf("127.0.0.1:%d", leafPort)), origin: map[string]string{}, seq: map[string]uint64{}}
		b := bustest.Start(t, bustest.Options{Off: true, StoreDir: filepath.Join(root, name), Log: &nop,
			Hub: &bus.HubLink{URL: "nats-leaf://" + c.proxy.addr, Club: name, Token: "token-" + name}})
		c.srv, c.nc = b.Server, b.Daemon()
		js, _ := jetstream.New(c.nc)
		if _, err := history.Setup(context.Background(), js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 1 << 30}); err != nil {
			t.Fatal(err)
		}
		clubs[i] = c
	}

	// The page's events: the delay from each result's publication to its event.
	events := followPage(t, fmt.Sprintf("http://127.0.0.1:%d", httpPort), nil)
	sent := events.sent

	// The clubs play: every port a unit each 500 ms, the clubs' ticks spread.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	var pmu sync.Mutex // club 0's connection is also the backlog's
	var units int64
	var umu sync.Mutex
	for i, c := range clubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 500 * time.Millisecond / time.Duration(nClubs))
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				pmu.Lock()
				for p := range ports {
					c.unit(fmt.Sprintf("p%d", p), sent)
				}
				pmu.Unlock()
				umu.Lock()
				units += ports
				umu.Unlock()
			}
		}()
	}
	bustest.Wait(t, "every club linked", func() (bool, string) {
		linked := 0
		for _, c := range clubs {
			if c.srv.HubLinked() {
				linked++
			}
		}
		return linked == len(clubs), fmt.Sprintf("%d of %d clubs linked", linked, len(clubs))
	})
	time.Sleep(5 * time.Second) // the sources set up
	events.measure(true)
	umu.Lock()
	u0 := units
	umu.Unlock()
	var b0 int64
	for _, c := range clubs {
		b0 += c.proxy.bytes.Load()
	}
	cpu0, _, _ := procStat(t, hub.PID())
	start := time.Now()
	time.Sleep(dur)
	cpu1, rss, hwm := procStat(t, hub.PID())
	elapsed := time.Since(start)
	umu.Lock()
	u1 := units
	umu.Unlock()
	var b1 int64
	for _, c := range clubs {
		b1 += c.proxy.bytes.Load()
	}
	events.measure(false)
	d, pending := events.take()
	pct := func(p float64) time.Duration { return percentile(d, p) }
	n := u1 - u0
	t.Logf("league: %d clubs x %d ports x 2 units/s for %v: %d units (%.0f units/s)", nClubs, ports, elapsed.Round(time.Second), n, float64(n)/elapsed.Seconds())
	t.Logf("hub: CPU %.1f%% of a core (%v in %v), RSS %d MiB (peak %d MiB)",
		100*cpu1.Seconds()/elapsed.Seconds()-100*cpu0.Seconds()/elapsed.Seconds(), (cpu1 - cpu0).Round(10*time.Millisecond), elapsed.Round(time.Second), rss/1024, hwm/1024)
	t.Logf("club result -> hub page event: p50 %v, p99 %v, max %v (%d events; %d results not seen on the page, the page showing a port's latest only)",
		pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), pct(1).Round(time.Millisecond), len(d), pending)
	t.Logf("links: %d bytes for %d units: %.0f bytes a unit (the unit and its result, ~%d + ~%d bytes of data)", b1-b0, n, float64(b1-b0)/float64(n), 19*19*2+20, 200)

	// Catch-up: club 0's line cut, its backlog published, its line back.
	c0 := clubs[0]
	c0.proxy.down()
	bustest.Wait(t, "club 0 unlinked", func() (bool, string) { return !c0.srv.HubLinked(), "club 0 still linked" })
	hnc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", hubPort))
	if err != nil {
		t.Fatal(err)
	}
	defer hnc.Close()
	hjs, _ := jetstream.New(hnc)
	count := func() int {
		s, err := hjs.Stream(context.Background(), league.ClubStream(c0.name))
		if err != nil {
			return -1
		}
		info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(league.Subject(c0.name, "result.>")))
		if err != nil {
			return -1
		}
		total := 0
		for _, v := range info.State.Subjects {
			total += int(v)
		}
		return total
	}
	pmu.Lock()
	for k := range backlog {
		c0.unit(fmt.Sprintf("p%d", k%ports), nil)
	}
	pmu.Unlock()
	c0.nc.Flush()
	var want int
	for _, s := range c0.seq {
		want += int(s)
	}
	if os.Getenv("LEAGUE_BENCH_DEBUG") != "" {
		go func() {
			for range 20 {
				time.Sleep(2 * time.Second)
				s, err := hjs.Stream(context.Background(), league.ClubStream(c0.name))
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
	c0.proxy.up()
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
	t.Logf("catch-up of %s: %d units behind; link back -> first sourced %v; then %d units in %v: %.0f units/s (link back -> all: %v)",
		c0.name, behind, first.Sub(up).Round(time.Millisecond), behind, done.Sub(first).Round(time.Millisecond),
		float64(behind)/done.Sub(first).Seconds(), done.Sub(up).Round(time.Millisecond))
	stop()
	wg.Wait()
}
