package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
