package main

import (
	"cmp"
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

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/result"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// benchClub is a club's embedded server, linked to the hub through a proxy, whose
// ports' units and results the benchmark publishes as a daemon's ports and
// workers do, and records as a daemon's ports do: each dump and result is handed
// to the club's history.Recorder, which publishes it into the history stream with
// acks and sends it again until it is stored (the daemon's path, daemon.Config.Record),
// and the hub sources the stream.
type benchClub struct {
	name   string
	proxy  *linkProxy
	srv    *bus.Server
	nc     *nats.Conn
	rec    *history.Recorder
	origin map[string]string // a port's, as a daemon's ports each have their own
	seq    map[string]uint64
}

// benchClubLogs keeps the clubs' servers' and connections' warnings, the first
// benchClubLogLines of them, for the end of the run: a club's server closing its
// own connection (a slow consumer), a stream refusing, a disconnect.
var benchClubLogs = &benchLogSink{}

const benchClubLogLines = 300

type benchLogSink struct {
	mu    sync.Mutex
	lines []string
	more  int
}

func (s *benchLogSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lines) < benchClubLogLines {
		s.lines = append(s.lines, strings.TrimSpace(string(p)))
	} else {
		s.more++
	}
	return len(p), nil
}

// take is the lines kept so far and how many more there were, and forgets them.
func (s *benchLogSink) take() ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines, more := s.lines, s.more
	s.lines, s.more = nil, 0
	return lines, more
}

// record hands m to the club's recorder. A club made without one (the storm's, the
// hostile club test's good club) copies its bus into its history itself
// (bustest.CaptureHistory).
func (c *benchClub) record(m *nats.Msg) {
	if c.rec != nil {
		c.rec.Record(m)
	}
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
	// The port publishes its dump for the workers, and hands it to the recorder.
	c.record(d)
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
	// A worker publishes the result; the port takes it as the unit's outcome and
	// hands it to the recorder.
	c.record(r)
	return c.nc.PublishMsg(r)
}

// settle waits until the club's recorder holds at most n messages not yet
// stored (queued, or published and not acked); false if it still holds more
// after within.
func (c *benchClub) settle(n int, within time.Duration) bool {
	for deadline := time.Now().Add(within); c.rec.Held() > n; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
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
	h.hub = proctest.Start(t, bin, append([]string{"hub", "--config", confPath, "--log-format", "json", "--log-level", cmp.Or(os.Getenv("LEAGUE_BENCH_HUB_LOG_LEVEL"), "warn")}, args...)...)
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
	log := zerolog.New(benchClubLogs).Level(zerolog.WarnLevel).With().Timestamp().Str("club", name).Logger()
	c := &benchClub{name: name, proxy: newLinkProxy(t, leaf), origin: map[string]string{}, seq: map[string]uint64{}}
	b := bustest.Start(t, bustest.Options{Off: true, StoreDir: filepath.Join(root, name), Log: &log,
		Hub: &bus.HubLink{URL: "nats-leaf://" + c.proxy.addr, Club: name, Token: "token-" + name}})
	c.srv, c.nc = b.Server, b.Daemon()
	js, _ := jetstream.New(c.nc)
	_, err := history.Setup(context.Background(), js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	// The club's recorder, as a daemon's: on the daemon's connection, until the
	// test ends (before the connection closes: the cleanups run last first).
	if c.rec, err = history.NewRecorder(c.nc, bus.DefaultPrefix, log); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.rec.Run(ctx, nil) }()
	t.Cleanup(func() { cancel(); <-done })
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
