package packaging

import (
	"bufio"
	"fmt"
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

// chrootDaemon runs the installed unit's ExecStart= line in the root, as systemd
// would but for the sandbox: root, with $STATE_DIRECTORY where DynamicUser= keeps
// it. It returns once the daemon answers a tool, and a stop that sends SIGTERM and
// waits for its exit.
func chrootDaemon(t *testing.T, root, url string) (stop func() string) {
	t.Helper()
	unit, err := os.ReadFile(filepath.Join(root, "usr/lib/systemd/system/scoreboard.service"))
	if err != nil {
		t.Fatal(err)
	}
	var exec_ string
	for line := range strings.Lines(string(unit)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart="); ok {
			exec_ = v
		}
	}
	if exec_ == "" {
		t.Fatalf("the installed unit has no ExecStart=:\n%s", unit)
	}
	var out proctest.Buffer
	cmd := exec.Command("chroot", root, "/bin/sh", "-c", "exec "+exec_)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "STATE_DIRECTORY=/var/lib/private/scoreboard", "LANG=C.UTF-8"}
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
			return stop
		}
		select {
		case err := <-done:
			t.Fatalf("%s exited (%v) before it answered:\n%s", exec_, err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%s did not answer `scoreboard history` within 60 s:\n%s", exec_, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The previous release's .deb, then this one, then the previous one again, in a
// fresh Debian root, with a history on disk: each version's daemon, started as its
// unit's ExecStart= line says, on the config the club edited (kept by dpkg at each
// step), shows every unit the one before it stored (`history --json`, byte for
// byte) and stores more; nothing is lost either way. (A later version whose store
// an earlier one cannot read marks its state dir's format, and the earlier one
// refuses to start in one line: history.TestStateDirFormat.)
func TestChrootUpgradeDowngrade(t *testing.T) {
	t.Parallel()
	d := findDist(t)
	needTool(t, "mmdebstrap", "chroot", "git", "make")
	if os.Geteuid() != 0 {
		need(t, "chroot needs root")
	}
	root := os.Getenv("SCOREBOARD_PACKAGE_UPDOWN_ROOT")
	if root == "" {
		suite := os.Getenv("SCOREBOARD_PACKAGE_SUITE")
		if suite == "" {
			suite = hostSuite(t)
		}
		root = filepath.Join(t.TempDir(), "root")
		run(t, "mmdebstrap", "--quiet", "--variant=apt", "--include=systemd,sudo,procps", suite, root)
	} else if _, err := os.Stat(filepath.Join(root, "usr/bin/scoreboard")); err == nil {
		t.Fatalf("SCOREBOARD_PACKAGE_UPDOWN_ROOT=%s has scoreboard installed already: it must be a fresh root", root)
	}
	prev := previousDeb(t)
	chroot(t, root, "dpkg-divert --quiet --local --rename --add /usr/bin/systemctl")
	writeFile(t, filepath.Join(root, "usr/bin/systemctl"), []byte(systemctlShim), 0o755)
	for _, dir := range []string{"run/systemd/system", "var/lib/private"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, prev, filepath.Join(root, "tmp", filepath.Base(prev)))
	copyFile(t, d.deb("amd64"), filepath.Join(root, "tmp", filepath.Base(d.deb("amd64"))))
	in, _ := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	writeFile(t, filepath.Join(root, "tmp/goscore.in"), in, 0o644)
	apt := "cd /tmp && apt install --yes --allow-downgrades -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold ./"

	// The previous release, its config edited as a club would: its own NATS and
	// page ports (free ones: the root shares the host's network).
	chroot(t, root, apt+filepath.Base(prev))
	natsAddr := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	url := "nats://" + natsAddr
	editConfig(t, filepath.Join(root, "etc/scoreboard/scoreboard.toml"), map[string]string{
		"[nats]": fmt.Sprintf("listen = %q", natsAddr), "[http]": fmt.Sprintf("listen = \"127.0.0.1:%d\"", proctest.FreePort(t))})
	// This build keeps only its own ports' units (club review F1): `send`'s are
	// answered, not kept, and the root has no port; so units are added by the
	// previous release only, and this build's steps show the history kept whole.
	step := func(name, deb string, want string, adds bool) string {
		t.Helper()
		if deb != "" {
			chroot(t, root, apt+filepath.Base(deb))
		}
		version := chroot(t, root, "scoreboard version")
		stop := chrootDaemon(t, root, url)
		got := chroot(t, root, "scoreboard history --json --nats-url "+url)
		if got != want {
			log := stop()
			t.Fatalf("%s (%s): the history differs from the one before:\n got %d lines\nwant %d lines\n%s\nits log:\n%s", name, strings.TrimSpace(version), strings.Count(got, "\n"), strings.Count(want, "\n"), got, log)
		}
		if !adds {
			stop()
			t.Logf("%s: %s, %d units in the history, kept", name, strings.TrimSpace(version), strings.Count(got, "\n"))
			return got
		}
		chroot(t, root, "scoreboard send --nats-url "+url+" --port-name desk goscore </tmp/goscore.in >/dev/null")
		after := chroot(t, root, "scoreboard history --json --nats-url "+url)
		if !strings.HasPrefix(after, want) || strings.Count(after, "\n") <= strings.Count(want, "\n") {
			t.Errorf("%s: the new units did not follow the history:\n%s", name, after)
		}
		stop()
		t.Logf("%s: %s, %d units in the history", name, strings.TrimSpace(version), strings.Count(after, "\n"))
		return after
	}
	h := step("the previous release", "", "", true)
	h = step("upgraded", d.deb("amd64"), h, false)
	h = step("downgraded", prev, h, true)
	step("upgraded again", d.deb("amd64"), h, false)
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
