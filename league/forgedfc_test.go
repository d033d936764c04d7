package league_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/league"
)

// hostileLeaf is a club as an attacker runs it: a stock nats-server in the club's
// JetStream domain, joined to the hub as the club with its own token, with a
// SCOREBOARD the hub sources, and a client listener of its own (no credentials)
// on which the attacker writes raw protocol. It returns the server and a client of it.
func hostileLeaf(t *testing.T, leafURL, club, token string) (*server.Server, *nats.Conn) {
	t.Helper()
	u, err := url.Parse(leafURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(club, token)
	o := &server.Options{ServerName: "hostile-" + club, Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
		JetStream: true, JetStreamDomain: club, StoreDir: t.TempDir()}
	o.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{u}}}
	ns, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("hostile leaf not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SCOREBOARD", Subjects: []string{"scoreboard.>"}}); err != nil {
		t.Fatal(err)
	}
	return ns, nc
}

// rawPub writes one message on addr's client listener as the raw protocol does,
// with a header block that nats.go cannot write (a status line), and waits for the
// server's PONG after it.
func rawPub(t *testing.T, addr, subject, reply, hdr string) {
	t.Helper()
	if err := rawPubErr(addr, subject, reply, hdr); err != nil {
		t.Fatal(err)
	}
}

// rawPubErr is rawPub, its error returned: the server's -ERR among them.
func rawPubErr(addr, subject, reply, hdr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	if _, err := br.ReadString('\n'); err != nil { // INFO
		return err
	}
	fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1}\r\nHPUB %s %s %d %d\r\n%s\r\nPING\r\n",
		subject, reply, len(hdr), len(hdr), hdr)
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("HPUB %s reply %s: %w", subject, reply, err)
		}
		if strings.HasPrefix(l, "PONG") {
			return nil
		}
		if strings.HasPrefix(l, "-ERR") {
			return fmt.Errorf("HPUB %s reply %s: %s", subject, reply, l)
		}
	}
}

const (
	// fcRequest is a flow-control request: the hub's source answers it on its reply.
	fcRequest = "NATS/1.0 100 FlowControl Request\r\n\r\n"
	// stalledHeartbeat is an idle heartbeat saying the consumer waits on flow
	// control: the hub's source answers on the subject in the header.
	stalledHeartbeat = "NATS/1.0 100 Idle Heartbeat\r\nNats-Consumer-Stalled: %s\r\n\r\n"
)

// TestLeagueForgedFlowControlFault plays review F7 as its attack program does: club
// north, with its own token and nothing more, publishes on its own deliver subject
// (read from the hub's source consumer on its own server) flow-control requests
// whose reply subjects, and stalled heartbeats whose Nats-Consumer-Stalled headers,
// name what the hub is to publish on: purge and delete of south's stream and of
// north's own at the hub, consumer deletes on both, a write into the hub's bucket, a
// link state on the page's subjects, a consumer delete in south's domain. Nothing
// of it may happen at the hub: both streams keep every unit, the consumers and the
// bucket are untouched, and the hub's own subscriptions get nothing. The positive
// control: the hub does answer the forged flow control on a flow-control subject
// of north's own ($JS.FC.forged.>), which north receives.
func TestLeagueForgedFlowControlFault(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		name string
		// forge writes one forged control on north's deliver subject, naming target.
		forge func(t *testing.T, addr, deliver, target string)
	}{
		{"reply", func(t *testing.T, addr, deliver, target string) { rawPub(t, addr, deliver, target, fcRequest) }},
		{"stalled", func(t *testing.T, addr, deliver, target string) {
			rawPub(t, addr, deliver, "", fmt.Sprintf(stalledHeartbeat, target))
		}},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			// Its sources looked at, as `scoreboard hub` does: set up again at once
			// when a club's first try came before its link.
			h, _ := startLoggedHub(t, league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"})
			playForgedFlowControl(t, h.LeafURL(), h.Conn(), "tn", "ts", v.forge)
		})
		// The same against a nats-server of configs/league-hub.conf, the hub attached.
		t.Run(v.name+"/conf", func(t *testing.T) {
			t.Parallel()
			leafURL, admin := confHub(t)
			playForgedFlowControl(t, leafURL, admin, "n", "s", v.forge)
		})
	}
}

// confHub runs a nats-server of configs/league-hub.conf in process (its ports random,
// its store the test's) with the league attached by its admin: the leaf URL and
// the admin's connection.
func confHub(t *testing.T) (string, *nats.Conn) {
	t.Helper()
	// Its secrets written in (t.Setenv is not for parallel tests).
	conf, err := os.ReadFile("../configs/league-hub.conf")
	if err != nil {
		t.Fatal(err)
	}
	c := strings.NewReplacer("$LEAGUE_ADMIN_PASSWORD", `"a"`, "$LEAGUE_TOKEN_NORTH", `"n"`, "$LEAGUE_TOKEN_SOUTH", `"s"`).Replace(string(conf))
	path := filepath.Join(t.TempDir(), "league-hub.conf")
	if err := os.WriteFile(path, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port, opts.StoreDir, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, t.TempDir(), true, true
	opts.LeafNode.Host, opts.LeafNode.Port = "127.0.0.1", server.RANDOM_PORT
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("a nats-server with configs/league-hub.conf not ready")
	}
	admin, err := nats.Connect(ns.ClientURL(), nats.UserInfo("admin", "a"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := league.Attach(ctx, admin, []league.Club{{Name: "north", Token: "n"}, {Name: "south", Token: "s"}}, 1, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	// As `scoreboard hub --nats-url` does: its sources looked at, set up again when idle.
	wctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go h.WatchLinks(wctx, 200*time.Millisecond)
	return fmt.Sprintf("nats-leaf://127.0.0.1:%d", opts.LeafNode.Port), admin
}

func playForgedFlowControl(t *testing.T, leafURL string, hub *nats.Conn, northToken, southToken string, forge func(t *testing.T, addr, deliver, target string)) {
	hostile, hnc := hostileLeaf(t, leafURL, "north", northToken)
	_, south := startClub(t, leafURL, "south", southToken)
	const nNorth, nSouth = 5, 10
	for i := range nSouth {
		if err := south.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "south unit %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range nNorth {
		if err := hnc.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "north unit %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	south.Flush()
	hnc.Flush()
	bustest.Wait(t, "both clubs' units at the hub", func() (bool, string) {
		n, s := countLeague(t, hub, "north"), countLeague(t, hub, "south")
		return n == nNorth && s == nSouth, fmt.Sprintf("LEAGUE_NORTH %d of %d, LEAGUE_SOUTH %d of %d", n, nNorth, s, nSouth)
	})
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	js, _ := jetstream.New(hub)
	// What north aims at, at the hub: a durable consumer on each stream, the bucket.
	for _, club := range []string{"north", "south"} {
		if _, err := js.CreateOrUpdateConsumer(ctx, league.ClubStream(club), jetstream.ConsumerConfig{Durable: "watch", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: league.Bucket, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	var atHub atomic.Int64
	var seenAtHub atomic.Value
	seenAtHub.Store("")
	for _, s := range []string{"league.port.>", "$JS.south.API.CONSUMER.DELETE.SCOREBOARD.forged", "probe.>"} {
		sub, err := hub.Subscribe(s, func(m *nats.Msg) { atHub.Add(1); seenAtHub.Store(m.Subject) })
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	hub.Flush()
	// The control: north's own flow-control subjects, where the hub's answers go.
	var control atomic.Int64
	csub, err := hnc.Subscribe("$JS.FC.forged.>", func(*nats.Msg) { control.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer csub.Unsubscribe()
	hnc.Flush()
	// north's deliver subject, as the attacker reads it: where its own server
	// sends the hub's source consumer's heartbeats (each second).
	var deliver atomic.Value
	dsub, err := hnc.Subscribe("$LEAGUE.north.>", func(m *nats.Msg) { deliver.Store(m.Subject) })
	if err != nil {
		t.Fatal(err)
	}
	defer dsub.Unsubscribe()
	bustest.Wait(t, "a heartbeat of the hub's consumer on north's stream", func() (bool, string) {
		return deliver.Load() != nil, "none on $LEAGUE.north.>"
	})
	// The stream deletes go last, after a control: they take the source away.
	targets := []string{
		"$JS.API.STREAM.PURGE.LEAGUE_SOUTH", "$JS.API.STREAM.PURGE.LEAGUE_NORTH",
		"$JS.API.CONSUMER.DELETE.LEAGUE_SOUTH.watch", "$JS.API.CONSUMER.DELETE.LEAGUE_NORTH.watch",
		"$KV." + league.Bucket + ".south.t1", "league.port.south.t1", "probe.fc",
		"$JS.south.API.CONSUMER.DELETE.SCOREBOARD.forged",
	}
	deletes := []string{"$JS.API.STREAM.DELETE.LEAGUE_SOUTH", "$JS.API.STREAM.DELETE.LEAGUE_NORTH"}
	addr := hostile.Addr().String()
	d := deliver.Load().(string)
	// A control: the hub's source answers in order, so its answer comes after it
	// has published every forged one sent before.
	controls := 0
	controlled := func(gone bool) {
		t.Helper()
		controls++
		forge(t, addr, d, fmt.Sprintf("$JS.FC.forged.%d", controls))
		bustest.Wait(t, "the hub's answer to north's forged control", func() (bool, string) {
			return control.Load() >= int64(controls) || gone && countLeague(t, hub, "north") < 0,
				fmt.Sprintf("%d answers on north's $JS.FC.forged.>, want %d", control.Load(), controls)
		})
	}
	controlled(false)
	for _, target := range targets {
		forge(t, addr, d, target)
	}
	controlled(false)
	var harm []string
	for club, want := range map[string]int{"north": nNorth, "south": nSouth} {
		if n := countLeague(t, hub, club); n != want {
			harm = append(harm, fmt.Sprintf("before the deletes, %s held %d units, want %d", league.ClubStream(club), n, want))
		}
	}
	for _, target := range deletes {
		forge(t, addr, d, target)
	}
	controlled(true)
	// A round trip through the hub's JetStream API after the forgeries.
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatal(err)
	}
	for club, want := range map[string]int{"north": nNorth, "south": nSouth} {
		if n := countLeague(t, hub, club); n != want {
			harm = append(harm, fmt.Sprintf("%s holds %d units, want %d (-1: deleted)", league.ClubStream(club), n, want))
		}
		if _, err := js.Consumer(ctx, league.ClubStream(club), "watch"); err != nil {
			harm = append(harm, fmt.Sprintf("the consumer watch on %s: %v", league.ClubStream(club), err))
		}
	}
	if st, err := kv.Status(ctx); err != nil || st.Values() != 0 {
		n := uint64(0)
		if err == nil {
			n = st.Values()
		}
		harm = append(harm, fmt.Sprintf("the bucket %s: %d values, %v", league.Bucket, n, err))
	}
	if n := atHub.Load(); n != 0 {
		harm = append(harm, fmt.Sprintf("%d messages published at the hub on its subscriptions (last %s)", n, seenAtHub.Load()))
	}
	if len(harm) > 0 {
		t.Fatalf("club north's forged flow control (%d answers on its own side) acted at the hub: %s", control.Load(), strings.Join(harm, "; "))
	}
}

// TestLeagueIntakeDeletedByClub: what a club's forged flow control can still reach
// is its own intake, in its own account. Club north deletes it so; the hub makes it
// again where north's stream stands, and north's next units come, each once, after
// the ones it had.
func TestLeagueIntakeDeletedByClub(t *testing.T) {
	t.Parallel()
	h, log := startLoggedHub(t, league.Club{Name: "north", Token: "tn"})
	hostile, hnc := hostileLeaf(t, h.LeafURL(), "north", "tn")
	units := func(from, to int) {
		for i := from; i <= to; i++ {
			if err := hnc.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d", i)); err != nil {
				t.Fatal(err)
			}
		}
		hnc.Flush()
	}
	units(1, 3)
	bustest.Wait(t, "north's 3 units", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 3, fmt.Sprintf("%d units", n)
	})
	var deliver atomic.Value
	dsub, err := hnc.Subscribe("$LEAGUE.north.>", func(m *nats.Msg) { deliver.Store(m.Subject) })
	if err != nil {
		t.Fatal(err)
	}
	defer dsub.Unsubscribe()
	bustest.Wait(t, "a heartbeat of the hub's consumer on north's stream", func() (bool, string) {
		return deliver.Load() != nil, "none on $LEAGUE.north.>"
	})
	rawPub(t, hostile.Addr().String(), deliver.Load().(string), "$JS.API.STREAM.DELETE."+league.IntakeStream("north"), fcRequest)
	bustest.Wait(t, "north's intake made again", func() (bool, string) {
		return strings.Contains(log.String(), "intake was gone"), "not in the hub's log"
	})
	units(4, 6)
	bustest.Wait(t, "north's 6 units", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 6, fmt.Sprintf("%d units", n)
	})
	for i, m := range leagueMsgs(t, h.Conn(), "north") {
		if string(m.Data) != fmt.Sprintf("unit %d", i+1) {
			t.Fatalf("north's unit %d is %q: lost, twice or out of order", i+1, m.Data)
		}
	}
}

// TestLeagueIntakeAfterUpgrade: a hub from before the clubs' accounts sourced a club
// straight into LEAGUE_<CLUB> (its units' Nats-Stream-Source header names the club's
// SCOREBOARD and its sequence). Upgraded, the club's new intake starts after that
// sequence: the club's next units come once each, none of its first again.
func TestLeagueIntakeAfterUpgrade(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old, err := league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: store}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(old.Conn())
	// LEAGUE_NORTH as the earlier hub left it, north's units 1 to 5 in it, sourced
	// from a stream named as a club's history (the header then names it and its
	// sequences, as a club's across its domain did).
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SCOREBOARD", Subjects: []string{"scoreboard.>"}}); err != nil {
		t.Fatal(err)
	}
	publishUnits(t, old.Conn(), 1, 5)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: league.ClubStream("north"), Sources: []*jetstream.StreamSource{{
		Name: "SCOREBOARD", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "scoreboard.>", Destination: "league.north.>"}},
	}}}); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "north's 5 units in the earlier hub's stream", func() (bool, string) {
		n := countLeague(t, old.Conn(), "north")
		return n == 5, fmt.Sprintf("%d units", n)
	})
	if err := js.DeleteStream(ctx, "SCOREBOARD"); err != nil {
		t.Fatal(err)
	}
	old.Shutdown()
	h, err := league.Start(ctx, league.Options{Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: store, Clubs: []league.Club{{Name: "north", Token: "tn"}}}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	go h.WatchLinks(wctx, 200*time.Millisecond)
	_, north := startClub(t, h.LeafURL(), "north", "tn")
	publishUnits(t, north, 1, 10)
	bustest.Wait(t, "north's 10 units", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n == 10, fmt.Sprintf("%d units", n)
	})
	for i, m := range leagueMsgs(t, h.Conn(), "north") {
		if string(m.Data) != fmt.Sprintf("unit %d", i+1) {
			t.Fatalf("north's unit %d is %q: lost, twice or out of order", i+1, m.Data)
		}
	}
}

// TestLeagueIntakeForgedAck: the consumer by which a club's stream at the hub takes
// the club's intake (a work queue) is acked by its flow control replies, and its
// acks, on $JS.ACK.INTAKE_<CLUB>.>, are in the club's own account: north's forged
// control makes the hub answer there, acking every unit of north's intake up to a
// sequence far ahead. That harms north's own units only (as by not sending them):
// south's all come, north's that come come once each, in order, none of another,
// and north's intake does not fill with units let go of by no one.
func TestLeagueIntakeForgedAck(t *testing.T) {
	t.Parallel()
	h, _ := startLoggedHub(t, league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"})
	hostile, hnc := hostileLeaf(t, h.LeafURL(), "north", "tn")
	_, south := startClub(t, h.LeafURL(), "south", "ts")
	publishUnits(t, hnc, 1, 5)
	publishUnits(t, south, 1, 5)
	bustest.Wait(t, "both clubs' 5 units", func() (bool, string) {
		n, s := countLeague(t, h.Conn(), "north"), countLeague(t, h.Conn(), "south")
		return n == 5 && s == 5, fmt.Sprintf("north %d, south %d", n, s)
	})
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	ijs := league.IntakeJS(h, "north")
	var consumer string
	bustest.Wait(t, "the consumer on north's intake", func() (bool, string) {
		s, err := ijs.Stream(ctx, league.IntakeStream("north"))
		if err != nil {
			return false, err.Error()
		}
		names := s.ConsumerNames(ctx)
		for n := range names.Name() {
			consumer = n
		}
		return consumer != "", "none"
	})
	// The ack of a unit far ahead: every one up to it acked, taken or not. A club's
	// own server refuses a reply subject under $JS.ACK. from its clients (as
	// nats-server does any reserved reply): forged across the link it takes a
	// server of the club's making. Its effect, the hub's answer published in
	// north's account, is played by a connection there.
	ack := fmt.Sprintf("$JS.ACK.%s.%s.1.1000000.1000000.%d.0", league.IntakeStream("north"), consumer, time.Now().UnixNano())
	var deliver atomic.Value
	dsub, err := hnc.Subscribe("$LEAGUE.north.>", func(m *nats.Msg) { deliver.Store(m.Subject) })
	if err != nil {
		t.Fatal(err)
	}
	defer dsub.Unsubscribe()
	bustest.Wait(t, "a heartbeat of the hub's consumer on north's stream", func() (bool, string) {
		return deliver.Load() != nil, "none on $LEAGUE.north.>"
	})
	if err := rawPubErr(hostile.Addr().String(), deliver.Load().(string), ack, fcRequest); err == nil || !strings.Contains(err.Error(), "Permissions Violation") {
		t.Fatalf("north's own server let its client forge a reply on %s: %v", ack, err)
	}
	in := league.AccountConn(t, h, "north")
	if err := in.Publish(ack, nil); err != nil {
		t.Fatal(err)
	}
	in.Flush()
	publishUnits(t, hnc, 6, 20)
	publishUnits(t, south, 6, 20)
	bustest.Wait(t, "south's 20 units; north's intake let go of all of north's", func() (bool, string) {
		s, st := countLeague(t, h.Conn(), "south"), intakeState(h, "north")
		return s == 20 && st.LastSeq == 20 && st.Msgs == 0, fmt.Sprintf("south %d; north's intake %d units, last seq %d", s, st.Msgs, st.LastSeq)
	})
	if says := onceEach(t, h.Conn(), "south", 20); says != "" {
		t.Fatalf("south's units after north's forged ack: %s", says)
	}
	msgs := leagueMsgs(t, h.Conn(), "north")
	last := 0
	for _, m := range msgs {
		var i int
		if _, err := fmt.Sscanf(string(m.Data), "unit %d", &i); err != nil || i <= last {
			t.Fatalf("north's units after its forged ack (%d): %q after unit %d: not north's, twice or out of order", len(msgs), m.Data, last)
		}
		last = i
	}
	t.Logf("north's units at the hub after its forged ack: %d of 20", len(msgs))
}
