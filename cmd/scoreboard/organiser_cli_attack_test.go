package main

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/proctest"
)

// fakeServer listens on host as a NATS server asking for credentials, and keeps
// each CONNECT line a client sends it: what a squatter on the address would learn.
type fakeServer struct {
	addr     string
	mu       sync.Mutex
	connects []string
}

func startFakeServer(t *testing.T, host string) *fakeServer {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f := &fakeServer{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				c.Write([]byte(`INFO {"server_id":"fake","version":"2.15.2","proto":1,"headers":true,"auth_required":true,"max_payload":1048576}` + "\r\n"))
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					return
				}
				f.mu.Lock()
				f.connects = append(f.connects, line)
				f.mu.Unlock()
				c.Write([]byte("-ERR 'Authorization Violation'\r\n"))
			}()
		}
	}()
	return f
}

func (f *fakeServer) sawPassword(pw string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.connects {
		if strings.Contains(c, pw) {
			return true
		}
	}
	return false
}

// TestOrganiserPasswordStaysLocal (review F3): the password `pairings load` reads
// from the daemon's state dir goes to a loopback server only. To a server beyond
// loopback, named by --nats-url or by $SCOREBOARD_NATS_URL (alone or in a list),
// the command refuses before it connects, saying why and what to do, and the
// server (a fake one that keeps each CONNECT) never sees the password. With an
// explicit --credentials FILE and URL, it does connect: the user chose both.
func TestOrganiserPasswordStaysLocal(t *testing.T) {
	proctest.SkipShort(t, "the organiser's command against a fake server beyond loopback")
	ext := externalAddr(t)
	state := t.TempDir()
	pw, err := bus.EnsureOrganiserFile(state)
	if err != nil {
		t.Fatal(err)
	}
	far := startFakeServer(t, ext)
	farURL := "nats://" + far.addr
	bin := proctest.Scoreboard(t)
	csv, _ := filepath.Abs("../../pairing/testdata/round.csv")
	run := func(env []string, args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append([]string{"pairings", "load"}, args...), csv)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatalf("pairings load: %v: %s", err, out)
		}
		return 0, string(out)
	}
	local := "nats://127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	for _, c := range []struct {
		what string
		env  []string
		args []string
	}{
		{"--nats-url beyond loopback", nil, []string{"--daemon-state-dir", state, "--nats-url", farURL}},
		{"$SCOREBOARD_NATS_URL beyond loopback", []string{"SCOREBOARD_NATS_URL=" + farURL}, []string{"--daemon-state-dir", state}},
		{"a list with one beyond loopback", nil, []string{"--daemon-state-dir", state, "--nats-url", local + "," + farURL}},
		{"a host name", nil, []string{"--daemon-state-dir", state, "--nats-url", "nats://" + net.JoinHostPort("squatter.invalid", "4222")}},
	} {
		code, out := run(c.env, c.args...)
		if code == 0 || !strings.Contains(out, "loopback") || !strings.Contains(out, "--credentials") {
			t.Errorf("%s: exit %d: %s; want a refusal naming loopback and --credentials", c.what, code, out)
		}
	}
	if far.sawPassword(pw) {
		t.Errorf("the server beyond loopback got the state dir's password")
	}
	// The user's own choice: --credentials FILE and an explicit URL.
	code, out := run(nil, "--credentials", filepath.Join(state, bus.OrganiserFile), "--nats-url", farURL)
	if code == 0 || !far.sawPassword(pw) {
		t.Errorf("--credentials with --nats-url %s: exit %d: %s; want it connected (and refused by the fake server)", farURL, code, out)
	}
}
