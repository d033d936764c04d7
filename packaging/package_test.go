// Package packaging holds the tests of what `make dist` builds: lintian on the three
// .debs, the amd64 .deb installed, upgraded, removed and purged in a fresh Debian
// root (mmdebstrap, chroot), and the arm64 and armhf binaries answering every sample
// under qemu-user-static.
//
// They need dist/ (make dist) and Debian's lintian, mmdebstrap and
// qemu-user-static, and root for chroot. Without them they are skipped, saying what
// is missing; with SCOREBOARD_PACKAGE_TESTS=1 (.ci/run sets it, after make dist) a
// missing piece fails them instead.
package packaging

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
)

// required says whether a missing tool or dist/ fails the tests (CI) or skips them.
var required = os.Getenv("SCOREBOARD_PACKAGE_TESTS") == "1"

func need(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if required {
		t.Fatal(msg + " (SCOREBOARD_PACKAGE_TESTS=1: a package test may not be skipped)")
	}
	t.Skip(msg + " (set SCOREBOARD_PACKAGE_TESTS=1 to make this a failure)")
}

func needTool(t *testing.T, names ...string) {
	t.Helper()
	proctest.SkipShort(t, "a packaging test: it runs "+strings.Join(names, ", "))
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			need(t, "%s is not installed (apt-get install lintian mmdebstrap qemu-user-static)", n)
		}
	}
}

// dist is what make dist built: the version and each artefact's path.
type dist struct {
	dir     string
	version string
}

var debName = regexp.MustCompile(`(?m)  scoreboard_(.+)_amd64\.deb$`)

// findDist reads dist/SHA256SUMS, which the last make dist wrote, for the version.
func findDist(t *testing.T) dist {
	t.Helper()
	proctest.SkipShort(t, "a packaging test: it checks what make dist built, with lintian, a Debian root or qemu")
	dir, err := filepath.Abs("../dist")
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		need(t, "no dist/SHA256SUMS: run make dist first")
	}
	m := debName.FindSubmatch(sums)
	if m == nil {
		t.Fatalf("dist/SHA256SUMS names no scoreboard_*_amd64.deb:\n%s", sums)
	}
	d := dist{dir: dir, version: string(m[1])}
	for _, name := range d.files() {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("make dist did not build %s: %v", name, err)
		}
	}
	return d
}

func (d dist) deb(arch string) string {
	return filepath.Join(d.dir, fmt.Sprintf("scoreboard_%s_%s.deb", d.version, arch))
}

func (d dist) files() []string {
	var f []string
	for _, a := range []string{"amd64", "arm64", "armv6"} {
		f = append(f, fmt.Sprintf("scoreboard_%s_linux_%s.tar.gz", d.version, a))
	}
	for _, a := range []string{"amd64", "arm64", "armhf"} {
		f = append(f, fmt.Sprintf("scoreboard_%s_%s.deb", d.version, a))
	}
	return append(f, "SHA256SUMS")
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// SHA256SUMS names every artefact and each one's sum is right.
func TestDistSums(t *testing.T) {
	t.Parallel()
	d := findDist(t)
	needTool(t, "sha256sum")
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = d.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sha256sum --check: %v\n%s", err, out)
	}
	for _, f := range d.files()[:6] {
		if !strings.Contains(string(out), f+": OK") {
			t.Errorf("SHA256SUMS does not check %s:\n%s", f, out)
		}
	}
	// Each tarball: one directory of the binary, the configs, the units (the hub's and
	// the backup's too), the docs.
	for _, a := range []string{"amd64", "arm64", "armv6"} {
		list := run(t, "tar", "-tzf", filepath.Join(d.dir, fmt.Sprintf("scoreboard_%s_linux_%s.tar.gz", d.version, a)))
		top := fmt.Sprintf("scoreboard_%s_linux_%s/", d.version, a)
		for _, f := range []string{"scoreboard", "scoreboard.toml", "scoreboard.service", "scoreboard-hub.service", "league-hub.toml", "scoreboard-backup.service", "scoreboard-backup.timer", "README.md", "copyright", "man/scoreboard.1.gz", "completions/scoreboard.bash"} {
			if !strings.Contains(list, top+f+"\n") {
				t.Errorf("%s: no %s in:\n%s", a, top+f, list)
			}
		}
	}
}

// lintian finds no error and no warning the package does not override (each override
// in packaging/lintian-overrides says why).
func TestLintian(t *testing.T) {
	t.Parallel()
	d := findDist(t)
	needTool(t, "lintian")
	// One lintian a package, at once: each is a single-threaded Perl program (9 s of
	// CPU for the amd64 .deb, 21 s wall on the busy 2-core machine).
	for _, a := range []string{"amd64", "arm64", "armhf"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("lintian", "--fail-on", "error,warning", d.deb(a)).CombinedOutput()
			t.Logf("lintian %s:\n%s", a, out)
			if err != nil {
				t.Errorf("lintian %s: %v\n%s", filepath.Base(d.deb(a)), err, out)
			}
		})
	}
}

// The arm64 and armhf binaries, taken from their packages, answer every sample
// byte-exact under qemu-user-static.
func TestQEMUSamples(t *testing.T) {
	t.Parallel()
	d := findDist(t)
	needTool(t, "dpkg-deb")
	for arch, qemu := range map[string]string{"arm64": "qemu-aarch64-static", "armhf": "qemu-arm-static"} {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			needTool(t, qemu)
			root := t.TempDir()
			run(t, "dpkg-deb", "-x", d.deb(arch), root)
			bin := filepath.Join(root, "usr/bin/scoreboard")
			out := run(t, qemu, bin, "version")
			if !oneVersionLine(out, d.version) {
				t.Errorf("version: %q, want one line: scoreboard %s (commit ..., go...)", out, d.version)
			}
			for _, c := range samples.Cases {
				in, want := samples.Pair(t, c)
				cmd := exec.Command(qemu, bin, "solve", c.Problem)
				cmd.Stdin = bytes.NewReader(in)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				got, err := cmd.Output()
				if err != nil {
					t.Errorf("%s solve %s < %s.in: %v\n%s", arch, c.Problem, c.File, err, stderr.String())
					continue
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s solve %s < %s.in:\n got %q\nwant %q", arch, c.Problem, c.File, got, want)
				}
			}
		})
	}
}

// nextVersion is a version that sorts after v, as the next commit's would: one more
// commit after the tag.
func nextVersion(v string) string {
	m := regexp.MustCompile(`^(.*)-(\d+)-g([0-9a-f]+)$`).FindStringSubmatch(v)
	if m == nil {
		return v + "-1-g0000000"
	}
	n, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("%s-%d-g%s", m[1], n+1, m[3])
}
