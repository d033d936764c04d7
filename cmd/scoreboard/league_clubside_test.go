package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// fakeHub is a plain nats-server with a leaf listener that lets in the club
// "victim" with the token "x": a hub an attacker runs (or took), with nothing of
// the league's in it, whose clients send down the club's link what they like.
type fakeHub struct {
	srv  *proctest.NATSServer
	nc   *nats.Conn // a client of the fake hub: the attacker
	leaf string     // the club's --hub-url
}

func startFakeHub(t *testing.T, root string) *fakeHub {
	t.Helper()
	leafPort := proctest.FreePort(t)
	conf := filepath.Join(root, "fakehub.conf")
	c := fmt.Sprintf("leafnodes {\n  host: 127.0.0.1\n  port: %d\n  authorization { user: victim, password: x }\n}\n", leafPort)
	if err := os.WriteFile(conf, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := proctest.StartNATS(t, proctest.NATSOptions{Config: conf, Name: "fakehub"})
	// Its inboxes are not _INBOX: the club takes nothing on _INBOX from its hub
	// (the sourcing's replies come on $JSC.R.<club>), and the attacker picks any.
	nc := busConnect(t, srv.URL(), nats.CustomInboxPrefix("fake"))
	return &fakeHub{srv: srv, nc: nc, leaf: fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)}
}

// startVictim starts a real `scoreboard run` club "victim" joined to the fake hub,
// its NATS listener on a known port, and waits for its link. It returns the club
// and a connection to the club's own server.
func startVictim(t *testing.T, bin string, hub *fakeHub, dir string) (*leagueClub, *nats.Conn) {
	t.Helper()
	port := proctest.FreePort(t)
	club := startLeagueClubAs(t, bin, "victim", "x", hub.leaf, dir, 0, "--nats-listen", fmt.Sprintf("127.0.0.1:%d", port))
	bustest.Wait(t, "the victim's link to the fake hub up", func() (bool, string) {
		return strings.Contains(club.errb.String(), "league hub link up"), "log: " + lastLines(club.errb.String(), 5)
	})
	// The club's JetStream API seen from the hub: its domain's interest has come
	// across the link.
	bustest.Wait(t, "the victim's JetStream reachable from the fake hub", func() (bool, string) {
		m, err := hub.nc.Request("$JS.victim.API.INFO", nil, time.Second)
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(string(m.Data), "account_info_response"), string(m.Data)
	})
	return club, busConnect(t, fmt.Sprintf("nats://127.0.0.1:%d", port))
}

// TestLeagueHubSysRequestAttack (review F5): the hub may not query the club's
// server for its connections or stats: $SYS.REQ.ACCOUNT.PING.CONNZ and STATZ sent
// down the link get no answer from the club within 2 s.
func TestLeagueHubSysRequestAttack(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hub := startFakeHub(t, root)
	_, _ = startVictim(t, bin, hub, filepath.Join(root, "victim"))
	replies, err := hub.nc.SubscribeSync("leak.reply")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"$SYS.REQ.ACCOUNT.PING.CONNZ", "$SYS.REQ.ACCOUNT.PING.STATZ"} {
		if err := hub.nc.PublishRequest(s, "leak.reply", []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	var fromClub, all int
	for {
		m, err := replies.NextMsg(2 * time.Second)
		if errors.Is(err, nats.ErrTimeout) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		all++
		// The fake hub's own server answers its own account's ping too.
		var r struct {
			Server struct{ Name string } `json:"server"`
		}
		if json.Unmarshal(m.Data, &r) == nil && r.Server.Name == "scoreboard-victim" {
			fromClub++
			t.Logf("the club answered: %.300s", m.Data)
		}
	}
	t.Logf("replies: %d, from the club: %d", all, fromClub)
	if fromClub > 0 {
		t.Errorf("the club's server answered %d $SYS requests from the hub", fromClub)
	}
}

// TestSeedFileFIFO (review F8): a seed file that is a FIFO (mode 0600) is refused
// at once, naming it, and the daemon exits; it does not hang in open(2).
func TestSeedFileFIFO(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	fifo := filepath.Join(root, "seed.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	p := proctest.Start(t, bin, "run", "--hub-url", "nats-leaf://127.0.0.1:1", "--hub-club", "victim", "--hub-seed-file", fifo,
		"--port-device", "-", "--port-problem", "goscore", "--nats-listen", "127.0.0.1:0", "--http-listen", "off",
		"--daemon-state-dir", filepath.Join(root, "state"), "--log-format", "json")
	select {
	case <-p.Done():
	case <-time.After(15 * time.Second):
		t.Fatalf("scoreboard run with a FIFO as its seed file still runs after 15 s; output: %q", p.Output())
	}
	var ee *exec.ExitError
	if err := p.Err(); !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Errorf("exit: %v, want a non-zero status", err)
	}
	out := p.Output()
	t.Logf("exit %v: %s", p.Err(), out)
	if !strings.Contains(out, fifo) || !strings.Contains(out, "not a regular file") {
		t.Errorf("the error does not name the file and what is wrong: %q", out)
	}
}
