package packaging

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
)

// previousRelease is the commit whose .deb stands for the previous release: none
// is published yet (no tag), so it is the first commit whose .deb passed the
// install test (ac25826, 2026-11-25): two days of changes to the history, the
// config and the unit before this one. Once a release is tagged, name its commit
// here. Its .deb is built from the commit's tree (git archive, its own Makefile)
// once, and kept in the user's cache dir (previousDeb).
const previousRelease = "ac258269f5c15f9864d3e863798ba492bf0588cb"

// previousDeb is the previous release's amd64 .deb, built once per commit.
func previousDeb(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "scoreboard-packaging")
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", ".."}, args...)...).Output()
		if err != nil {
			need(t, "git %s: %v: the previous release is built from this clone's history (a full clone, not a shallow one)", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	// A shallow clone has neither the previous release's tree nor the commit count
	// that orders the versions (make's 0.0.0-<commits>-g<hash>): what would fail
	// here is the clone, not the package, so this test alone says so and stops.
	if git("rev-parse", "--is-shallow-repository") == "true" {
		t.Skip("a shallow clone: the previous release is built from this clone's history, and the versions are ordered by its commit count; git fetch --unshallow, then run again")
	}
	// Its version as its Makefile would make it: 0.0.0-<commits>-g<hash>.
	version := fmt.Sprintf("0.0.0-%s-g%s", git("rev-list", "--count", previousRelease), git("rev-parse", "--short=7", previousRelease))
	deb := filepath.Join(dir, fmt.Sprintf("scoreboard_%s_amd64.deb", version))
	if _, err := os.Stat(deb); err == nil {
		return deb
	}
	start := time.Now()
	src := t.TempDir()
	tree := exec.Command("sh", "-c", "git -C .. archive "+previousRelease+" | tar -x -C "+src)
	if out, err := tree.CombinedOutput(); err != nil {
		t.Fatalf("the previous release's tree: %v\n%s", err, out)
	}
	out := t.TempDir()
	mk := exec.Command("make", "--no-print-directory", "DIST="+out, "VERSION="+version, "COMMIT="+previousRelease,
		"SOURCE_DATE_EPOCH="+git("log", "-1", "--format=%ct", previousRelease), filepath.Join(out, filepath.Base(deb)))
	mk.Dir = src
	if b, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make the previous release's .deb: %v\n%s", err, b)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, filepath.Base(deb)))
	if err != nil {
		t.Fatal(err)
	}
	// Written beside, then renamed: a test killed midway leaves no half .deb.
	writeFile(t, deb+".part", b, 0o644)
	if err := os.Rename(deb+".part", deb); err != nil {
		t.Fatal(err)
	}
	t.Logf("built the previous release's .deb %s in %.0f s (cached for the next runs)", filepath.Base(deb), time.Since(start).Seconds())
	return deb
}

// execStart is the installed unit's ExecStart= line.
func execStart(t *testing.T, root string) string {
	t.Helper()
	unit, err := os.ReadFile(filepath.Join(root, "usr/lib/systemd/system/scoreboard.service"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.Lines(string(unit)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "ExecStart="); ok {
			line = v
		}
	}
	if line == "" {
		t.Fatalf("the installed unit has no ExecStart=:\n%s", unit)
	}
	return line
}

// daemonCommand is the unit's ExecStart= line with args, in the root, as systemd
// would run it but for the sandbox: root, with $STATE_DIRECTORY where DynamicUser=
// keeps it.
func daemonCommand(t *testing.T, root, args string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("chroot", root, "/bin/sh", "-c", "exec "+execStart(t, root)+args)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "STATE_DIRECTORY=/var/lib/private/scoreboard", "LANG=C.UTF-8"}
	return cmd
}

// chrootDaemon runs the installed unit's ExecStart= line in the root (daemonCommand).
// It returns once the daemon answers a tool, with a stop that sends SIGTERM and
// waits for its exit; or, if the daemon exits first, what it wrote (a version that
// refuses the state dir exits so).
func chrootDaemon(t *testing.T, root, url string) (stop func() string, exited string) {
	t.Helper()
	var out proctest.Buffer
	cmd := daemonCommand(t, root, "")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop = func() string {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("the daemon did not stop within 30 s of SIGTERM:\n%s", out.String())
		}
		return out.String()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		c := exec.Command("chroot", root, "scoreboard", "history", "--nats-url", url, "--last", "1")
		if c.Run() == nil {
			return stop, ""
		}
		select {
		case err := <-done:
			return nil, fmt.Sprintf("exit: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%s did not answer `scoreboard history` within 60 s:\n%s", execStart(t, root), out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// portRun runs the unit's ExecStart= line with stdin/stdout as a goscore port (the
// README's quick start), fed in: the daemon reads its units, answers them, keeps
// them in its history, and exits at the end of input. It returns the answers.
func portRun(t *testing.T, root string, in []byte) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := daemonCommand(t, root, " --port-device - --port-problem goscore --port-name desk")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the daemon on a stdin port: %v; %d bytes of answers:\n%s\nits log:\n%s", err, stdout.Len(), stdout.String(), stderr.String())
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the daemon on a stdin port did not exit within 90 s of its input's end; %d bytes of answers:\n%s\nits log:\n%s", stdout.Len(), stdout.String(), stderr.String())
	}
	return stdout.String()
}

// stateSum is a digest of the daemon's state dir in the root: every path, its mode
// and its bytes.
func stateSum(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	dir := filepath.Join(root, "var/lib/private/scoreboard")
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", strings.TrimPrefix(p, dir), info.Mode())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x (%d files)", h.Sum(nil), n)
}

// The previous release's .deb, then this one, then the previous one again, then
// this one again, in a fresh Debian root, with a history on disk. The previous
// release stores N units (`send`, whose units it kept); this build, its unit's
// ExecStart= line with stdin/stdout as a port, answers M more and keeps them (it
// keeps only its ports' units); downgraded, the older daemon either runs, shows
// the N+M units (`history --json`, byte for byte what it printed and what this
// build printed) and stores K more, or refuses to start in one line that says what
// to do, its state dir untouched; upgraded again, every unit is there, byte for
// byte as before the downgrade. Each daemon runs as its unit's ExecStart= line
// says, on the config the club edited (kept by dpkg at each step). (A later
// version whose store an earlier one cannot read marks its state dir's format,
// an upgraded one's too: history.TestStateDirFormat, TestStateDirFormatRaised.)
func TestChrootUpgradeDowngrade(t *testing.T) {
	t.Parallel()
	d := findDist(t)
	needTool(t, "mmdebstrap", "chroot", "git", "make")
	if os.Geteuid() != 0 {
		need(t, "chroot needs root")
	}
	prev := previousDeb(t)
	root := freshRoot(t, "SCOREBOARD_PACKAGE_UPDOWN_ROOT")
	copyFile(t, prev, filepath.Join(root, "tmp", filepath.Base(prev)))
	copyFile(t, d.deb("amd64"), filepath.Join(root, "tmp", filepath.Base(d.deb("amd64"))))
	in, out := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	writeFile(t, filepath.Join(root, "tmp/goscore.in"), in, 0o644)
	u := updown{t: t, root: root}

	// The previous release, its config edited as a club would: its own NATS and
	// page ports (free ones: the root shares the host's network), and one scoreboard
	// (the second port's example table removed: the port flags name the club's one
	// port, which this build's steps run on stdin/stdout).
	u.install(prev)
	natsAddr := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	u.url = "nats://" + natsAddr
	editConfig(t, filepath.Join(root, "etc/scoreboard/scoreboard.toml"), map[string]string{
		"[nats]": fmt.Sprintf("listen = %q", natsAddr), "[http]": fmt.Sprintf("listen = \"127.0.0.1:%d\"", proctest.FreePort(t))})
	onePort(t, filepath.Join(root, "etc/scoreboard/scoreboard.toml"))
	stop := u.daemon("the previous release")
	if h := u.history(); h != "" {
		stop()
		t.Fatalf("the previous release: a fresh root's history has %d units:\n%s", lines(h), h)
	}
	h1 := u.send("the previous release", "")
	stop()
	n := lines(h1)
	t.Logf("the previous release: %s, N = %d units stored", u.version(), n)

	// Upgraded: this build, on a port (stdin/stdout, the sample twice), answers M
	// units and keeps them after the N.
	u.install(d.deb("amd64"))
	m := 2 * len(samples.Units(t, "goscore", "goscore.in"))
	if got, want := portRun(t, root, bytes.Repeat(in, 2)), string(bytes.Repeat(out, 2)); got != want {
		t.Fatalf("upgraded (%s): the port's answers to %d units:\n got %q\nwant %q", u.version(), m, got, want)
	}
	stop = u.daemon("upgraded")
	h2 := u.history()
	log := stop()
	if !strings.HasPrefix(h2, h1) || lines(h2) != n+m {
		t.Fatalf("upgraded (%s): %d units in the history, want the N = %d before (byte for byte) and M = %d the port read:\n%s\nits log:\n%s", u.version(), lines(h2), n, m, h2, log)
	}
	t.Logf("upgraded: %s, M = %d units answered on its port and stored, N+M = %d", u.version(), m, n+m)

	want := u.downgrade(prev, h2, n, m)

	// Upgraded again: every unit, byte for byte as before.
	u.install(d.deb("amd64"))
	stop = u.daemon("upgraded again")
	h4 := u.history()
	log = stop()
	if h4 != want {
		t.Fatalf("upgraded again (%s): %d units in the history, want the %d before the downgrade (N+M = %d) and those it stored, byte for byte:\n got %s\nwant %s\nits log:\n%s", u.version(), lines(h4), lines(want), n+m, h4, want, log)
	}
	t.Logf("upgraded again: %s, %d units in the history, kept", u.version(), lines(h4))
}

// updown is TestChrootUpgradeDowngrade's root, and its daemon's NATS URL.
type updown struct {
	t         *testing.T
	root, url string
}

func lines(s string) int { return strings.Count(s, "\n") }

// install installs the .deb (in the root's /tmp) over what is there, keeping the
// edited config, as unattended-upgrades would.
func (u updown) install(deb string) {
	u.t.Helper()
	chroot(u.t, u.root, "cd /tmp && apt install --yes --allow-downgrades -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold ./"+filepath.Base(deb))
}

func (u updown) version() string {
	return strings.TrimSpace(chroot(u.t, u.root, "scoreboard version"))
}

// history is the whole history, as the installed version's tool prints it.
func (u updown) history() string {
	return chroot(u.t, u.root, "scoreboard history --json --nats-url "+u.url)
}

// daemon starts the installed daemon as its unit would, and fails the test if it
// exits first.
func (u updown) daemon(step string) (stop func() string) {
	u.t.Helper()
	stop, exited := chrootDaemon(u.t, u.root, u.url)
	if stop == nil {
		u.t.Fatalf("%s (%s): the daemon exited before it answered a tool:\n%s", step, u.version(), exited)
	}
	return stop
}

// send has the previous release store units: `send`'s, which it kept.
func (u updown) send(step, before string) string {
	u.t.Helper()
	chroot(u.t, u.root, "scoreboard send --nats-url "+u.url+" --port-name desk goscore </tmp/goscore.in >/dev/null")
	after := u.history()
	if !strings.HasPrefix(after, before) || lines(after) <= lines(before) {
		u.t.Fatalf("%s (%s): the new units did not follow the %d units before: %d lines:\n%s", step, u.version(), lines(before), lines(after), after)
	}
	return after
}

// downgrade installs the previous release over this build's history h of N+M
// units: its daemon either runs, prints h byte for byte and stores K more, or
// refuses to start in one line that says what to do, the state dir untouched. It
// returns the history this build must show, upgraded again.
func (u updown) downgrade(prev, h string, n, m int) string {
	t := u.t
	t.Helper()
	before := stateSum(t, u.root)
	u.install(prev)
	stop, exited := chrootDaemon(t, u.root, u.url)
	if stop == nil {
		var said []string
		for l := range strings.Lines(exited) {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "exit: ") {
				said = append(said, l)
			}
		}
		if len(said) != 1 || !strings.Contains(said[0], "install the later version again") {
			t.Fatalf("downgraded (%s): the daemon exited with %d lines, want one that says to install the later version again:\n%s", u.version(), len(said), exited)
		}
		if after := stateSum(t, u.root); after != before {
			t.Fatalf("downgraded (%s): the refused state dir of N+M = %d units changed: %s, was %s", u.version(), n+m, after, before)
		}
		t.Logf("downgraded: %s refused the state dir of N+M = %d units, untouched: %s", u.version(), n+m, said[0])
		return h
	}
	got := u.history()
	if got != h {
		log := stop()
		t.Fatalf("downgraded (%s): %d units in the history, want the N+M = %d = %d + %d before, byte for byte:\n got %s\nwant %s\nits log:\n%s", u.version(), lines(got), n+m, n, m, got, h, log)
	}
	after := u.send("downgraded", got)
	stop()
	t.Logf("downgraded: %s read the N+M = %d units and stored K = %d more", u.version(), n+m, lines(after)-n-m)
	return after
}

// onePort removes every [[port]] table of the config at path but the first, each
// with the comment lines just above it (the previous release's config has a
// second, example, port), leaving the club's one port.
func onePort(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	n := strings.Count(s, "\n[[port]]\n")
	if n == 0 {
		t.Fatalf("%s: no [[port]] table:\n%s", path, s)
	}
	for range n - 1 {
		s = s[:strings.LastIndex(s, "\n[[port]]\n")+1]
		for strings.HasPrefix(s[strings.LastIndex(s[:len(s)-1], "\n")+1:], "#") {
			s = s[:strings.LastIndex(s[:len(s)-1], "\n")+1]
		}
	}
	writeFile(t, path, []byte(strings.TrimRight(s, "\n")+"\n"), 0o644)
}

// editConfig sets, in each TOML table named, the key of its line to line.
func editConfig(t *testing.T, path string, set map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	table, done := "", map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "[") {
			table = strings.TrimSpace(line)
		}
		if v, ok := set[table]; ok && !done[table] {
			key, _, _ := strings.Cut(v, "=")
			if strings.HasPrefix(strings.TrimSpace(line), strings.TrimSpace(key)+" ") {
				line, done[table] = v, true
			}
		}
		b.WriteString(line + "\n")
	}
	f.Close()
	for table := range set {
		if !done[table] {
			t.Fatalf("%s: no key %q in its %s table", path, set[table], table)
		}
	}
	writeFile(t, path, []byte(b.String()), 0o644)
}
