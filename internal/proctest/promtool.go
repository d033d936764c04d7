package proctest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// Promtool runs Prometheus's promtool with args and stdin, and fails the test with
// its output unless it exits 0. Without promtool the test is skipped, except in CI
// (CI=true), where it fails: .ci/run installs Debian's prometheus package.
func Promtool(t testing.TB, stdin []byte, args ...string) {
	t.Helper()
	exe, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed (apt-get install prometheus): the metrics checks must run in CI")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
}
