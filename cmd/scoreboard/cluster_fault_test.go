package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/serialio"
)

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
		"--history-replicas", "3", "--port-name", "desk", "--port", pt.Path, "--problem", "goscore", "--baud", "115200", "--error-line",
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

	// The history, read from a node that was never lost: a result for every unit,
	// and the port's latest board in the bucket.
	clusterFinish(t, scenario, flow, run, js, nodes[2])
	clusterResent(t, run)
	again := strings.Count(run.Output(), "publishing the dump again")
	t.Logf("the daemon published %d dumps again", again)
	if again == 0 {
		t.Errorf("no dump was published again: the killed worker had none in hand, and the test proved nothing")
	}
}

// clusterHistoryWhole checks, through node, that the R3 history stream holds a
// result for each of the sent units, none twice, and that the bucket holds the
// port's latest board: the last unit's result, with its unit.
func clusterHistoryWhole(t *testing.T, node *proctest.NATSServer, sent int) {
	t.Helper()
	stream := bus.Subjects{Prefix: bus.DefaultPrefix}.Stream()
	nc := busConnect(t, node.URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var per map[uint64]int
	missing, twice := 0, 0
	for deadline := time.Now().Add(faultPatience); ; {
		var err error
		if per, err = historyResults(js, stream); err != nil {
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
		for seq := uint64(1); seq <= uint64(sent); seq++ {
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
			t.Fatalf("history: results for %d of %d units, %d missing (first: %v), %d twice", len(per), sent, missing, first, twice)
		}
		time.Sleep(100 * time.Millisecond)
	}
	info, err := js.Stream(context.Background(), stream)
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
	// Each unit's dump and result, and nothing else: a dump stored twice would
	// show here.
	if ci.State.Msgs != uint64(2*sent) {
		t.Errorf("stream %s holds %d messages, want %d: a dump and a result for each of %d units", stream, ci.State.Msgs, 2*sent, sent)
	}
	// The bucket holds the port's latest board: the last unit's result, with its
	// unit. The daemon has stopped by now, so this is what its stop left.
	var latest struct {
		Seq  uint64 `json:"seq"`
		Unit string `json:"unit"`
	}
	// Read errors (a node just back, the API without a meta leader) are tried
	// again; the value is what it is.
	bustest.Wait(t, "the port's latest board in the bucket", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Boards())
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
		return true, ""
	})
	t.Logf("bucket: the port's latest board is unit %d of %d", latest.Seq, sent)
	if latest.Seq != uint64(sent) || latest.Unit == "" {
		t.Errorf("the bucket's latest board is unit %d (unit text %d bytes), want unit %d with its text", latest.Seq, len(latest.Unit), sent)
	}
}

// clusterResent checks that the daemon's recorder had publishes refused and sent
// them again: else the leader's loss cost the stream nothing, and the test proved
// nothing.
func clusterResent(t *testing.T, run *proctest.Process) {
	t.Helper()
	resent := "0"
	if m := regexp.MustCompile(`"resent_total":(\d+)`).FindAllStringSubmatch(run.Output(), -1); m != nil {
		resent = m[len(m)-1][1]
	}
	t.Logf("history: the daemon's recorder sent %s publishes again, refused or unacked while the stream had no leader", resent)
	if resent == "0" {
		t.Errorf("the daemon's recorder was never refused: the stream's leader loss cost it nothing, and the test proved nothing")
	}
}

// bucketLatest is the port's latest board in the bucket, read through js: its seq,
// and when the bucket stored it.
func bucketLatest(js jetstream.JetStream) (uint64, time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Boards())
	if err != nil {
		return 0, time.Time{}, err
	}
	e, err := kv.Get(ctx, "desk")
	if err != nil {
		return 0, time.Time{}, err
	}
	var v struct {
		Seq uint64 `json:"seq"`
	}
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return 0, time.Time{}, fmt.Errorf("bucket value %q: %w", e.Value(), err)
	}
	return v.Seq, e.Created(), nil
}

// streamCurrent waits until stream has a leader and every replica is current, and
// returns the leader.
func streamCurrent(t *testing.T, js jetstream.JetStream, stream, what string) string {
	t.Helper()
	var leader string
	bustest.Wait(t, what, func() (bool, string) {
		l, ok := streamLeader(t, js, stream)
		leader = l
		return ok && l != "", fmt.Sprintf("leader %q, every replica current: %v", l, ok)
	})
	return leader
}

// clusterFinish stops the flow once every unit is answered, checks that the bucket
// follows within 5 s as the daemon runs, stops the daemon, and checks the port's
// counts and, through node, the history.
func clusterFinish(t *testing.T, scenario string, flow *faultFlow, run *proctest.Process, js jetstream.JetStream, node *proctest.NATSServer) {
	t.Helper()
	flow.drain(t, scenario, run)
	clusterBucketFollows(t, js, uint64(flow.sent.Load()))
	c := flow.finish(t, scenario, run)
	c.Check(t)
	if c.Errors != 0 {
		t.Errorf("%d units given up", c.Errors)
	}
	clusterHistoryWhole(t, node, c.Sent)
}

// clusterBucketFollows checks that, with the faults over and every unit answered,
// the bucket holds the port's last unit, stored within 10 s, as the daemon runs. It
// goes by the bucket's own time of the value, not by when the test could read it:
// the JetStream API can be slow to answer a reader just after a node came back (a
// CI run read nothing for 5 s after the meta leader's restart). The bound was 5 s
// with the load stage's tests in one process; beside three other test processes
// and the busy loops (issue 42's load stage) the bucket caught up 5.3 s and 5.9 s
// after the last answer, in two clean-clone runs, with every unit stored: the
// bound says that it follows, not how fast on an oversubscribed machine.
func clusterBucketFollows(t *testing.T, js jetstream.JetStream, sent uint64) {
	t.Helper()
	end := time.Now()
	var stored time.Time
	bustest.Wait(t, "the bucket at the port's last unit, the faults over", func() (bool, string) {
		got, at, err := bucketLatest(js)
		stored = at
		return err == nil && got == sent, fmt.Sprintf("latest board: unit %d of %d (%v)", got, sent, err)
	})
	if late := stored.Sub(end); late > 10*time.Second {
		t.Errorf("the bucket stored the port's last unit %v after the faults' end and the last answer, want within 10 s", late.Round(time.Millisecond))
	}
}

// clusterRun starts `scoreboard run` with its own workers on node, its port named
// desk, and the history at 3 replicas.
func clusterRun(t *testing.T, node *proctest.NATSServer, pt *serialio.PTY) *proctest.Process {
	t.Helper()
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", node.URL(),
		"--history-replicas", "3", "--port-name", "desk", "--port", pt.Path, "--problem", "goscore", "--baud", "115200", "--error-line",
		"--http", "off", "--log-format", "json")
	runWaitOpened(t, pt, run)
	return run
}

// The R3 history holds every result through a sequence of leader changes: the
// stream's leader lost; the lost node back after the stream has moved on, with its
// old store; the new leader lost while the first loss's results are still being
// sent again; then the JetStream meta leader lost. The daemon's node is among
// those killed, so its connection moves too. Every unit is answered right, once;
// the stream holds a result for each, none twice; the bucket follows within 5 s.
func TestFaultClusterLeadersLostInTurn(t *testing.T) {
	const scenario = "cluster-leaders-lost-in-turn"
	nodes := startCluster(t, 3)
	names := map[string]*proctest.NATSServer{"node1": nodes[0], "node2": nodes[1], "node3": nodes[2]}
	pt := runPTY(t)
	run := clusterRun(t, nodes[0], pt)
	run.WaitOutput("scoreboard running", faultPatience)
	nc := busConnect(t, nodes[2].URL())
	busStartWork(t, nc, "--nats-url", nodes[2].URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream := bus.Subjects{Prefix: bus.DefaultPrefix}.Stream()
	leadOn(t, nc, js, stream, "node2")

	flow := startFaultFlow(t, pt, 2*time.Millisecond)
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	current := func(what string) string { return streamCurrent(t, js, stream, what) }
	kill := func(name, why string) {
		names[name].Kill()
		t.Logf("%s (%s) killed after unit %d sent, %d answered", name, why, flow.sent.Load(), flow.answered())
	}
	// 1. The stream's leader lost.
	kill("node2", "the stream's leader")
	var second string
	bustest.Wait(t, "a new leader for the stream", func() (bool, string) {
		second, _ = streamLeader(t, js, stream)
		return second != "" && second != "node2", "leader " + second
	})
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	// 2. It comes back after the stream has moved on, with its old store.
	names["node2"].Start()
	t.Logf("node2 restarted after unit %d sent, %d answered", flow.sent.Load(), flow.answered())
	current("node2 back in the stream's replicas, current")
	// 3. The new leader lost at once: what the first loss refused may still be
	// on its way again.
	if second, _ = streamLeader(t, js, stream); second == "" {
		second = current("a leader for the stream")
	}
	kill(second, "the stream's second leader")
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	names[second].Start()
	current(second + " back in the stream's replicas, current")
	// 4. The meta leader lost.
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	meta := metaLeader(nodes[0], "node1")
	for _, n := range []string{"node2", "node3"} {
		if m := metaLeader(names[n], n); m != "" && meta == "" {
			meta = m
		}
	}
	if names[meta] == nil {
		t.Fatalf("no node names the meta leader (%q)", meta)
	}
	kill(meta, "the meta leader")
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	names[meta].Start()
	current(meta + " back in the stream's replicas, current")
	flow.waitAnswered(t, scenario, flow.answered()+50, run)

	clusterFinish(t, scenario, flow, run, js, nodes[2])
	clusterResent(t, run)
}

// The stream is without a leader (two of its three nodes down) for longer than
// the ordered consumers' resets, twice, while the port plays on the node left: the
// port answers every unit meanwhile, and once the nodes are back the history
// catches up, each result once, and the bucket follows within 5 s.
func TestFaultClusterNoLeaderForLong(t *testing.T) {
	const scenario = "cluster-no-leader-for-long"
	nodes := startCluster(t, 3)
	pt := runPTY(t)
	run := clusterRun(t, nodes[0], pt)
	run.WaitOutput("scoreboard running", faultPatience)
	nc := busConnect(t, nodes[0].URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream := bus.Subjects{Prefix: bus.DefaultPrefix}.Stream()

	flow := startFaultFlow(t, pt, 2*time.Millisecond)
	flow.waitAnswered(t, scenario, flow.answered()+20, run)
	for spell := range 2 {
		nodes[1].Kill()
		nodes[2].Kill()
		t.Logf("spell %d: node2 and node3 killed after unit %d sent, %d answered", spell, flow.sent.Load(), flow.answered())
		// Longer than the ordered consumers' resets (1 s, doubling to 10 s) and
		// the updater's own: 25 s, counted in units answered meanwhile (the port
		// answers from node1's workers), at least 20.
		begin, from := time.Now(), flow.answered()
		for time.Since(begin) < clusterNoLeader || flow.answered() < from+20 {
			flow.waitAnswered(t, scenario, flow.answered()+1, run)
		}
		if l, _ := streamLeader(t, js, stream); l != "" {
			t.Errorf("spell %d: the stream has leader %s with two of its three nodes down", spell, l)
		}
		t.Logf("spell %d: %d units answered without a leader", spell, flow.answered()-from)
		nodes[1].Start()
		nodes[2].Start()
		streamCurrent(t, js, stream, "the stream's replicas current again")
		flow.waitAnswered(t, scenario, flow.answered()+20, run)
	}
	clusterFinish(t, scenario, flow, run, js, nodes[0])
	clusterResent(t, run)
}

// clusterNoLeader is how long TestFaultClusterNoLeaderForLong keeps the stream
// without a leader each time.
const clusterNoLeader = 25 * time.Second

// The stream's leader is killed as the daemon starts, on a stream and bucket a
// daemon made before: the daemon starts all the same, answers every unit, and the
// history catches up.
func TestFaultClusterLeaderKilledAtStart(t *testing.T) {
	const scenario = "cluster-leader-killed-at-start"
	nodes := startCluster(t, 3)
	pt := runPTY(t)
	first := clusterRun(t, nodes[0], pt)
	first.WaitOutput("scoreboard running", faultPatience)
	if err := first.Stop(); err != nil {
		t.Fatalf("the first daemon: %v", err)
	}
	nc := busConnect(t, nodes[0].URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream := bus.Subjects{Prefix: bus.DefaultPrefix}.Stream()
	leadOn(t, nc, js, stream, "node2")
	leadOn(t, nc, js, "KV_"+bus.Subjects{Prefix: bus.DefaultPrefix}.Boards(), "node2")

	pt = runPTY(t)
	run := proctest.Start(t, proctest.Scoreboard(t), "run", "--nats-url", nodes[0].URL(),
		"--history-replicas", "3", "--port-name", "desk", "--port", pt.Path, "--problem", "goscore", "--baud", "115200", "--error-line",
		"--http", "off", "--log-format", "json")
	// Killed as the daemon starts: its set-up of the stream and its readers meet
	// a stream without a leader (an election takes 4 to 9 s).
	nodes[1].Kill()
	t.Logf("node2, the stream's and the bucket's leader, killed as the daemon started")
	runWaitOpened(t, pt, run)
	flow := startFaultFlow(t, pt, 2*time.Millisecond)
	flow.waitAnswered(t, scenario, 20, run)
	nodes[1].Start()
	t.Logf("node2 restarted after unit %d sent, %d answered", flow.sent.Load(), flow.answered())
	streamCurrent(t, js, stream, "the stream's replicas current again")
	flow.waitAnswered(t, scenario, flow.answered()+50, run)
	clusterFinish(t, scenario, flow, run, js, nodes[0])
}
