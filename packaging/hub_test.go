package packaging

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/certtest"
	"github.com/goclub/scoreboard/internal/proctest"
)

const hubUnit = "/usr/lib/systemd/system/scoreboard-hub.service"

// The league's hub from the package, in a fresh Debian root, by docs/league.md's
// "A hub on a rented server", whose commands it reads and runs in order: the club's
// unit enabled by the install and the hub's not; the hub's unit passing
// systemd-analyze verify; the unit's own ExecStartPre= and ExecStart= lines, run as
// its user with its credentials (certbot's layout, the key root's and 0600) and
// environment, start the hub on the package's example file in TLS; then on the file
// as the walkthrough edits it, with the page in HTTPS; the unit's ExecReload= lets
// in a club whose key `scoreboard hub key` made, and the club's daemon links over
// TLS; a renewed certificate and certbot's deploy hook put the new pair on the page
// and the club links again. The root has no systemd running, so the test does what
// systemd would with the unit's lines (hubService), not systemctl.
func TestChrootHub(t *testing.T) {
	t.Parallel()
	d := findDist(t)
	needTool(t, "mmdebstrap", "chroot", "systemd-analyze")
	if os.Geteuid() != 0 {
		need(t, "chroot needs root")
	}
	root := freshRoot(t, "SCOREBOARD_PACKAGE_HUB_ROOT")
	deb := filepath.Base(d.deb("amd64"))
	copyFile(t, d.deb("amd64"), filepath.Join(root, "root", deb))
	ca := certtest.NewCA(t, t.TempDir(), "league-ca")
	copyFile(t, ca.File, filepath.Join(root, "tmp/league-ca.crt"))

	var (
		hub    *hubProcess
		svc    hubService
		domain string
		hook   string
		club   *exec.Cmd
		edited bool
	)
	// The machine's ports, free now, rather than the file's, which other programs
	// on a shared machine may hold: the same for every start.
	ports := hubPorts{proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)}
	for _, line := range walkthrough(t) {
		cmd := strings.TrimPrefix(line, "sudo ")
		switch {
		case strings.HasPrefix(cmd, "apt install ./scoreboard_<version>_amd64.deb"):
			chroot(t, root, "cd /root && "+strings.Replace(line, "<version>", d.version, 1)+" --yes")
			hubInstalled(t, root)
			svc = readHubService(t, root)
		case cmd == "apt install ufw", cmd == "apt install certbot", strings.HasPrefix(cmd, "ufw "):
			t.Logf("%q: the internet, or the kernel's firewall: not run in the root", line)
		case strings.HasPrefix(cmd, "certbot certonly "):
			domain, hook = certbotArgs(t, cmd)
			certbot(t, root, ca, domain, 1)
		case cmd == "systemctl disable --now scoreboard", cmd == "systemctl status scoreboard-hub":
			t.Logf("%q needs systemd running: not run in the root", line)
		case cmd == "systemctl enable --now scoreboard-hub":
			chroot(t, root, "SYSTEMD_OFFLINE=1 systemctl.distrib enable scoreboard-hub.service")
			if got := chroot(t, root, "systemctl is-enabled scoreboard-hub || true"); got != "enabled\n" {
				t.Errorf("after %q, systemctl is-enabled scoreboard-hub: %q", line, got)
			}
			hub = svc.start(t, root, ports)
			leafTLSRequired(t, ports.leaf)
			pageGet(t, ca, ports.page, 1)
		case cmd == "systemctl reload scoreboard-hub":
			svc.reload(t, root, hub)
			hub.waitLog(t, "SIGHUP: clubs reloaded", 1)
			club = startClub(t, root, ports.leaf)
			hub.waitLinkUp(t, "north", 1)
		case strings.HasPrefix(cmd, "curl "):
			// From the organiser's machine; here, the page on its port, with the CA.
			pageGet(t, ca, ports.page, 1)
		case strings.HasPrefix(cmd, "sed -i "), strings.HasPrefix(cmd, "ln -s "),
			strings.HasPrefix(cmd, "scoreboard hub key "), strings.HasPrefix(cmd, "shred "):
			if strings.HasPrefix(cmd, "sed -i ") && !edited {
				// The package's example file as it is, with the pair in place.
				edited = true
				example := svc.start(t, root, ports)
				leafTLSRequired(t, ports.leaf)
				example.stop(t)
			}
			chroot(t, root, "cd /root && "+line)
		default:
			t.Fatalf("docs/league.md, \"A hub on a rented server\", has %q, which this test does not run", line)
		}
	}
	if hub == nil || club == nil || hook == "" {
		t.Fatalf("the walkthrough did not start the hub (%v), let a club in (%v) or give certbot a deploy hook (%q)", hub != nil, club != nil, hook)
	}
	if _, err := os.Stat(filepath.Join(root, "root/north.seed")); err == nil {
		t.Error("the walkthrough left the club's seed at the hub")
	}
	fi, err := os.Stat(filepath.Join(root, "etc/scoreboard/league-hub.toml"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after the walkthrough's edits, league-hub.toml: %v, %v; want mode 0600", fi, err)
	}

	// A renewal: certbot's second pair behind the same live links, then its deploy
	// hook. The page shows the new certificate, and the club links again.
	certbot(t, root, ca, domain, 2)
	if hook != "systemctl try-restart scoreboard-hub" {
		t.Fatalf("certbot's deploy hook is %q; this test runs systemctl try-restart scoreboard-hub (stop, start)", hook)
	}
	hub.stop(t)
	hub = svc.start(t, root, ports)
	pageGet(t, ca, ports.page, 2)
	hub.waitLinkUp(t, "north", 1)
}

// hubPorts are the ports the test gives the hub's listeners.
type hubPorts struct{ tools, leaf, page, metrics int }

// walkthrough returns the commands of docs/league.md's "A hub on a rented server":
// each sh block's lines in order, a line ending in \ joined to the next, comments
// dropped.
func walkthrough(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/league.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## A hub on a rented server\n")
	if !ok {
		t.Fatal(`docs/league.md has no section "A hub on a rented server"`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var cmds []string
	for {
		var block string
		if _, sec, ok = strings.Cut(sec, "```sh\n"); !ok {
			break
		}
		block, sec, _ = strings.Cut(sec, "```")
		block = strings.ReplaceAll(block, "\\\n", "")
		for line := range strings.SplitSeq(block, "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				cmds = append(cmds, strings.Join(strings.Fields(line), " "))
			}
		}
	}
	if len(cmds) == 0 {
		t.Fatal(`docs/league.md, "A hub on a rented server", has no sh block`)
	}
	return cmds
}

// hubInstalled checks what the install left for the hub: its unit, its user, its
// file (a conffile, the user's, 0600), the club's unit enabled and the hub's not,
// and the hub's unit passing systemd-analyze verify.
func hubInstalled(t *testing.T, root string) {
	t.Helper()
	if got := chroot(t, root, "systemctl is-enabled scoreboard"); got != "enabled\n" {
		t.Errorf("systemctl is-enabled scoreboard: %q", got)
	}
	if got := chroot(t, root, "systemctl is-enabled scoreboard-hub || true"); got != "disabled\n" {
		t.Errorf("systemctl is-enabled scoreboard-hub: %q, want disabled", got)
	}
	if got := chroot(t, root, "stat -c '%a %U:%G' "+hubUnit+" /etc/scoreboard/league-hub.toml"); got != "644 root:root\n600 scoreboard-hub:scoreboard-hub\n" {
		t.Errorf("the hub's unit and file: %q, want 644 root:root and 600 scoreboard-hub:scoreboard-hub", got)
	}
	if got := chroot(t, root, "dpkg-query --show --showformat='${Conffiles}' scoreboard"); !strings.Contains(got, "/etc/scoreboard/league-hub.toml ") {
		t.Errorf("conffiles: %q, want league-hub.toml", got)
	}
	if out, err := exec.Command("systemd-analyze", "verify", "--root="+root, hubUnit).CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("systemd-analyze verify --root %s: %v\n%s", hubUnit, err, out)
	}
	if got := chroot(t, root, "systemd-analyze verify "+hubUnit+" 2>&1"); got != "" {
		t.Errorf("systemd-analyze verify %s in the root:\n%s", hubUnit, got)
	}
}

// certbotArgs is the domain and the deploy hook of the walkthrough's certbot line.
func certbotArgs(t *testing.T, cmd string) (domain, hook string) {
	t.Helper()
	_, d, _ := strings.Cut(cmd, " -d ")
	domain, _, _ = strings.Cut(d, " ")
	_, h, _ := strings.Cut(cmd, " --deploy-hook '")
	hook, _, _ = strings.Cut(h, "'")
	if domain == "" || hook == "" {
		t.Fatalf("the walkthrough's certbot line %q: want -d DOMAIN and --deploy-hook 'COMMAND'", cmd)
	}
	return domain, hook
}

// certbot stands in for certbot's n-th certificate for domain: a pair of the
// test's CA for domain and 127.0.0.1, laid out as certbot does, archive/ and
// live/ root's and 0700, the key 0600, the live names links to the n-th files.
func certbot(t *testing.T, root string, ca *certtest.CA, domain string, n int) {
	t.Helper()
	pair := ca.Server(fmt.Sprintf("hub%d", n), domain, "127.0.0.1")
	archive := filepath.Join("/etc/letsencrypt/archive", domain)
	live := filepath.Join("/etc/letsencrypt/live", domain)
	for _, dir := range []string{archive, live} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, from := range map[string]string{"fullchain": pair.Cert, "privkey": pair.Key} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		file := fmt.Sprintf("%s%d.pem", name, n)
		writeFile(t, filepath.Join(root, archive, file), b, 0o600)
		link := filepath.Join(root, live, name+".pem")
		os.Remove(link)
		if err := os.Symlink(filepath.Join("../../archive", domain, file), link); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, archive, fmt.Sprintf("fullchain%d.pem", n)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hubService is what the test takes from the installed unit's [Service] section to
// run the hub as systemd would: every key, in order.
type hubService map[string][]string

func readHubService(t *testing.T, root string) hubService {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, hubUnit))
	if err != nil {
		t.Fatalf("the package installed no hub unit: %v", err)
	}
	s := hubService{}
	section := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#':
		case line[0] == '[':
			section = line
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			s[k] = append(s[k], v)
		}
	}
	for _, k := range []string{"User", "StateDirectory", "WorkingDirectory", "ExecStartPre", "ExecStart", "ExecReload"} {
		if len(s[k]) != 1 {
			t.Fatalf("%s: want one %s=, got %q", hubUnit, k, s[k])
		}
	}
	return s
}

// credentials is the unit's $CREDENTIALS_DIRECTORY (%d).
const credentials = "/run/credentials/scoreboard-hub.service"

// expand replaces the unit's specifiers; the test knows %d only.
func expand(t *testing.T, v string) string {
	t.Helper()
	v = strings.ReplaceAll(v, "%d", credentials)
	if strings.Contains(strings.ReplaceAll(v, "%%", ""), "%") {
		t.Fatalf("%s: a specifier this test does not know in %q", hubUnit, v)
	}
	return v
}

// setUp does what systemd does before the unit's first command: the state
// directory, the user's; the credentials, read as root (links followed, certbot's
// 0600 key too) and copied for the user alone; it returns the environment.
func (s hubService) setUp(t *testing.T, root string, p hubPorts) []string {
	t.Helper()
	user := s["User"][0]
	state := "/var/lib/" + s["StateDirectory"][0]
	chroot(t, root, fmt.Sprintf("install -d -m 0755 -o %s -g %s %s", user, user, state))
	chroot(t, root, "rm -rf "+credentials+" && install -d -m 0500 -o "+user+" "+credentials)
	for _, lc := range s["LoadCredential"] {
		id, path, _ := strings.Cut(lc, ":")
		// systemd fails the unit when the file is not there (243/CREDENTIALS).
		chroot(t, root, fmt.Sprintf("install -m 0400 -o %s %s %s/%s", user, path, credentials, id))
	}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
		"HOME=" + state, "USER=" + user, "LOGNAME=" + user,
		"STATE_DIRECTORY=" + state, "CREDENTIALS_DIRECTORY=" + credentials}
	for _, e := range s["Environment"] {
		env = append(env, strings.Fields(expand(t, e))...)
	}
	return append(env,
		fmt.Sprintf("SCOREBOARD_LEAGUE_LISTEN=127.0.0.1:%d", p.tools),
		fmt.Sprintf("SCOREBOARD_LEAGUE_LEAF_LISTEN=127.0.0.1:%d", p.leaf),
		fmt.Sprintf("SCOREBOARD_LEAGUE_HTTP=127.0.0.1:%d", p.page),
		fmt.Sprintf("SCOREBOARD_LEAGUE_METRICS=127.0.0.1:%d", p.metrics))
}

// command is one of the unit's command lines, run in the root as the unit's user,
// in its working directory, with its umask.
func (s hubService) command(t *testing.T, root string, env []string, line string) *exec.Cmd {
	t.Helper()
	line = expand(t, line)
	if strings.ContainsAny(line[:1], "-+!@:") || strings.ContainsAny(line, "\"'\\;") {
		t.Fatalf("%s: a command line this test does not run as systemd would: %q", hubUnit, line)
	}
	user, umask := s["User"][0], "0022"
	if u := s["UMask"]; len(u) == 1 {
		umask = u[0]
	}
	script := fmt.Sprintf("cd %s && umask %s && exec %s", s["WorkingDirectory"][0], umask, line)
	cmd := exec.Command("chroot", root, "setpriv", "--reuid="+user, "--regid="+user, "--clear-groups",
		"--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "/bin/sh", "-ec", script)
	cmd.Env = env
	return cmd
}

// hubProcess is the hub, started by the unit's ExecStart=.
type hubProcess struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	env  []string
	done chan error
}

// start runs the unit's ExecStartPre= to its end, then its ExecStart=, and waits
// for the hub's listeners.
func (s hubService) start(t *testing.T, root string, p hubPorts) *hubProcess {
	t.Helper()
	env := s.setUp(t, root, p)
	for _, pre := range s["ExecStartPre"] {
		if out, err := s.command(t, root, env, pre).CombinedOutput(); err != nil {
			t.Fatalf("ExecStartPre=%s: %v\n%s", pre, err, out)
		}
	}
	h := &hubProcess{out: &lockedBuffer{}, env: env, done: make(chan error, 1)}
	h.cmd = s.command(t, root, env, s["ExecStart"][0])
	h.cmd.Stdout, h.cmd.Stderr = h.out, h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- h.cmd.Wait() }()
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("the hub's output:\n%s", h.out.String())
		}
	})
	h.waitLog(t, "league hub running", 1)
	proctest.WaitTCP(t, fmt.Sprintf("127.0.0.1:%d", p.page), 30*time.Second)
	return h
}

// reload runs the unit's ExecReload= with $MAINPID the hub's.
func (s hubService) reload(t *testing.T, root string, h *hubProcess) {
	t.Helper()
	line := strings.ReplaceAll(s["ExecReload"][0], "$MAINPID", fmt.Sprint(h.cmd.Process.Pid))
	if out, err := s.command(t, root, h.env, line).CombinedOutput(); err != nil {
		t.Fatalf("ExecReload=%s: %v\n%s", line, err, out)
	}
}

// stop is systemd's stop: SIGTERM, and the hub exits 0 within TimeoutStopSec.
func (h *hubProcess) stop(t *testing.T) {
	t.Helper()
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-h.done:
		if err != nil {
			t.Fatalf("the hub exited with %v after SIGTERM\n%s", err, h.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the hub did not exit within 30 s of SIGTERM\n%s", h.out.String())
	}
}

// waitLog waits for n lines of the hub's output that hold each of the words.
func (h *hubProcess) waitLog(t *testing.T, words ...any) {
	t.Helper()
	want := words[len(words)-1].(int)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := 0
		sc := bufio.NewScanner(strings.NewReader(h.out.String()))
		for sc.Scan() {
			all := true
			for _, w := range words[:len(words)-1] {
				all = all && strings.Contains(sc.Text(), w.(string))
			}
			if all {
				got++
			}
		}
		if got >= want {
			return
		}
		select {
		case err := <-h.done:
			t.Fatalf("the hub exited (%v) before %d lines with %q:\n%s", err, want, words[:len(words)-1], h.out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, %d lines of the hub's with %q, want %d:\n%s", got, words[:len(words)-1], want, h.out.String())
		}
	}
}

// waitLinkUp waits for the hub to see club's link up, n times in this process.
func (h *hubProcess) waitLinkUp(t *testing.T, club string, n int) {
	t.Helper()
	h.waitLog(t, "club link changed", club, "link_up", "true", n)
}

// startClub runs a club's daemon in the root with north's seed, which the
// walkthrough left in /root, linking to the hub over TLS with the test's CA; it
// runs until the test ends.
func startClub(t *testing.T, root string, leaf int) *exec.Cmd {
	t.Helper()
	chroot(t, root, "install -d -m 0700 /tmp/club && install -m 0600 /root/north.seed /tmp/club/hub.seed")
	cmd := exec.Command("chroot", root, "scoreboard", "run", "--hub-url", fmt.Sprintf("tls://127.0.0.1:%d", leaf),
		"--hub-club", "north", "--hub-seed-file", "/tmp/club/hub.seed", "--hub-tls-ca", "/tmp/league-ca.crt",
		"--port-device", "-", "--port-problem", "goscore", "--nats-listen", "127.0.0.1:0", "--http-listen", "off",
		"--daemon-state-dir", "/tmp/club/state")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"}
	in, err := cmd.StdinPipe() // the port's device, open until the test ends
	if err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("the club's output:\n%s", out.String())
		}
	})
	return cmd
}

// pageGet gets the league page over HTTPS, trusting the test's CA alone, and
// checks it is served with the n-th certificate certbot made.
func pageGet(t *testing.T, ca *certtest.CA, port, n int) {
	t.Helper()
	caPEM, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d/", port))
	if err != nil {
		t.Fatalf("the league page in HTTPS: %v", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the league page: %s", resp.Status)
	}
	want, err := os.ReadFile(filepath.Join(filepath.Dir(ca.File), fmt.Sprintf("hub%d.crt", n)))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(want)
	if block == nil || !bytes.Equal(block.Bytes, resp.TLS.PeerCertificates[0].Raw) {
		t.Errorf("the page is served with another certificate than certbot's number %d", n)
	}
}

// leafTLSRequired checks that the hub's leaf listener asks for TLS: the INFO it
// sends first says so (the clubs then do the handshake; none joins in clear).
func leafTLSRequired(t *testing.T, port int) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	info, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(info, "INFO ") || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("the leaf listener's first line: %q, %v; want an INFO with \"tls_required\":true", info, err)
	}
}

// lockedBuffer is a process's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
