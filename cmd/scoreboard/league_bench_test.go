package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
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

// benchProcIO is what a process wrote to its files, from /proc/<pid>/io: write_bytes
// (what it sent to the disk, counted when a page is dirtied, so also what the kernel
// writes back later) and syscw (its write calls, sockets' too). -1 when unreadable.
func benchProcIO(pid int) (writeBytes, syscw int64) {
	writeBytes, syscw = -1, -1
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "write_bytes":
			writeBytes = n
		case "syscw":
			syscw = n
		}
	}
	return
}

// benchDirBytes is the size of the files under dirs: what the stores hold.
func benchDirBytes(dirs ...string) int64 {
	var n int64
	for _, d := range dirs {
		filepath.WalkDir(d, func(_ string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if fi, err := e.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

// benchHub is the hub the benchmark measures: a `scoreboard hub` process with its
// embedded server, or three nats-server processes as the hub's cluster with
// `scoreboard hub --nats-url` on them, which manages the clubs' streams and serves
// the page.
type benchHub struct {
	mode   string
	hub    *proctest.Process // scoreboard hub
	procs  []benchProc       // the hub's processes: their CPU, memory and writes are the hub's cost
	leaf   []string          // the clubs' leaf listeners, HOST:PORT
	tools  string            // a tool's URL(s): reads the clubs' streams
	page   string            // http://HOST:PORT
	stores []string          // the JetStream stores
}

type benchProc struct {
	name string
	pid  int
}

// benchClubShare is each club's share at the hub (league.club_max_bytes), far above
// a run's units (10 minutes of 4 ports at 2 units/s are about 7 MB) and small enough
// that 200 clubs' shares fit this machine's disk: JetStream reserves a stream's whole
// limit, and each node of a cluster on one disk reserves its own.
var benchClubShare = cmp.Or(os.Getenv("LEAGUE_BENCH_CLUB_SHARE"), "64MiB")

// startBenchHub starts the hub whose clubs are names, each with the token
// token-<name>: a `scoreboard hub` process, or with cluster three nats-servers of
// configs/league-hub-cluster.conf and `scoreboard hub --nats-url ... ` with
// league.replicas = 3 on them. profile, if not "", is given to the hub process as
// SCOREBOARD_CPUPROFILE.
//
// nodes 1 is one nats-server of configs/league-hub.conf alone (league.replicas = 1):
// the hub's server and the scoreboard hub's keeper and page in processes of their
// own, so that their CPU is told apart.
func startBenchHub(t *testing.T, bin, root string, names []string, nodes int, profile, tables string) *benchHub {
	t.Helper()
	httpPort := proctest.FreePort(t)
	h := &benchHub{page: fmt.Sprintf("http://127.0.0.1:%d", httpPort)}
	var conf strings.Builder
	var args []string
	if nodes > 0 {
		h.mode = "cluster3"
		if nodes == 1 {
			h.mode = "external1"
		}
		servers := startBenchCluster(t, root, names, nodes)
		var urls []string
		for i, n := range servers {
			urls = append(urls, n.URL())
			h.procs = append(h.procs, benchProc{fmt.Sprintf("nats-server hub%d", i+1), n.PID()})
			h.leaf = append(h.leaf, n.leaf)
			h.stores = append(h.stores, n.store)
		}
		h.tools = strings.Join(urls, ",")
		fmt.Fprintf(&conf, "[league]\nhttp = \"127.0.0.1:%d\"\nreplicas = %d\nclub_max_bytes = %q\n", httpPort, nodes, benchClubShare)
		args = []string{"--nats-url", h.tools, "--nats-user", "admin", "--nats-password", "admin-secret"}
	} else {
		h.mode = "embedded"
		hubPort, leafPort := proctest.FreePort(t), proctest.FreePort(t)
		h.leaf = []string{fmt.Sprintf("127.0.0.1:%d", leafPort)}
		h.tools = fmt.Sprintf("nats://127.0.0.1:%d", hubPort)
		h.stores = []string{filepath.Join(root, "hub")}
		fmt.Fprintf(&conf, "[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = %q\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\nclub_max_bytes = %q\n",
			hubPort, h.leaf[0], httpPort, h.stores[0], benchClubShare)
	}
	for _, name := range names {
		fmt.Fprintf(&conf, "[[club]]\nname = %q\ntoken = \"token-%s\"\n", name, name)
	}
	conf.WriteString(tables) // the organiser's [tables], if any
	confPath := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(confPath, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if profile != "" {
		// The hub's own variable; nothing else this test starts after it reads it.
		t.Setenv("SCOREBOARD_CPUPROFILE", profile)
	}
	h.hub = proctest.Start(t, bin, append([]string{"hub", "--config", confPath, "--log-format", "json", "--log-level", "warn"}, args...)...)
	h.procs = append(h.procs, benchProc{"scoreboard hub", h.hub.PID()})
	// With a cluster the hub makes every club's R3 stream before its page is up.
	bustest.WaitWithin(t, 10*time.Minute, "the hub's page", func() (bool, string) {
		select {
		case <-h.hub.Done():
			t.Fatalf("the hub exited: %v\n%s", h.hub.Err(), lastLines(h.hub.Output(), 30))
		default:
		}
		r, err := http.Get(h.page + "/metrics")
		if err == nil {
			r.Body.Close()
		}
		return err == nil, fmt.Sprintf("GET /metrics: %v", err)
	})
	if nodes > 1 && len(names) > 0 {
		nc, err := nats.Connect(h.tools)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		s, err := js.Stream(context.Background(), league.ClubStream(names[0]))
		if err != nil || s.CachedInfo().Config.Replicas != 3 {
			t.Fatalf("%s on the cluster: %v, not 3 replicas", league.ClubStream(names[0]), err)
		}
	}
	return h
}

// benchNode is a node of the hub's cluster, with its leaf listener and store.
type benchNode struct {
	*proctest.NATSServer
	leaf, store string
}

// startBenchCluster starts the hub's cluster as TestLeagueNATSServerClusterHubFault
// does, from the shipped configs/league-hub-cluster.conf and league-hub.conf, whose
// clubs' users (north, south) are replaced by one user per club of names, with the
// rights north has there and the password token-<name>. It returns once JetStream
// answers.
func startBenchCluster(t *testing.T, root string, names []string, n int) []*benchNode {
	t.Helper()
	hubConf, err := os.ReadFile("../../configs/league-hub.conf")
	if err != nil {
		t.Fatal(err)
	}
	clusterConf, err := os.ReadFile("../../configs/league-hub-cluster.conf")
	if err != nil {
		t.Fatal(err)
	}
	c := string(hubConf)
	north, south, admin := strings.Index(c, "    {\n      user: north\n"), strings.Index(c, "    {\n      user: south\n"), strings.Index(c, "    { user: admin")
	if north < 0 || south < north || admin < south {
		t.Fatal("configs/league-hub.conf: the users north, south and admin are not where the benchmark takes north's rights from")
	}
	var users strings.Builder
	for _, name := range names {
		users.WriteString(strings.NewReplacer("north", name, "$LEAGUE_TOKEN_NORTH", strconv.Quote("token-"+name)).Replace(c[north:south]))
	}
	c = c[:north] + users.String() + c[admin:]
	t.Setenv("LEAGUE_ADMIN_PASSWORD", "admin-secret")

	// Every port another: one free a moment ago may be given out again.
	taken := map[int]bool{}
	free := func() int {
		for {
			if p := proctest.FreePort(t); !taken[p] {
				taken[p] = true
				return p
			}
		}
	}
	clientPorts, leafPorts, routePorts := make([]int, n), make([]int, n), make([]int, n)
	var routes []string
	for i := range n {
		clientPorts[i], leafPorts[i], routePorts[i] = free(), free(), free()
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", routePorts[i]))
	}
	nodes := make([]*benchNode, n)
	var urls []string
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("hub%d", i+1))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		node := &benchNode{leaf: fmt.Sprintf("127.0.0.1:%d", leafPorts[i]), store: filepath.Join(dir, "js")}
		hc := strings.Replace(c, "listen: 0.0.0.0:7422", "listen: "+node.leaf, 1)
		hc = strings.Replace(hc, `store_dir: "/var/lib/nats-league"`, fmt.Sprintf("store_dir: %q", node.store), 1)
		cc := strings.Replace(string(clusterConf), "server_name: hub1", fmt.Sprintf("server_name: hub%d", i+1), 1)
		cc = strings.Replace(cc, "listen: 0.0.0.0:6222", fmt.Sprintf("listen: 127.0.0.1:%d", routePorts[i]), 1)
		for j := range n {
			cc = strings.Replace(cc, fmt.Sprintf("nats-route://hub%d:6222", j+1), routes[j], 1)
		}
		for name, data := range map[string]string{"league-hub.conf": hc, "league-hub-cluster.conf": cc} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		conf := "league-hub-cluster.conf"
		if n == 1 {
			conf = "league-hub.conf" // one server: no cluster
		}
		node.NATSServer = proctest.StartNATS(t, proctest.NATSOptions{Config: filepath.Join(dir, conf), Name: fmt.Sprintf("hub%d", i+1), Port: clientPorts[i]})
		nodes[i] = node
		urls = append(urls, node.URL())
	}
	waitLeagueJetStream(t, urls)
	return nodes
}

// startBenchClub starts a club's embedded server with its history stream, joined
// to the hub's leaf listener leaf through a counting proxy, as token-<name>.
func startBenchClub(t *testing.T, root, name, leaf string) *benchClub {
	t.Helper()
	nop := zerolog.Nop()
	c := &benchClub{name: name, proxy: newLinkProxy(t, leaf), origin: map[string]string{}, seq: map[string]uint64{}}
	b := bustest.Start(t, bustest.Options{Off: true, StoreDir: filepath.Join(root, name), Log: &nop,
		Hub: &bus.HubLink{URL: "nats-leaf://" + c.proxy.addr, Club: name, Token: "token-" + name}})
	c.srv, c.nc = b.Server, b.Daemon()
	js, _ := jetstream.New(c.nc)
	if _, err := history.Setup(context.Background(), js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	bustest.CaptureHistory(t, c.nc, bus.DefaultPrefix) // the club's ports
	return c
}

// startBenchClubs starts the clubs names, at most parallel at a time, club i joined
// to leaf[i % len(leaf)].
func startBenchClubs(t *testing.T, root string, names, leaf []string, parallel int) []*benchClub {
	t.Helper()
	clubs := make([]*benchClub, len(names))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			// A start that fails ends this goroutine (t.Fatal), its club nil.
			defer func() { <-sem; wg.Done() }()
			clubs[i] = startBenchClub(t, root, name, leaf[i%len(leaf)])
		}()
	}
	wg.Wait()
	for i, c := range clubs {
		if c == nil {
			t.Fatalf("club %s did not start", names[i])
		}
	}
	return clubs
}

// benchViewer is a page viewer, as a browser's tab is: it holds /api/events open
// and reads every event, counting them and their bytes without decoding them; a
// stream the page ends (it drops a viewer that lags clientBuffer events) is opened
// again after the page's "retry: 1000", as EventSource does. The measuring viewer
// (page set) decodes each board event into page: its delay from the result's
// publication.
type benchViewer struct {
	events, bytes, drops atomic.Int64
	named                atomic.Int64 // the events with players (gameMark)
	// known are the measuring viewer's board events whose port's players its
	// stream had said: an event says them only when they change (docs/page.md).
	known  atomic.Int64
	status atomic.Int32 // the first answer's status; 0 before it, -1 no answer
	// err is why a stream ended last, as text: an atomic.Value holds one
	// concrete type, and errors of two types were a panic after the results (a
	// viewer reconnecting while the hub stopped).
	err  atomic.Value
	page *pageDelays
}

// startBenchViewers connects n viewers to page's events, the first of them
// measuring into delays, and waits until each has its answer. They read, and
// reconnect, until the test ends.
func startBenchViewers(t *testing.T, page string, n int, delays *pageDelays) []*benchViewer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	vs := make([]*benchViewer, n)
	for i := range vs {
		v := &benchViewer{}
		if i == 0 {
			v.page = delays
		}
		vs[i] = v
		// The page bounds the streams of one address (league.max_viewers_per_address,
		// 50), as it should: 25 viewers an address of loopback's.
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i/25))}
		c := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: local}).DialContext}}
		go v.follow(ctx, c, page+"/api/events")
	}
	bustest.Wait(t, "the page's viewers answered", func() (bool, string) {
		answered := 0
		for _, v := range vs {
			switch s := v.status.Load(); {
			case s == http.StatusOK:
				answered++
			case s != 0:
				t.Fatalf("a viewer's /api/events: status %d, %v", s, v.err.Load())
			}
		}
		return answered == n, fmt.Sprintf("%d of %d viewers answered", answered, n)
	})
	return vs
}

func (v *benchViewer) follow(ctx context.Context, c *http.Client, url string) {
	for {
		v.stream(ctx, c, url)
		if ctx.Err() != nil {
			return
		}
		v.drops.Add(1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second): // the page's retry
		}
	}
}

// stream reads one event stream until it ends.
func (v *benchViewer) stream(ctx context.Context, c *http.Client, url string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		v.err.Store(err.Error())
		v.status.CompareAndSwap(0, -1)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		v.err.Store(resp.Status)
		v.status.CompareAndSwap(0, int32(resp.StatusCode))
		return
	}
	v.status.CompareAndSwap(0, int32(resp.StatusCode))
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	start := true              // at a line's start
	games := map[string]bool{} // the measuring viewer's: a port has players, as its stream said last
	for {
		b, err := r.ReadSlice('\n')
		v.bytes.Add(int64(len(b)))
		if start && bytes.HasPrefix(b, []byte("data: ")) {
			v.events.Add(1)
			if bytes.Contains(b, gameMark) {
				v.named.Add(1)
			}
			if v.page != nil && err == nil {
				var ev struct {
					Board *struct {
						pageEvent
						Game json.RawMessage `json:"game"`
					} `json:"board"`
				}
				if json.Unmarshal(b[len("data: "):], &ev) == nil && ev.Board != nil {
					v.page.event(ev.Board.pageEvent, time.Now())
					if ev.Board.Game != nil {
						games[ev.Board.Port] = string(ev.Board.Game) != "null"
					}
					if games[ev.Board.Port] {
						v.known.Add(1)
					}
				}
			}
		}
		start = err == nil
		if err != nil && err != bufio.ErrBufferFull {
			v.err.Store(err.Error())
			return
		}
	}
}

// benchSample is what the benchmark reads at each end of the measured time.
type benchSample struct {
	at                                  time.Time
	units, linkBytes                    int64
	cpu                                 []time.Duration // a hub process's each
	writeBytes, syscw                   int64           // the hub's processes' together
	store                               int64
	genCPU                              time.Duration // this process: the clubs, their proxies and the viewers
	viewerEvents, viewerBy, viewerDrops []int64
	viewerNamed                         []int64
	known                               int64 // the measuring viewer's (benchViewer.known)
}

func (h *benchHub) sample(t *testing.T, units *atomic.Int64, clubs []*benchClub, viewers []*benchViewer) benchSample {
	s := benchSample{at: time.Now(), units: units.Load(), genCPU: proctest.CPUTime(), store: benchDirBytes(h.stores...)}
	for _, c := range clubs {
		s.linkBytes += c.proxy.bytes.Load()
	}
	for _, p := range h.procs {
		cpu, _, _ := procStat(t, p.pid)
		s.cpu = append(s.cpu, cpu)
		wb, sc := benchProcIO(p.pid)
		s.writeBytes += wb
		s.syscw += sc
	}
	s.known = viewers[0].known.Load()
	for _, v := range viewers {
		s.viewerEvents = append(s.viewerEvents, v.events.Load())
		s.viewerBy = append(s.viewerBy, v.bytes.Load())
		s.viewerDrops = append(s.viewerDrops, v.drops.Load())
		s.viewerNamed = append(s.viewerNamed, v.named.Load())
	}
	return s
}

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

	events.measure(true)
	s0 := h.sample(t, &units, clubs, viewers)
	time.Sleep(dur)
	s1 := h.sample(t, &units, clubs, viewers)
	events.measure(false)
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
	c.nc.Flush()
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
