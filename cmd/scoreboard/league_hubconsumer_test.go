package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// solveRequests is the workers' goscore endpoint's request count ($SRV.STATS).
func solveRequests(t *testing.T, nc *nats.Conn) int {
	t.Helper()
	m, err := nc.Request("$SRV.STATS.scoreboard", nil, 5*time.Second)
	if err != nil {
		t.Fatalf("$SRV.STATS: %v", err)
	}
	var st struct {
		Endpoints []struct {
			Subject     string `json:"subject"`
			NumRequests int    `json:"num_requests"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(m.Data, &st); err != nil {
		t.Fatalf("$SRV.STATS: %v: %s", err, m.Data)
	}
	for _, e := range st.Endpoints {
		if strings.HasSuffix(e.Subject, ".solve.goscore") {
			return e.NumRequests
		}
	}
	t.Fatalf("$SRV.STATS: no goscore endpoint: %s", m.Data)
	return 0
}

// hostileConsumers lists the consumers on the club's SCOREBOARD that a hub may not
// make: durable, with a deliver group, or delivering outside $LEAGUE.victim.
func hostileConsumers(t *testing.T, nc *nats.Conn) []string {
	t.Helper()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, "SCOREBOARD")
	if err != nil {
		t.Fatalf("the club's stream: %v", err)
	}
	var bad []string
	l := s.ListConsumers(ctx)
	for ci := range l.Info() {
		c := ci.Config
		if c.Durable != "" || c.DeliverGroup != "" || (c.DeliverSubject != "" && !strings.HasPrefix(c.DeliverSubject, "$LEAGUE.victim.") && !strings.HasPrefix(c.DeliverSubject, "_INBOX.")) {
			bad = append(bad, fmt.Sprintf("%s(durable %q group %q deliver %q)", ci.Name, c.Durable, c.DeliverGroup, c.DeliverSubject))
		}
	}
	if err := l.Err(); err != nil {
		t.Fatalf("the club's consumers: %v", err)
	}
	return bad
}

// TestLeagueHubConsumerAttack (review F3): a fake hub creates, down the club's
// link, consumers on the club's SCOREBOARD that deliver its whole history into the
// workers' queue group: a durable, ephemerals, each form of the create request.
// The attack comes after the hub's restart (the link joined again). The forms the
// sourcing does not use are refused by the link; those made in its form are
// deleted at once (within 5 s, logged), so the workers solve each at most once
// over the history, and the units played after the link is gone are solved once.
func TestLeagueHubConsumerAttack(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hub := startFakeHub(t, root)
	club, cnc := startVictim(t, bin, hub, filepath.Join(root, "victim"))
	club.feed(20)
	club.answered(60 * time.Second)
	// The hub comes back once: the link's next connection sets the domain's
	// mappings again, and the guard must stay in front of them.
	hub.srv.Restart()
	bustest.Wait(t, "the victim's JetStream reachable from the fake hub again", func() (bool, string) {
		m, err := hub.nc.Request("$JS.victim.API.INFO", nil, time.Second)
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(string(m.Data), "account_info_response"), string(m.Data)
	})
	before := solveRequests(t, cnc)
	js, _ := jetstream.New(cnc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, "SCOREBOARD")
	if err != nil {
		t.Fatal(err)
	}
	held := stream.CachedInfo().State.Msgs

	body := func(cfg string) []byte {
		if !strings.Contains(cfg, "deliver_subject") {
			cfg += `,"deliver_subject":"scoreboard.solve.goscore","deliver_group":"scoreboard-workers"`
		}
		return []byte(`{"stream_name":"SCOREBOARD","config":{` + cfg + `,"deliver_policy":"all","ack_policy":"none"}}`)
	}
	api := "$JS.victim.API.CONSUMER."
	attacks := []struct{ subject, cfg string }{
		{api + "CREATE.SCOREBOARD.evil", `"durable_name":"evil","name":"evil","filter_subject":"scoreboard.dump.>"`},
		{api + "CREATE.SCOREBOARD", `"filter_subject":"scoreboard.dump.>"`},
		{api + "CREATE.SCOREBOARD", `"filter_subject":"scoreboard.>"`},
		{api + "CREATE.SCOREBOARD.evil2.scoreboard.dump.>", `"name":"evil2","filter_subject":"scoreboard.dump.>"`},
		{api + "CREATE.SCOREBOARD.evil3.scoreboard.>", `"name":"evil3","filter_subject":"scoreboard.>"`},
		{api + "CREATE.SCOREBOARD.evil4.scoreboard.>", `"durable_name":"evil4","name":"evil4","filter_subject":"scoreboard.>"`},
		{api + "DURABLE.CREATE.SCOREBOARD.evil5", `"durable_name":"evil5","filter_subject":"scoreboard.>"`},
		// No deliver group: onto the workers' solve subject, and onto a port's dumps.
		{api + "CREATE.SCOREBOARD.evil6.scoreboard.>", `"name":"evil6","filter_subject":"scoreboard.>","deliver_subject":"scoreboard.solve.goscore"`},
		{api + "CREATE.SCOREBOARD.evil7.scoreboard.>", `"name":"evil7","filter_subject":"scoreboard.>","deliver_subject":"scoreboard.dump.goscore.table9"`},
		// The sourcing's kind of consumer, but named as another club's deliveries.
		{api + "CREATE.SCOREBOARD.evil8.scoreboard.>", `"name":"evil8","filter_subject":"scoreboard.>","deliver_subject":"$LEAGUE.south.S.x"`},
	}
	created := 0
	for _, a := range attacks {
		m, err := hub.nc.Request(a.subject, body(a.cfg), 2*time.Second)
		switch {
		case err != nil:
			t.Logf("%s: %v", a.subject, err)
		case strings.Contains(string(m.Data), `"error"`):
			t.Logf("%s: %s", a.subject, m.Data)
		default:
			created++
			t.Logf("%s: created", a.subject)
		}
	}
	var bad []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		if bad = hostileConsumers(t, cnc); len(bad) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// What the workers were handed by then: the consumers that lived a moment may
	// have delivered what they had before they went; a consumer kept hands on all.
	after := solveRequests(t, cnc)
	t.Logf("created %d of %d; goscore requests %d -> %d; hostile consumers left: %v", created, len(attacks), before, after, bad)
	if len(bad) > 0 {
		t.Errorf("hostile consumers left on the club's stream after 5 s: %v", bad)
	}
	// Each consumer made in the sourcing's own request form lives until the guard
	// sees it, and may hand the workers the stream once; none is kept, so none
	// hands on a second time.
	if bound := created * int(held); after-before > bound {
		t.Errorf("the workers solved %d replays of the club's history (bound %d: %d consumers made, once each over %d messages)", after-before, bound, created, held)
	}

	// The link gone, new units are solved once each.
	hub.srv.Stop()
	club.feed(2)
	club.answered(60 * time.Second)
	if again := solveRequests(t, cnc); again != after {
		t.Errorf("2 units played with the link down made the goscore endpoint count %d more requests", again-after)
	}
	if bad := hostileConsumers(t, cnc); len(bad) > 0 {
		t.Errorf("hostile consumers on the club's stream with the link down: %v", bad)
	}
	if n := strings.Count(club.errb.String(), `"component":"hub link guard"`); n == 0 {
		t.Errorf("the club refused or deleted consumers without a word in its log")
	}
}
