package engine_test

import (
	"os"
	"testing"
)

// longEnv names the environment variable that runs the long differential tests:
// SCOREBOARD_ENGINE_LONG=1 go test ./engine. Without it they run CI's size, thousands
// of random cases each, which `go test -race ./engine` gets through in well under
// two minutes on a busy 2-core machine (RELIABILITY.md).
const longEnv = "SCOREBOARD_ENGINE_LONG"

// diffSize is how many random cases a differential test runs: ci by default, long
// with SCOREBOARD_ENGINE_LONG set (to anything but "" or "0"), a tenth of ci (at least one) with
// -short.
func diffSize(ci, long int) int {
	switch {
	case os.Getenv(longEnv) != "" && os.Getenv(longEnv) != "0":
		return long
	case testing.Short():
		return max(ci/10, 1)
	}
	return ci
}
