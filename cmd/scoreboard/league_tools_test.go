package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
)

// toolAttacker is a client of the hub's tools' listener, without credentials,
// that counts the server's refusals of what it publishes and subscribes.
type toolAttacker struct {
	nc                *nats.Conn
	pubDenied, subDen atomic.Int64
}

func newToolAttacker(t *testing.T, url string) *toolAttacker {
	t.Helper()
	a := &toolAttacker{}
	nc, err := nats.Connect(url, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		switch s := err.Error(); {
		case strings.Contains(s, "Permissions Violation for Publish"):
			a.pubDenied.Add(1)
		case strings.Contains(s, "Permissions Violation for Subscription"):
			a.subDen.Add(1)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	a.nc = nc
	return a
}

// hubBoard is a tile of the league page's /api/boards, with its link state.
type hubBoard struct {
	Port  string `json:"port"`
	State *struct {
		State string `json:"state"`
		Since string `json:"since"`
	} `json:"state"`
}

// TestLeagueToolRightsFault: a tool (no credentials, the hub's loopback listener)
// as the review's attacker, against a real `scoreboard hub` and two real clubs.
// F2: it publishes a link state for north's port and a tile of a club that does not
// exist: the page must show neither. F4: it listens for north's source's deliver
// subject and consumer name, and makes a push consumer on LEAGUE_SOUTH of that name
// deliver there: LEAGUE_NORTH must hold only north's subjects, and every unit north
// answers afterwards. Then the nats CLI's reads still work as a tool.
func TestLeagueToolRightsFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hubPort, leafPort, httpPort := proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)
	conf := filepath.Join(root, "hub.toml")
	writeFile(t, conf, fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\n"+
		"[[club]]\nname = \"north\"\ntoken = \"token-north\"\n[[club]]\nname = \"south\"\ntoken = \"token-south\"\n",
		hubPort, leafPort, httpPort, filepath.Join(root, "hub")))
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	leaf := fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)
	north := startLeagueClub(t, bin, "north", leaf, filepath.Join(root, "north"), 0)
	south := startLeagueClub(t, bin, "south", leaf, filepath.Join(root, "south"), 1000)
	// south ahead of north: the injected deliveries then pass the source's checks.
	south.feed(10)
	north.feed(3)
	south.answered(60 * time.Second)
	north.answered(60 * time.Second)
	toolsURL := fmt.Sprintf("nats://127.0.0.1:%d", hubPort)
	page := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	bustest.Wait(t, "north's 3 and south's 10 results at the hub", func() (bool, string) {
		n, s := streamUnits(t, toolsURL, "LEAGUE_NORTH"), streamUnits(t, toolsURL, "LEAGUE_SOUTH")
		return n.results["north"] == 3 && s.results["south"] == 10, fmt.Sprintf("north %v, south %v", n, s)
	})
	bustest.Wait(t, "north's tile linked on the page", func() (bool, string) {
		var boards []hubBoard
		getJSON(t, page+"/api/boards", &boards)
		for _, b := range boards {
			if b.Port == "north.stdio" && b.State != nil && b.State.State == "linked" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("boards %+v", boards)
	})

	toolForgesStates(t, newToolAttacker(t, toolsURL), page)
	toolRedirectsSource(t, newToolAttacker(t, toolsURL), north, toolsURL)
	natsCLIReads(t, toolsURL)
}

// toolForgesStates is F2: the tool publishes link states, again and again while the
// page is read 40 times; the page shows none of them.
func toolForgesStates(t *testing.T, a *toolAttacker, page string) {
	forged := map[string]string{
		"league.port.north.stdio": `{"port":"north.stdio","state":"link down","since":"2020-01-01T00:00:00Z"}`,
		"league.port.fake.x":      `{"port":"ghostclub.board9","state":"league suspended - pay at evil.example","since":"2026-01-01T00:00:00Z"}`,
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for subj, data := range forged {
				a.nc.Publish(subj, []byte(data))
			}
			a.nc.Flush()
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	ghosts, downs := 0, 0
	for range 40 {
		var boards []hubBoard
		getJSON(t, page+"/api/boards", &boards)
		for _, b := range boards {
			if !strings.HasPrefix(b.Port, "north.") && !strings.HasPrefix(b.Port, "south.") {
				ghosts++
			}
			if b.Port == "north.stdio" && b.State != nil && b.State.State != "linked" {
				downs++
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if ghosts+downs > 0 {
		t.Errorf("F2: a tool's publishes on league.port: in 40 reads of /api/boards, %d tiles of a club that does not exist, %d forged states of north.stdio (the server refused %d publishes)",
			ghosts, downs, a.pubDenied.Load())
	}
	if a.pubDenied.Load() == 0 {
		t.Errorf("F2: the server refused none of the tool's publishes on league.port")
	}
}

// toolRedirectsSource is F4: the tool listens for north's source's deliveries at
// the hub and, if it learns their subject and consumer, makes a push consumer of
// that name on LEAGUE_SOUTH deliver there. Then north answers 3 units more: all
// are in LEAGUE_NORTH, which holds nothing of south's.
func toolRedirectsSource(t *testing.T, a *toolAttacker, north *leagueClub, url string) {
	subs := map[string]*nats.Subscription{}
	for _, s := range []string{"$LEAGUE.north.>", ">", "$JS.EVENT.>", "$JS.north.API.>"} {
		sub, err := a.nc.SubscribeSync(s)
		if err != nil {
			t.Fatal(err)
		}
		subs[s] = sub
	}
	a.nc.Flush()
	north.feed(2)
	north.answered(60 * time.Second)
	bustest.Wait(t, "north's 5 results at the hub", func() (bool, string) {
		n := streamUnits(t, url, "LEAGUE_NORTH")
		return n.results["north"] == 5, fmt.Sprintf("north %v", n)
	})
	a.nc.Flush()
	// The deliveries carry the consumer's name in their ack reply; the source's
	// idle heartbeats come on its deliver subject.
	var deliver, consumer string
	seen := 0
	deadline := time.Now().Add(20 * time.Second)
	for (deliver == "" || consumer == "") && time.Now().Before(deadline) {
		for _, sub := range subs {
			m, err := sub.NextMsg(20 * time.Millisecond)
			if err != nil {
				continue
			}
			seen++
			if strings.HasPrefix(m.Subject, "$LEAGUE.north.S.") {
				deliver = m.Subject
			}
			if c := ackConsumer(m.Reply); strings.HasPrefix(m.Reply, "$JS.ACK.SCOREBOARD.") && c != "" {
				consumer = c
			}
		}
		if seen == 0 && a.subDen.Load() == int64(len(subs)) {
			break // every subscription refused: nothing comes
		}
	}
	t.Logf("F4: the tool received %d messages; learned deliver subject %q, consumer %q; the server refused %d of its subscriptions", seen, deliver, consumer, a.subDen.Load())
	info, err := a.nc.Request("$JS.API.STREAM.INFO.LEAGUE_NORTH", nil, 5*time.Second)
	if err != nil || !strings.Contains(string(info.Data), `"LEAGUE_NORTH"`) {
		t.Fatalf("F4: a tool's stream info of LEAGUE_NORTH: %v", err)
	}
	if deliver != "" {
		req, _ := json.Marshal(map[string]any{"stream_name": "LEAGUE_SOUTH", "config": map[string]any{
			"name": consumer, "deliver_subject": deliver, "ack_policy": "none", "deliver_policy": "all"}})
		m, err := a.nc.Request("$JS.API.CONSUMER.CREATE.LEAGUE_SOUTH", req, 5*time.Second)
		t.Logf("F4: the push consumer %s onto %s: %v %.200s", consumer, deliver, err, msgData(m))
	}
	north.feed(3)
	north.answered(60 * time.Second)
	var last unitCount
	deadline = time.Now().Add(30 * time.Second)
	for {
		last = streamUnits(t, url, "LEAGUE_NORTH")
		if last.results["north"] == 8 && last.dumps["north"] == 8 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	foreign := last.total - last.dumps["north"] - last.results["north"]
	if foreign != 0 || last.results["north"] != 8 || last.dumps["north"] != 8 {
		t.Errorf("F4: LEAGUE_NORTH holds %d dumps and %d results of north's 8 units, and %d messages not north's (%v): a tool redirected a stream into north's source",
			last.dumps["north"], last.results["north"], foreign, last)
	}
}

// ackConsumer is the consumer named in a JetStream ack reply subject (v1 or v2).
func ackConsumer(reply string) string {
	tok := strings.Split(reply, ".")
	switch {
	case len(tok) == 9:
		return tok[3]
	case len(tok) >= 11:
		return tok[5]
	}
	return ""
}

func msgData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}

// unitCount is what a club's stream at the hub holds: dumps and results by the
// club their subject names, and all messages.
type unitCount struct {
	dumps, results map[string]int
	total          int
}

// streamUnits counts a stream's messages, as a tool reads them.
func streamUnits(t *testing.T, url, stream string) unitCount {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := unitCount{dumps: map[string]int{}, results: map[string]int{}}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return u
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		return u
	}
	for subj, n := range info.State.Subjects {
		u.total += int(n)
		club, rest, err := league.ParseSubject(subj)
		switch {
		case err != nil:
		case strings.HasPrefix(rest, "dump."):
			u.dumps[club] += int(n)
		case strings.HasPrefix(rest, "result."):
			u.results[club] += int(n)
		}
	}
	return u
}

// natsCLIReads: the official nats CLI, as a tool of the hub, reads the clubs'
// streams and the league's bucket (stream info and get, kv ls and get: direct gets
// and an ordered push consumer with flow control), and may not write the bucket.
func natsCLIReads(t *testing.T, url string) {
	cli := proctest.NATSCLI(t)
	home := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(cli, append([]string{"--server", url, "--timeout", "5s"}, args...)...)
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("stream", "info", "LEAGUE_NORTH", "--json"); err != nil || !strings.Contains(out, `"messages": 16`) {
		t.Errorf("nats stream info LEAGUE_NORTH: %v\n%s", err, out)
	}
	if out, err := run("stream", "get", "LEAGUE_NORTH", "1"); err != nil || !strings.Contains(out, "league.north.") {
		t.Errorf("nats stream get LEAGUE_NORTH 1: %v\n%s", err, out)
	}
	out, err := run("kv", "ls", "LEAGUE_BOARDS")
	if err != nil || !strings.Contains(out, "north") {
		t.Fatalf("nats kv ls LEAGUE_BOARDS: %v\n%s", err, out)
	}
	key := ""
	for _, f := range strings.Fields(out) {
		if strings.Contains(f, "north") {
			key = f
		}
	}
	if out, err := run("kv", "get", "LEAGUE_BOARDS", key, "--raw"); err != nil || !strings.Contains(out, `"seq"`) {
		t.Errorf("nats kv get LEAGUE_BOARDS %s: %v\n%s", key, err, out)
	}
	if out, err := run("kv", "put", "LEAGUE_BOARDS", key, "forged"); err == nil {
		t.Errorf("nats kv put LEAGUE_BOARDS %s: a tool wrote the league's bucket\n%s", key, out)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
