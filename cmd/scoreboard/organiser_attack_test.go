package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/serialio"
)

// organiserDaemon is a real `scoreboard run` with a pty port at table 1 and its
// page on, for the organiser's tests.
type organiserDaemon struct {
	run        *proctest.Process
	state, url string // its state dir and NATS URL (loopback)
	page       string
	port       int // its NATS listener's port
}

// startOrganiserDaemon starts a daemon listening on listenHost with the worker
// token, a pty port "lobby" at table 1, and its page.
func startOrganiserDaemon(t *testing.T, listenHost, token string) (*organiserDaemon, *serialio.PTY) {
	t.Helper()
	pt := runPTY(t)
	d := &organiserDaemon{state: t.TempDir(), port: proctest.FreePort(t)}
	d.url = "nats://127.0.0.1:" + strconv.Itoa(d.port)
	web := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	d.page = "http://" + web
	d.run = proctest.Start(t, proctest.Scoreboard(t), "run", "--daemon-state-dir", d.state,
		"--nats-listen", net.JoinHostPort(listenHost, strconv.Itoa(d.port)), "--nats-listen-token", token, "--http-listen", web,
		"--port", pt.Path, "--port-name", "lobby", "--problem", "goscore", "--port-baud", "115200", "--port-table", "1")
	runWaitOpened(t, pt, d.run)
	d.run.WaitOutput("scoreboard running", 60*time.Second)
	return d, pt
}

// pairingsRevision is the pairings bucket's stream's last sequence: every write
// of the bucket raises it.
func pairingsRevision(t *testing.T, url string) uint64 {
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
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, "KV_"+bus.Subjects{Prefix: bus.DefaultPrefix}.Pairings())
	if err != nil {
		t.Fatalf("the pairings bucket's stream: %v", err)
	}
	return s.CachedInfo().State.LastSeq
}

// organiserLoad is a pairings load request of one game at table 1, black named.
func organiserLoad(black string) []byte {
	data, _ := json.Marshal(pairing.Load{File: "attack", Round: pairing.Round{Info: pairing.Info{Round: 1},
		Games: []pairing.Game{{Table: 1, Black: pairing.Player{Name: black}, White: pairing.Player{Name: "w"}}}}})
	return data
}

// rawLoad publishes a load on the daemon's listener at addr by the protocol itself,
// with connect's JSON as the CONNECT line, and returns the server's first answer to
// it: a -ERR line, or the MSG line of the daemon's reply.
func rawLoad(t *testing.T, addr, connect string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	if _, err := r.ReadString('\n'); err != nil { // INFO
		t.Fatal(err)
	}
	body := organiserLoad("raw")
	fmt.Fprintf(c, "CONNECT %s\r\nSUB _INBOX.raw.1 1\r\nPUB %s _INBOX.raw.1 %d\r\n%s\r\nPING\r\n",
		connect, pairing.LoadSubject(bus.DefaultPrefix), len(body), body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return "no answer: " + err.Error()
		}
		if strings.HasPrefix(line, "-ERR") || strings.HasPrefix(line, "MSG") {
			return strings.TrimSpace(line)
		}
	}
}

// refusedLoad requests a load by nats.go, logged in with opts, and returns what
// came first: the server's refusal (an asynchronous error) or the daemon's answer.
func refusedLoad(t *testing.T, url string, opts ...nats.Option) string {
	t.Helper()
	errs := make(chan error, 8)
	nc, err := nats.Connect(url, append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errs <- err:
		default:
		}
	}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	inbox := nats.NewInbox()
	replies, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest(pairing.LoadSubject(bus.DefaultPrefix), inbox, organiserLoad("nats.go")); err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		if m, err := replies.NextMsg(30 * time.Second); err == nil {
			answered <- "answered " + string(m.Data)
		}
	}()
	select {
	case err := <-errs:
		return err.Error()
	case a := <-answered:
		return a
	case <-time.After(30 * time.Second):
		return "neither refused nor answered within 30s"
	}
}

// TestOrganiserToolCannotLoad: a tool without credentials on the daemon's
// loopback listener may no longer load a round: by the nats CLI, by nats.go and
// by the raw protocol, each is refused by the server (a permissions violation),
// and the pairings bucket's revision is what it was.
func TestOrganiserToolCannotLoad(t *testing.T) {
	proctest.SkipShort(t, "a daemon process attacked by a tool")
	d, _ := startOrganiserDaemon(t, "127.0.0.1", "worker-token-"+bus.NewOrigin())
	before := pairingsRevision(t, d.url)

	// The CLI reports the server's refusal, then waits out its timeout (and exits 0):
	// the refusal, and no answer, are what count.
	out, err := exec.CommandContext(t.Context(), proctest.NATSCLI(t), "--server", d.url, "--timeout", "2s",
		"req", pairing.LoadSubject(bus.DefaultPrefix), string(organiserLoad("cli"))).CombinedOutput()
	if !strings.Contains(strings.ToLower(string(out)), "permissions violation") || strings.Contains(string(out), "Received") {
		t.Errorf("nats req %s as a tool: %v, %s; want a permissions violation and no answer", pairing.LoadSubject(bus.DefaultPrefix), err, out)
	}

	if got := refusedLoad(t, d.url); !strings.Contains(strings.ToLower(got), "permissions violation") {
		t.Errorf("a tool's request by nats.go: %s; want a permissions violation", got)
	}
	if got := rawLoad(t, strings.TrimPrefix(d.url, "nats://"), `{"verbose":false}`); !strings.Contains(got, "Permissions Violation for Publish") {
		t.Errorf("a tool's raw publish: %q; want -ERR 'Permissions Violation for Publish ...'", got)
	}
	if after := pairingsRevision(t, d.url); after != before {
		t.Errorf("the pairings bucket's revision went from %d to %d: a tool wrote it", before, after)
	}
}

// TestOrganiserWrongCredentials: every wrong credential is refused, and the
// bucket is unchanged: a wrong password for the organiser; the organiser's
// password under another user, or as a token; the worker's token (a worker may
// not load); and a file that holds no password is an error naming it.
func TestOrganiserWrongCredentials(t *testing.T) {
	proctest.SkipShort(t, "a daemon process attacked with wrong credentials")
	token := "worker-token-" + bus.NewOrigin()
	d, _ := startOrganiserDaemon(t, "127.0.0.1", token)
	file := filepath.Join(d.state, bus.OrganiserFile)
	pw, err := bus.ReadOrganiserFile(file)
	if err != nil {
		t.Fatalf("the daemon's organiser file: %v", err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the organiser file: %v, mode %v; want 0640", err, fi.Mode().Perm())
	}
	before := pairingsRevision(t, d.url)
	addr := strings.TrimPrefix(d.url, "nats://")

	for _, c := range []struct {
		what string
		opts []nats.Option
	}{
		{"a wrong password", []nats.Option{nats.UserInfo(bus.RoleOrganiser, pw+"x")}},
		{"an empty password", []nats.Option{nats.UserInfo(bus.RoleOrganiser, "")}},
		{"the password's first half", []nats.Option{nats.UserInfo(bus.RoleOrganiser, pw[:len(pw)/2])}},
		{"the password as user daemon", []nats.Option{nats.UserInfo(bus.RoleDaemon, pw)}},
		{"the password as user tool", []nats.Option{nats.UserInfo(bus.RoleTool, pw)}},
		{"the password as a token", []nats.Option{nats.Token(pw)}},
	} {
		if nc, err := nats.Connect(d.url, c.opts...); err == nil {
			nc.Close()
			t.Errorf("%s: connected; want an authorization violation", c.what)
		} else if !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
			t.Errorf("%s: %v; want an authorization violation", c.what, err)
		}
	}
	// The raw protocol with a wrong password: no connection, no load.
	if got := rawLoad(t, addr, `{"verbose":false,"user":"organiser","pass":"guess"}`); !strings.Contains(got, "Authorization Violation") {
		t.Errorf("a raw load with a wrong password: %q; want -ERR 'Authorization Violation'", got)
	}
	// An nkey beside the right password: refused (the organiser is its password alone).
	nkey := fmt.Sprintf(`{"verbose":false,"user":"organiser","pass":%q,"nkey":"UAFQDXTD3A4RNOWRWZYHWEQ3X4MFXRVOWT2HRBJD4VG2UFQ4HVMU7H4W","sig":"AAAA"}`, pw)
	if got := rawLoad(t, addr, nkey); !strings.Contains(got, "Authorization Violation") {
		t.Errorf("a raw load with an nkey beside the right password: %q; want -ERR 'Authorization Violation'", got)
	}
	// The worker's credentials let in, as a worker, which may not load.
	if got := rawLoad(t, addr, fmt.Sprintf(`{"verbose":false,"auth_token":%q}`, token)); !strings.Contains(got, "Permissions Violation for Publish") {
		t.Errorf("a raw load with the worker's token: %q; want a permissions violation", got)
	}
	if got := refusedLoad(t, d.url, nats.Token(token)); !strings.Contains(strings.ToLower(got), "permissions violation") {
		t.Errorf("a worker's request by nats.go: %s; want a permissions violation", got)
	}
	// The command with a file of no password, or another file than the daemon's.
	bin := proctest.Scoreboard(t)
	csv, _ := filepath.Abs("../../pairing/testdata/round.csv")
	junk := filepath.Join(t.TempDir(), "junk")
	if err := os.WriteFile(junk, []byte("not a password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := pairingsLoad(t, bin, "--nats-url", d.url, "--credentials", junk, csv); code == 0 || !strings.Contains(out, junk) {
		t.Errorf("pairings load --credentials %s (no password in it): exit %d: %s; want an error naming the file", junk, code, out)
	}
	other := filepath.Join(t.TempDir(), bus.OrganiserFile)
	if _, err := bus.EnsureOrganiserFile(filepath.Dir(other)); err != nil {
		t.Fatal(err)
	}
	if code, out := pairingsLoad(t, bin, "--nats-url", d.url, "--credentials", other, csv); code == 0 || !strings.Contains(out, "Authorization Violation") ||
		!strings.Contains(out, "refused the organiser's password of "+other) {
		t.Errorf("pairings load with another daemon's file: exit %d: %s; want an authorization violation naming the file", code, out)
	}
	empty := t.TempDir()
	for _, c := range []struct {
		what string
		args []string
		code int
		want string
	}{
		{"a state dir with no file", []string{"--daemon-state-dir", empty}, 1, filepath.Join(empty, bus.OrganiserFile) + ": the daemon makes"},
		{"--credentials with --league", []string{"--league", "--credentials", other}, 2, "a league hub's tools log in with none"},
		{"--credentials with --nats-user", []string{"--nats-user", "organiser", "--credentials", other}, 2, "give one of them"},
	} {
		if code, out := pairingsLoad(t, bin, append(append([]string{"--nats-url", d.url}, c.args...), csv)...); code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d: %s; want exit %d saying %q", c.what, code, out, c.code, c.want)
		}
	}
	if after := pairingsRevision(t, d.url); after != before {
		t.Errorf("the pairings bucket's revision went from %d to %d: a wrong credential wrote it", before, after)
	}
	// A JWT beside the right password is not refused: nats-server discards it
	// outside operator mode before the daemon sees it (trust.md says so), and
	// the client is the organiser on its password alone.
	jwt := fmt.Sprintf(`{"verbose":false,"user":"organiser","pass":%q,"jwt":"eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.AAAA"}`, pw)
	if got := rawLoad(t, addr, jwt); !strings.HasPrefix(got, "MSG _INBOX.raw.1") {
		t.Errorf("a raw load with a JWT beside the right password: %q; want it answered (the JWT ignored)", got)
	}
}

// TestOrganiserLoadsEndToEnd: `scoreboard pairings load FILE` with the state dir
// finds the daemon's organiser file and loads the round: the page's /api/boards
// shows lobby's players once a unit is read. Run as a user who cannot read the
// file (nobody), it says which file and what to do, and loads nothing.
func TestOrganiserLoadsEndToEnd(t *testing.T) {
	proctest.SkipShort(t, "a daemon process and the organiser's command")
	d, port := startOrganiserDaemon(t, "127.0.0.1", "worker-token-"+bus.NewOrigin())
	bin := proctest.Scoreboard(t)
	evry, _ := filepath.Abs("../../pairing/testdata/evry.xml")
	before := pairingsRevision(t, d.url)

	if os.Geteuid() == 0 {
		code, out := runAsNobody(t, bin, evry, "pairings", "load", "--nats-url", d.url, "--daemon-state-dir", d.state)
		t.Logf("as nobody: exit %d: %s", code, out)
		file := filepath.Join(d.state, bus.OrganiserFile)
		if code == 0 || !strings.Contains(out, file) || !strings.Contains(out, "--credentials") || !strings.Contains(out, "root") {
			t.Errorf("pairings load as nobody: exit %d: %s; want an error naming %s, root and --credentials", code, out, file)
		}
		if after := pairingsRevision(t, d.url); after != before {
			t.Errorf("the bucket's revision went from %d to %d after a refused load", before, after)
		}
	} else {
		t.Log("not root: the unreadable file's error is not tried")
	}

	if code, out := pairingsLoad(t, bin, "--nats-url", d.url, "--daemon-state-dir", d.state, evry); code != 0 ||
		!strings.Contains(out, "table 1 on lobby: Jürgen Müller-Straße (3k) - 王小明 (1d)") {
		t.Fatalf("pairings load: exit %d:\n%s", code, out)
	}
	if after := pairingsRevision(t, d.url); after <= before {
		t.Errorf("the bucket's revision is %d after the organiser's load, %d before", after, before)
	}
	in, _ := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	if _, err := port.Master.Write(in); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "lobby's board with its players on /api/boards", func() (bool, string) {
		var got []struct {
			Port string
			Game *struct{ Black, White struct{ Name string } }
		}
		getJSON(t, d.page+"/api/boards", &got)
		for _, b := range got {
			if b.Port == "lobby" && b.Game != nil && b.Game.Black.Name == "Jürgen Müller-Straße" && b.Game.White.Name == "王小明" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", got)
	})
}

// TestOrganiserLoopbackOnly: on a daemon listening beyond loopback (0.0.0.0,
// with the worker token), the organiser's right password is taken from a client
// on loopback, and refused from the machine's other address: the organiser's
// file is on this machine, and a password goes in clear on the listener.
func TestOrganiserLoopbackOnly(t *testing.T) {
	proctest.SkipShort(t, "a daemon process listening beyond loopback")
	ext := externalAddr(t)
	d, _ := startOrganiserDaemon(t, "0.0.0.0", "worker-token-"+bus.NewOrigin())
	pw, err := bus.ReadOrganiserFile(filepath.Join(d.state, bus.OrganiserFile))
	if err != nil {
		t.Fatal(err)
	}
	far := "nats://" + net.JoinHostPort(ext, strconv.Itoa(d.port))
	if nc, err := nats.Connect(far, nats.UserInfo(bus.RoleOrganiser, pw)); err == nil {
		nc.Close()
		t.Errorf("the organiser from %s: connected; want refused beyond loopback", ext)
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Errorf("the organiser from %s: %v; want an authorization violation", ext, err)
	}
	nc, err := nats.Connect(d.url, nats.UserInfo(bus.RoleOrganiser, pw))
	if err != nil {
		t.Fatalf("the organiser on loopback: %v", err)
	}
	defer nc.Close()
	rep, err := pairing.Request(t.Context(), nc, pairing.LoadSubject(bus.DefaultPrefix), pairing.Load{File: "x", Round: pairing.Round{
		Info: pairing.Info{Round: 1}, Games: []pairing.Game{{Table: 1, Black: pairing.Player{Name: "b"}, White: pairing.Player{Name: "w"}}}}}, 30*time.Second)
	if err != nil || rep.Ports[1] != "lobby" {
		t.Errorf("the organiser's load on loopback: %+v, %v; want table 1 on lobby", rep, err)
	}
}

// externalAddr is an address of this machine beyond loopback, or the test is
// skipped.
func externalAddr(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no IPv4 address beyond loopback")
	return ""
}

// runAsNobody runs a copy of bin as the user nobody, with file (copied beside
// it, where nobody may read) as the last argument: a user who may not read the
// daemon's state dir.
func runAsNobody(t *testing.T, bin, file string, args ...string) (int, string) {
	t.Helper()
	return runAs(t, 65534, 65534, bin, file, args...)
}

// runAs is runAsNobody as the user uid with the group gid.
func runAs(t *testing.T, uid, gid uint32, bin, file string, args ...string) (int, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "organiser-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyTo := func(from, to string, mode os.FileMode) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	nbin, nfile := filepath.Join(dir, "scoreboard"), filepath.Join(dir, filepath.Base(file))
	copyTo(bin, nbin, 0o755)
	copyTo(file, nfile, 0o644)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nbin, append(args, nfile)...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("run as nobody: %v: %s", err, out)
	}
	return 0, string(out)
}

// asOrganiser is the nats.go option that logs in as the organiser of the
// daemon whose state dir is state.
func asOrganiser(t *testing.T, state string) nats.Option {
	t.Helper()
	pw, err := bus.ReadOrganiserFile(filepath.Join(state, bus.OrganiserFile))
	if err != nil {
		t.Fatalf("the daemon's organiser file: %v", err)
	}
	return nats.UserInfo(bus.RoleOrganiser, pw)
}
