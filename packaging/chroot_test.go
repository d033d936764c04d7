package packaging

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/internal/samples"
)

// chroot runs a shell command inside root, as root, with a login's PATH.
func chroot(t *testing.T, root, script string) string {
	t.Helper()
	cmd := exec.Command("chroot", root, "/bin/sh", "-ec", script)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
		"LANG=C.UTF-8", "DEBIAN_FRONTEND=noninteractive"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chroot: %s: %v\n%s", script, err, out)
	}
	return string(out)
}

// tree lists every path under root with its type and mode (and a link's target), but
// the package manager's own records, caches and logs, and /tmp and /run.
func tree(t *testing.T, root string) []string {
	t.Helper()
	skip := []string{"/var/lib/dpkg", "/var/lib/apt", "/var/cache", "/var/log", "/tmp", "/run", "/proc", "/dev"}
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root)
		if slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := fmt.Sprintf("%s %v", rel, info.Mode())
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			entry += " -> " + target
		}
		paths = append(paths, entry)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// systemctlShim stands in for systemctl in the root, where systemd is not running
// (dpkg-divert moves the real one aside, as the maintainer scripts' PATH is dpkg's):
// it logs what the scripts ask of the running manager (daemon-reload, start,
// restart, stop) and passes the offline operations (--root=, is-enabled) to the real
// one, which works on the unit files. With /run/systemd/system present, the scripts
// then act as on a booted system.
const systemctlShim = `#!/bin/sh
case "$*" in
*--root=*|*--version*|*is-enabled*) SYSTEMD_OFFLINE=1 exec /usr/bin/systemctl.distrib "$@" ;;
*list-units*) exit 0 ;;
*is-active*) exit 3 ;;
esac
echo "$*" >>/tmp/systemctl.log
`

// The amd64 package in a fresh Debian root: installed with the README's command, its
// files, conffiles and unit where they belong, the unit enabled and started, the
// binary answering a sample; the config edited as the README says, and the hub's as
// docs/league.md does, kept through an upgrade to a later build (the hub's still its
// user's), which restarts the daemon and a running hub; removed (stopped), then
// purged, leaving the root as it was.
func TestChrootInstallUpgradePurge(t *testing.T) {
	t.Parallel()
	d := findDist(t)
	needTool(t, "mmdebstrap", "chroot", "systemd-analyze")
	if os.Geteuid() != 0 {
		need(t, "chroot needs root")
	}
	root := freshRoot(t, "SCOREBOARD_PACKAGE_ROOT")
	before := tree(t, root)

	deb := filepath.Base(d.deb("amd64"))
	copyFile(t, d.deb("amd64"), filepath.Join(root, "tmp", deb))
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	writeFile(t, filepath.Join(root, "tmp/goscore.in"), in, 0o644)

	// Install, as the README says: its Install section's commands, but those that
	// need systemd running (readme says which).
	install := readme(t)
	chroot(t, root, "cd /tmp && "+strings.Replace(install["apt"], "_<version>_arm64.deb", "_"+d.version+"_amd64.deb", 1)+" --yes")
	assertLog(t, root, []string{"start scoreboard.service"}, []string{"stop"})
	for path, mode := range map[string]fs.FileMode{
		"/usr/bin/scoreboard":                                          0o755,
		"/usr/lib/systemd/system/scoreboard.service":                   0o644,
		"/usr/lib/systemd/system/scoreboard-hub.service":               0o644,
		"/usr/lib/sysusers.d/scoreboard-hub.conf":                      0o644,
		"/etc/scoreboard/league-hub.toml":                              0o600,
		"/etc/scoreboard":                                              0o755,
		"/etc/scoreboard/scoreboard.toml":                              0o644,
		"/etc/scoreboard/scoreboard.env":                               0o640,
		"/usr/share/man/man1/scoreboard.1.gz":                          0o644,
		"/usr/share/man/man1/scoreboard-run.1.gz":                      0o644,
		"/usr/share/bash-completion/completions/scoreboard":            0o644,
		"/usr/share/zsh/vendor-completions/_scoreboard":                0o644,
		"/usr/share/fish/vendor_completions.d/scoreboard.fish":         0o644,
		"/usr/share/doc/scoreboard/copyright":                          0o644,
		"/usr/share/doc/scoreboard/changelog.gz":                       0o644,
		"/usr/share/doc/scoreboard/examples/scoreboard-backup.service": 0o644,
		"/usr/share/doc/scoreboard/examples/scoreboard-backup.timer":   0o644,
	} {
		info, err := os.Stat(filepath.Join(root, path))
		if err != nil {
			t.Errorf("installed: %v", err)
			continue
		}
		if info.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", path, info.Mode().Perm(), mode)
		}
	}
	if got := chroot(t, root, "dpkg-query --show --showformat='${Conffiles}' scoreboard"); !strings.Contains(got, "/etc/scoreboard/scoreboard.toml ") || !strings.Contains(got, "/etc/scoreboard/scoreboard.env ") || !strings.Contains(got, "/etc/scoreboard/league-hub.toml ") {
		t.Errorf("conffiles: %q, want scoreboard.toml, scoreboard.env and league-hub.toml", got)
	}
	link := "/etc/systemd/system/multi-user.target.wants/scoreboard.service"
	// deb-systemd-helper names the unit by /lib, which merged-/usr makes the same.
	if target, err := os.Readlink(filepath.Join(root, link)); err != nil || strings.TrimPrefix(target, "/usr") != "/lib/systemd/system/scoreboard.service" {
		t.Errorf("enablement link %s: %q, %v", link, target, err)
	}
	if got := chroot(t, root, "systemctl is-enabled scoreboard"); got != "enabled\n" {
		t.Errorf("systemctl is-enabled scoreboard: %q", got)
	}
	if got := chroot(t, root, "scoreboard version"); !oneVersionLine(got, d.version) {
		t.Errorf("scoreboard version: %q, want one line: scoreboard %s (commit ..., go...)", got, d.version)
	}
	if got := chroot(t, root, "scoreboard solve goscore </tmp/goscore.in"); got != string(want) {
		t.Errorf("scoreboard solve goscore:\n got %q\nwant %q", got, want)
	}
	// The unit as installed, checked by systemd itself: against the root's files, and
	// inside the root.
	if out, err := exec.Command("systemd-analyze", "verify", "--root="+root, "/usr/lib/systemd/system/scoreboard.service").CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("systemd-analyze verify --root: %v\n%s", err, out)
	}
	if got := chroot(t, root, "systemd-analyze verify /usr/lib/systemd/system/scoreboard.service 2>&1"); got != "" {
		t.Errorf("systemd-analyze verify in the root:\n%s", got)
	}

	// The README's edit: the port's device, by an editor that sets it.
	writeFile(t, filepath.Join(root, "tmp/edit"), []byte("#!/bin/sh\nsed -i 's|^device = .*|device = \"/dev/serial0\"|' \"$1\"\n"), 0o755)
	chroot(t, root, "SUDO_EDITOR=/tmp/edit "+install["sudoedit"])
	edited, err := os.ReadFile(filepath.Join(root, "etc/scoreboard/scoreboard.toml"))
	if err != nil || !bytes.Contains(edited, []byte("\ndevice = \"/dev/serial0\"\n")) {
		t.Fatalf("the edit did not take: %v\n%s", err, edited)
	}
	// The hub's file, edited as docs/league.md's walkthrough does.
	chroot(t, root, `sudo sed -i '/^\[\[club\]\]/,$d' /etc/scoreboard/league-hub.toml`)
	hubEdited, err := os.ReadFile(filepath.Join(root, "etc/scoreboard/league-hub.toml"))
	if err != nil || bytes.Contains(hubEdited, []byte("\n[[club]]\n")) {
		t.Fatalf("the hub's file edit did not take: %v\n%s", err, hubEdited)
	}

	// Upgrade to a later build: the edit is kept, and the daemon restarted, not
	// stopped first.
	next := nextVersion(d.version)
	dir := t.TempDir()
	next = strings.TrimSpace(next)
	nextDeb := fmt.Sprintf("scoreboard_%s_amd64.deb", next)
	mk := exec.Command("make", "--no-print-directory", "DIST="+dir, "VERSION="+next, filepath.Join(dir, nextDeb))
	mk.Dir = ".."
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make the next build: %v\n%s", err, out)
	}
	copyFile(t, filepath.Join(dir, nextDeb), filepath.Join(root, "tmp", nextDeb))
	os.Remove(filepath.Join(root, "tmp/systemctl.log"))
	// Non-interactive, as unattended-upgrades runs it: were the package's own default
	// changed too, dpkg would ask, and --force-confold answers "keep mine".
	chroot(t, root, "cd /tmp && sudo apt install --yes -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold ./"+nextDeb)
	assertLog(t, root, []string{"restart scoreboard.service", "try-restart scoreboard-hub.service"}, []string{"stop"})
	if got := chroot(t, root, "scoreboard version"); !oneVersionLine(got, next) {
		t.Errorf("after the upgrade, scoreboard version: %q, want one line: scoreboard %s (commit ..., go...)", got, next)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "etc/scoreboard/scoreboard.toml")); !bytes.Equal(got, edited) {
		t.Errorf("the upgrade did not keep the edited conffile:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "etc/scoreboard/league-hub.toml")); !bytes.Equal(got, hubEdited) {
		t.Errorf("the upgrade did not keep the edited hub's file:\n%s", got)
	}
	if got := chroot(t, root, "stat -c '%a %U' /etc/scoreboard/league-hub.toml"); got != "600 scoreboard-hub\n" {
		t.Errorf("after the upgrade, the hub's file: %q, want 600 scoreboard-hub", got)
	}
	if _, err := os.Readlink(filepath.Join(root, link)); err != nil {
		t.Errorf("after the upgrade, the unit is no longer enabled: %v", err)
	}

	// What the daemon would have left: its history, where DynamicUser= keeps it.
	if err := os.MkdirAll(filepath.Join(root, "var/lib/private/scoreboard/jetstream"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "var/lib/private/scoreboard/jetstream/meta"), []byte("x"), 0o600)
	if err := os.Symlink("private/scoreboard", filepath.Join(root, "var/lib/scoreboard")); err != nil {
		t.Fatal(err)
	}

	// Remove: stopped, the binary gone, the configuration kept.
	os.Remove(filepath.Join(root, "tmp/systemctl.log"))
	chroot(t, root, "sudo apt remove --yes scoreboard")
	assertLog(t, root, []string{"stop scoreboard.service", "scoreboard-hub.service"}, nil)
	if _, err := os.Stat(filepath.Join(root, "usr/bin/scoreboard")); err == nil {
		t.Error("removed, but /usr/bin/scoreboard is still there")
	}
	if _, err := os.Stat(filepath.Join(root, "etc/scoreboard/scoreboard.toml")); err != nil {
		t.Errorf("removed (not purged), the configuration should stay: %v", err)
	}

	// Purge: nothing left behind.
	chroot(t, root, "sudo apt purge --yes scoreboard") // as the README says
	after := tree(t, root)
	var added, gone []string
	for _, p := range after {
		if !slices.Contains(before, p) {
			added = append(added, p)
		}
	}
	for _, p := range before {
		if !slices.Contains(after, p) {
			gone = append(gone, p)
		}
	}
	if len(added)+len(gone) > 0 {
		t.Errorf("after purge, %d paths left behind and %d changed or gone:\nleft: %s\ngone: %s",
			len(added), len(gone), strings.Join(added, "\n  "), strings.Join(gone, "\n  "))
	}
	if got := chroot(t, root, "dpkg-query --show --showformat='${db:Status-Status}' scoreboard 2>&1 || true"); strings.Contains(got, "installed") && !strings.Contains(got, "not-installed") {
		t.Errorf("dpkg still knows the package: %q", got)
	}
}

// freshRoot is a fresh Debian root for one test, which the test may change: the
// one named in env (.ci/run makes it with the same command while its first stages
// run, most of it downloading), else one made now. systemctl in it is
// systemctlShim, and /run/systemd/system is there, so the maintainer scripts act
// as on a booted system.
func freshRoot(t *testing.T, env string) string {
	t.Helper()
	suite := os.Getenv("SCOREBOARD_PACKAGE_SUITE")
	if suite == "" {
		suite = hostSuite(t)
	}
	// systemd for systemctl is-enabled and systemd-analyze; procps, the package's
	// dependency (the root has no apt lists to fetch it from); sudo for the README's
	// commands as written.
	root := os.Getenv(env)
	if root == "" {
		root = filepath.Join(t.TempDir(), "root")
		run(t, "mmdebstrap", "--quiet", "--variant=apt", "--include=systemd,sudo,procps", suite, root)
	} else if _, err := os.Stat(filepath.Join(root, "usr/bin/scoreboard")); err == nil {
		t.Fatalf("%s=%s has scoreboard installed already: it must be a fresh root", env, root)
	}

	chroot(t, root, "dpkg-divert --quiet --local --rename --add /usr/bin/systemctl")
	writeFile(t, filepath.Join(root, "usr/bin/systemctl"), []byte(systemctlShim), 0o755)
	for _, dir := range []string{"run/systemd/system", "var/lib/private"} {
		// /var/lib/private is systemd's, for every DynamicUser= service: made when the
		// first one starts, and no package's to remove.
		if err := os.MkdirAll(filepath.Join(root, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// readme returns the commands of README's Install section, by their first word after
// sudo (apt, sudoedit), and fails on a command this test neither runs nor knows it
// cannot: systemctl restart, systemctl status and journalctl need systemd as PID 1,
// which a chroot has not (the unit is checked by systemd-analyze verify instead).
func readme(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no Install section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, block, ok := strings.Cut(sec, "```sh\n")
	if !ok {
		t.Fatal("README's Install section has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	cmds := map[string]string{}
	for line := range strings.SplitSeq(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(line, "sudo "))
		switch f[0] {
		case "apt", "sudoedit":
			cmds[f[0]] = line
		case "systemctl", "journalctl":
			t.Logf("README's %q needs systemd running: not run in the chroot", line)
		default:
			t.Fatalf("README's Install section has %q, which this test does not run", line)
		}
	}
	if cmds["apt"] == "" || cmds["sudoedit"] == "" {
		t.Fatalf("README's Install section lacks the apt install or the sudoedit line: %q", block)
	}
	return cmds
}

// assertLog checks what the maintainer scripts asked of systemctl.
func assertLog(t *testing.T, root string, want, not []string) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(root, "tmp/systemctl.log"))
	for _, w := range want {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("the maintainer scripts did not ask systemctl to %q; they asked:\n%s", w, b)
		}
	}
	for _, n := range not {
		if bytes.Contains(b, []byte(n)) {
			t.Errorf("the maintainer scripts asked systemctl to %q:\n%s", n, b)
		}
	}
}

func hostSuite(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VERSION_CODENAME="); ok && v != "" {
			return v
		}
	}
	need(t, "no VERSION_CODENAME in /etc/os-release: set SCOREBOARD_PACKAGE_SUITE to a Debian suite")
	return ""
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, b, 0o644)
}

func writeFile(t *testing.T, path string, b []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
}

// oneVersionLine tells whether out is what `scoreboard version` prints of a build of
// version v: one line, "scoreboard <v> (commit <hash>, <go version>)".
func oneVersionLine(out, v string) bool {
	return strings.HasPrefix(out, "scoreboard "+v+" (commit ") && strings.Count(out, "\n") == 1 && strings.HasSuffix(out, ")\n")
}
