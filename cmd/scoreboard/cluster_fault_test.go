package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
)

// startCluster starts n nats-server processes clustered on loopback, each with
// JetStream and its own store, without authentication (the roles of
// configs/nats-server.conf are proven on one server by the trust tests; here the
// question is what a lost node does). It returns once JetStream answers on every
// node: the nodes have met and chosen a meta leader.
func startCluster(t *testing.T, n int) []*proctest.NATSServer {
	t.Helper()
	// All 2n ports chosen first, each another: a port free a moment ago may be
	// given out again, and a node whose route port is another's client port does
	// not start (seen once: "bind: address already in use").
	taken := map[int]bool{}
	free := func() int {
		for {
			if p := proctest.FreePort(t); !taken[p] {
				taken[p] = true
				return p
			}
		}
	}
	ports, clients := make([]int, n), make([]int, n)
	routes := make([]string, n)
	for i := range n {
		ports[i], clients[i] = free(), free()
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", ports[i])
	}
	nodes := make([]*proctest.NATSServer, n)
	for i := range n {
		nodes[i] = proctest.StartNATS(t, proctest.NATSOptions{
			Name: fmt.Sprintf("node%d", i+1), JetStream: true, Port: clients[i],
			Cluster: "scoreboard-test", ClusterPort: ports[i], Routes: routes,
		})
	}
	for _, s := range nodes {
		nc := busConnect(t, s.URL())
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		bustest.Wait(t, "JetStream on "+s.URL(), func() (bool, string) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := js.AccountInfo(ctx)
			return err == nil, fmt.Sprintf("account info: %v", err)
		})
		nc.Close()
	}
	return nodes
}

// streamLeader is the name of the node leading stream, and whether every replica
// is current.
func streamLeader(t *testing.T, js jetstream.JetStream, stream string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", false
	}
	info := s.CachedInfo()
	if info.Cluster == nil {
		return "", false
	}
	current := len(info.Cluster.Replicas) == info.Config.Replicas-1
	for _, r := range info.Cluster.Replicas {
		current = current && r.Current && !r.Offline
	}
	return info.Cluster.Leader, current
}

// leadOn makes node lead stream, asking its leader to step down in node's favour
// until it does.
func leadOn(t *testing.T, nc *nats.Conn, js jetstream.JetStream, stream, node string) {
	t.Helper()
	req := []byte(`{"placement":{"preferred":"` + node + `"}}`)
	for range 20 {
		var leader string
		bustest.Wait(t, "a leader for stream "+stream, func() (bool, string) {
			leader, _ = streamLeader(t, js, stream)
			return leader != "", "no leader"
		})
		if leader == node {
			return
		}
		if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, req, 10*time.Second); err != nil {
			t.Logf("step down %s's leader: %v", stream, err)
		}
		bustest.Wait(t, "a new leader for stream "+stream, func() (bool, string) {
			l, _ := streamLeader(t, js, stream)
			return l != leader, "leader still " + l
		})
	}
	t.Fatalf("stream %s: %s does not lead it after 20 step-downs", stream, node)
}

// metaLeader is the JetStream meta leader as node's log last named it ("" if it
// named none): without a system account, the API does not tell.
func metaLeader(node *proctest.NATSServer, name string) string {
	out := node.Output()
	i := max(strings.LastIndex(out, "new metadata leader: "), strings.LastIndex(out, "Self is new JetStream cluster metadata leader"))
	switch {
	case i < 0:
		return ""
	case strings.HasPrefix(out[i:], "Self"):
		return name
	}
	rest := out[i+len("new metadata leader: "):]
	return rest[:strings.IndexAny(rest, "/\n")]
}

// historyResults reads the results the history stream holds, through a node's
// JetStream, and counts them per unit (the port's seq).
func historyResults(js jetstream.JetStream, stream string) (map[uint64]int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{bus.DefaultPrefix + ".result.>"}})
	if err != nil {
		return nil, fmt.Errorf("history consumer: %w", err)
	}
	per := map[uint64]int{}
	for {
		batch, err := c.Fetch(500, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, fmt.Errorf("history fetch: %w", err)
		}
		n, pending := 0, uint64(1)
		for m := range batch.Messages() {
			n++
			var r result.Record
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				return nil, fmt.Errorf("history result %q: %w", m.Data(), err)
			}
			per[r.Seq]++
			if md, err := m.Metadata(); err == nil {
				pending = md.NumPending
			}
		}
		if err := batch.Error(); err != nil {
			return nil, fmt.Errorf("history fetch: %w", err)
		}
		if n == 0 || pending == 0 {
			return per, nil
		}
	}
}

// A 3-node NATS cluster carries a port's units while a node is killed (SIGKILL)
// and started again, then while one of the two `scoreboard work` processes is
// frozen and killed: `run --no-workers` on node 1 bridges the port, the workers on nodes 2 and
// 3 solve. Every unit is answered right, once, in order, and the R3 history stream
// holds a result for every unit. Each fault waits for 20 more units answered, so
// that units are flowing at every kill however slow the machine.
func TestFaultClusterNodeAndWorkerKilled(t *testing.T) {
	const scenario = "cluster-node-and-worker-killed"
	nodes := startCluster(t, 3)
	nc := busConnect(t, nodes[0].URL())
	pt := runPTY(t)
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", nodes[0].URL(), "--no-workers",
		"--history-replicas", "3", "--port", pt.Path, "--problem", "goscore", "--baud", "115200", "--error-line",
		"--http", "off", "--log-format", "json")
	runWaitOpened(t, pt, run)
	run.WaitOutput(`"message":"history on"`, faultPatience)
	if !strings.Contains(run.Output(), `"replicas":3,`) {
		t.Errorf("the history is not at 3 replicas:\n%s", run.Output())
	}
	run.WaitOutput("scoreboard running", faultPatience)
	busStartWork(t, nc, "--nats-url", nodes[1].URL())
	victim := busStartWork(t, nc, "--nats-url", nodes[2].URL())

	stream := bus.Subjects{Prefix: bus.DefaultPrefix}.Stream()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// The node killed leads the history stream and the bucket: the stream is then
	// without a leader until the others elect one (seconds), and captures nothing
	// meanwhile; the daemon's repairer puts back what it missed.
	boards := "KV_" + bus.Subjects{Prefix: bus.DefaultPrefix}.Boards()
	leadOn(t, nc, js, stream, "node2")
	leadOn(t, nc, js, boards, "node2")

	flow := startFaultFlow(t, pt, 2*time.Millisecond)
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	sent, answered := flow.sent.Load(), flow.answered()
	streamLead, _ := streamLeader(t, js, stream)
	boardsLead, _ := streamLeader(t, js, boards)
	meta := metaLeader(nodes[0], "node1")
	nodes[1].Kill()
	t.Logf("node2 killed after unit %d sent, %d answered (leaders: stream %s, bucket %s, meta %s)", sent, answered, streamLead, boardsLead, meta)
	// The cluster carries on without it: units are answered meanwhile.
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	nodes[1].Start()
	t.Logf("node2 restarted after unit %d sent, %d answered", flow.sent.Load(), flow.answered())
	bustest.Wait(t, "node2 back in the stream's replicas, current", func() (bool, string) {
		leader, current := streamLeader(t, js, stream)
		return current, fmt.Sprintf("leader %q, every replica current: %v", leader, current)
	})

	// The worker is frozen first, so that it dies with dumps in hand (the queue
	// group gives it its share of 20 more units): killed as it is, it would seldom
	// be in the middle of one.
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	victim.Freeze()
	frozenAt := flow.sent.Load()
	bustest.Wait(t, "units sent to the frozen worker's queue group", func() (bool, string) {
		n := flow.sent.Load()
		return n >= frozenAt+20, fmt.Sprintf("%d sent, %d when frozen", n, frozenAt)
	})
	sent, answered = flow.sent.Load(), flow.answered()
	victim.Kill()
	t.Logf("work on node3 frozen after unit %d sent, killed after unit %d sent, %d answered", frozenAt, sent, answered)
	flow.waitAnswered(t, scenario, flow.answered()+50, run)

	c := flow.finish(t, scenario, run)
	c.Check(t)
	if c.Errors != 0 {
		t.Errorf("%d units given up", c.Errors)
	}

	// The history, read from a node that was never lost: a result for every unit.
	nc3 := busConnect(t, nodes[2].URL())
	js3, err := jetstream.New(nc3)
	if err != nil {
		t.Fatal(err)
	}
	var per map[uint64]int
	missing, twice := 0, 0
	for deadline := time.Now().Add(faultPatience); ; {
		var err error
		if per, err = historyResults(js3, stream); err != nil {
			// A node just restarted may leave the JetStream API without a meta
			// leader for a while: tried again, within the patience.
			if time.Now().After(deadline) {
				t.Fatalf("history: %v", err)
			}
			t.Logf("history: %v; trying again", err)
			continue
		}
		missing, twice = 0, 0
		var first []uint64
		for seq := uint64(1); seq <= uint64(c.Sent); seq++ {
			switch n := per[seq]; {
			case n == 0:
				missing++
				if len(first) < 10 {
					first = append(first, seq)
				}
			case n > 1:
				twice++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history: results for %d of %d units, %d missing (first: %v), %d twice", len(per), c.Sent, missing, first, twice)
		}
		time.Sleep(100 * time.Millisecond)
	}
	info, err := js3.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	ci := info.CachedInfo()
	t.Logf("history: stream %s replicas=%d msgs=%d results for %d units: missing=%d twice=%d",
		stream, ci.Config.Replicas, ci.State.Msgs, len(per), missing, twice)
	if ci.Config.Replicas != 3 {
		t.Errorf("stream %s has %d replicas, want 3", stream, ci.Config.Replicas)
	}
	if twice != 0 {
		t.Errorf("the history holds %d units' results more than once", twice)
	}
	// The bucket, whose leader was node 2 too, holds the port's latest board: the
	// last unit's result, with its unit.
	var latest struct {
		Seq  uint64 `json:"seq"`
		Unit string `json:"unit"`
	}
	bustest.Wait(t, "the port's latest board in the bucket", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		kv, err := js3.KeyValue(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Boards())
		if err != nil {
			return false, fmt.Sprintf("bucket: %v", err)
		}
		keys, err := kv.ListKeys(ctx)
		if err != nil {
			return false, fmt.Sprintf("bucket keys: %v", err)
		}
		var names []string
		for k := range keys.Keys() {
			names = append(names, k)
		}
		if len(names) != 1 {
			t.Fatalf("bucket keys %v, want the one port's", names)
		}
		e, err := kv.Get(ctx, names[0])
		if err != nil {
			return false, fmt.Sprintf("bucket value of %s: %v", names[0], err)
		}
		if err := json.Unmarshal(e.Value(), &latest); err != nil {
			t.Fatalf("bucket value %q: %v", e.Value(), err)
		}
		// The bucket follows the stream: it catches up within seconds of a new
		// leader (the updater's reader starts again, or its idle comparison).
		return latest.Seq == uint64(c.Sent), fmt.Sprintf("latest board: unit %d of %d", latest.Seq, c.Sent)
	})
	t.Logf("bucket: the port's latest board is unit %d of %d", latest.Seq, c.Sent)
	if latest.Seq != uint64(c.Sent) || latest.Unit == "" {
		t.Errorf("the bucket's latest board is unit %d (unit text %d bytes), want unit %d with its text", latest.Seq, len(latest.Unit), c.Sent)
	}

	// The stream has no leader for seconds (an election takes 4 to 9 s) while units
	// flow every 2 ms: it misses some, and the daemon puts them back.
	repaired := "0"
	if m := regexp.MustCompile(`"repaired_total":(\d+)`).FindAllStringSubmatch(run.Output(), -1); m != nil {
		repaired = m[len(m)-1][1]
	}
	t.Logf("history: the daemon put back %s dumps and results the stream missed", repaired)
	if repaired == "0" {
		t.Errorf("the daemon put nothing back in the stream: its leader's loss cost it nothing, and the test proved nothing")
	}
	again := strings.Count(run.Output(), "publishing the dump again")
	t.Logf("the daemon published %d dumps again", again)
	if again == 0 {
		t.Errorf("no dump was published again: the killed worker had none in hand, and the test proved nothing")
	}
}
