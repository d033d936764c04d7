package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/certtest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/sdnotifytest"
)

// TestHubCheck: scoreboard hub --check, scoreboard-hub.service's ExecStartPre=,
// passes a good file with one line and exits 0, and refuses each bad one with the
// very errors and exit status scoreboard hub itself gives on it: a bad club, a
// token others may read, a leaf certificate that is no certificate, and a pair
// whose key is another certificate's.
func TestHubCheck(t *testing.T) {
	bin := proctest.Scoreboard(t)
	dir := t.TempDir()
	ca := certtest.NewCA(t, dir, "ca")
	good := ca.Server("hub", "127.0.0.1")
	other := ca.Server("other", "127.0.0.1")
	notCert := filepath.Join(dir, "not.crt")
	if err := os.WriteFile(notCert, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"off\"\nstate_dir = %q\n",
		proctest.FreePort(t), proctest.FreePort(t), filepath.Join(dir, "state"))
	tokenClub := "[[club]]\nname = \"south\"\ntoken = \"token-south\"\n"
	tlsLines := func(p certtest.Pair) string {
		return fmt.Sprintf("leaf_tls_cert = %q\nleaf_tls_key = %q\n", p.Cert, p.Key)
	}
	write := func(name, body string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}

	path := write("good.toml", head+tlsLines(good)+tokenClub, 0o600)
	out, err := exec.Command(bin, "hub", "--check", "--config", path).CombinedOutput()
	if want := path + ": good: 1 clubs, the leaf listener's certificate read\n"; err != nil || string(out) != want {
		t.Errorf("hub --check on a good file: %v\n got %q\nwant %q", err, out, want)
	}

	for _, c := range []struct {
		name, body string
		mode       os.FileMode
		code       int
		want       string
	}{
		{"bad-club.toml", head + "[[club]]\nname = \"North\"\n", 0o600, 1, "name: want lowercase letters"},
		{"readable.toml", head + tokenClub, 0o644, 2, "others may read the clubs' tokens in it"},
		{"not-cert.toml", head + tlsLines(certtest.Pair{Cert: notCert, Key: good.Key}) + tokenClub, 0o600, 1, "hub: leaf TLS"},
		{"not-pair.toml", head + tlsLines(certtest.Pair{Cert: good.Cert, Key: other.Key}) + tokenClub, 0o600, 1, "hub: leaf TLS"},
	} {
		path := write(c.name, c.body, c.mode)
		check := exec.Command(bin, "hub", "--check", "--config", path)
		checkOut, checkErr := check.CombinedOutput()
		hub := exec.Command(bin, "hub", "--config", path)
		hubOut, _ := hub.CombinedOutput()
		if check.ProcessState.ExitCode() != c.code || hub.ProcessState.ExitCode() != c.code {
			t.Errorf("%s: hub --check exit %d (%v), hub exit %d; want %d for both\n--check: %s\nhub: %s",
				c.name, check.ProcessState.ExitCode(), checkErr, hub.ProcessState.ExitCode(), c.code, checkOut, hubOut)
		}
		if !strings.Contains(string(checkOut), c.want) || string(checkOut) != string(hubOut) {
			t.Errorf("%s: hub --check said\n%s\nhub said\n%s\nwant the same, with %q", c.name, checkOut, hubOut, c.want)
		}
	}
}

// TestHubNotifiesSystemd runs the hub as scoreboard-hub.service does, with a
// notify socket and a watchdog: READY=1 once it listens, WATCHDOG=1 while its
// server answers, STATUS= with the clubs linked of the clubs, which SIGHUP's file
// changes, and STOPPING=1 on SIGTERM.
func TestHubNotifiesSystemd(t *testing.T) {
	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	t.Setenv("WATCHDOG_USEC", "400000") // a ping every 200 ms
	t.Setenv("WATCHDOG_PID", "")
	club := func(name string) string {
		return fmt.Sprintf("[[club]]\nname = %q\ntoken = \"token-%s\"\n", name, name)
	}
	hub, _, write := hubWithFile(t, "", club("north"))
	const long = 30 * time.Second
	sock.WaitFor(t, "READY=1", long)
	// The first status and the first ping both follow READY=1, in either order:
	// the status is looked for first (it is sent once, on a change), pings go on.
	nextMatching(t, sock, long, "the status of one club", func(m string) bool {
		return sdnotifytest.Has(m, "STATUS=0 of 1 clubs linked")
	})
	sock.WaitFor(t, "WATCHDOG=1", long)

	write(club("north") + club("south"))
	if err := hub.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	nextMatching(t, sock, long, "the status of two clubs after SIGHUP", func(m string) bool {
		return sdnotifytest.Has(m, "STATUS=0 of 2 clubs linked")
	})
	sock.WaitFor(t, "WATCHDOG=1", long)

	if err := hub.Stop(); err != nil {
		t.Errorf("hub exited with %v after SIGTERM; output:\n%s", err, hub.Output())
	}
	sock.WaitFor(t, "STOPPING=1", long)
}

// TestHubWatchdogWithoutItsServer: a hub on a nats-server of its own (--nats-url,
// configs/league-hub.conf) stops its WATCHDOG=1 pings, with an unhealthy status
// that says why, while that server is gone, and pings again once it is back: the
// health check is a round trip, not a constant.
func TestHubWatchdogWithoutItsServer(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	conf, err := os.ReadFile("../../configs/league-hub.conf")
	if err != nil {
		t.Fatal(err)
	}
	c := strings.Replace(string(conf), "listen: 0.0.0.0:7422", fmt.Sprintf("listen: 127.0.0.1:%d", proctest.FreePort(t)), 1)
	c = strings.Replace(c, `store_dir: "/var/lib/nats-league"`, fmt.Sprintf("store_dir: %q", filepath.Join(root, "js")), 1)
	confPath := filepath.Join(root, "league-hub.conf")
	if err := os.WriteFile(confPath, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEAGUE_ADMIN_PASSWORD", "admin-secret")
	t.Setenv("LEAGUE_TOKEN_NORTH", "token-north")
	t.Setenv("LEAGUE_TOKEN_SOUTH", "token-south")
	srv := proctest.StartNATS(t, proctest.NATSOptions{Config: confPath, Name: "league-hub"})
	hubConf := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(hubConf, []byte("[league]\nhttp = \"off\"\n[[club]]\nname = \"north\"\ntoken = \"token-north\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	sock := sdnotifytest.Listen(t)
	t.Setenv("NOTIFY_SOCKET", sock.Path())
	t.Setenv("WATCHDOG_USEC", "400000") // a ping every 200 ms
	t.Setenv("WATCHDOG_PID", "")
	hub := proctest.Start(t, bin, "hub", "--config", hubConf, "--nats-url", srv.URL(), "--nats-user", "admin", "--nats-password", "admin-secret", "--log-format", "json")
	const long = 30 * time.Second
	sock.WaitFor(t, "READY=1", long)
	sock.WaitFor(t, "WATCHDOG=1", long)

	srv.Stop()
	msg, _ := nextMatching(t, sock, long, "an unhealthy status", func(m string) bool {
		return strings.HasPrefix(m, "STATUS=unhealthy: ")
	})
	t.Logf("while the hub's server is gone: %q", msg)
	quiet := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(quiet) {
		m, err := sock.Next(time.Until(quiet))
		if err != nil {
			break
		}
		if sdnotifytest.Has(m, "WATCHDOG=1") {
			t.Fatalf("WATCHDOG=1 sent while the hub's server was gone")
		}
	}

	srv.Start()
	sock.WaitFor(t, "WATCHDOG=1", long)
	if err := hub.Stop(); err != nil {
		t.Errorf("hub exited with %v after SIGTERM; output:\n%s", err, hub.Output())
	}
}
