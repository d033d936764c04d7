package proctest

import (
	"os"
	"path/filepath"
)

// PrebuiltEnv names the directory of the programs the tests start, built once for
// all the test processes of a CI stage (Prebuild), rather than once in each: .ci/run
// sets it. Unset, each test binary builds its own, as it always did.
const PrebuiltEnv = "SCOREBOARD_PROCTEST_BIN"

// Prebuild builds into dir, with the commands the tests would use, every program
// proctest starts: scoreboard, nats-server and the NATS CLI.
func Prebuild(dir string) error {
	if err := buildBinary(filepath.Join(dir, "scoreboard"), "./cmd/scoreboard"); err != nil {
		return err
	}
	if err := buildBinary(filepath.Join(dir, "nats-server"), "github.com/nats-io/nats-server/v2"); err != nil {
		return err
	}
	_, err := installNATSCLI(filepath.Join(dir, "natscli"))
	return err
}

// prebuilt returns the path of name under $SCOREBOARD_PROCTEST_BIN, if it is there.
func prebuilt(name string) (string, bool) {
	d := os.Getenv(PrebuiltEnv)
	if d == "" {
		return "", false
	}
	p := filepath.Join(d, name)
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, true
}
