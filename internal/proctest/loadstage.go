package proctest

import (
	"flag"
	"fmt"
	"os"
)

// LoadStageEnv names the environment variable .ci/run's race stage sets to the
// pattern (go test -run's) of the tests its load stage runs again, under -race and
// busy loops, with more runs: the fault and soak tests of ./daemon and
// ./cmd/scoreboard.
const LoadStageEnv = "SCOREBOARD_LOAD_STAGE_TESTS"

// LeaveToLoadStage is called first by the TestMain of a package whose tests
// .ci/run's load stage runs. With $SCOREBOARD_LOAD_STAGE_TESTS set, it skips the tests
// that pattern matches, as go test -skip would: CI then runs each of them once, in
// the load stage, where their faults bite, not also before it in the quiet race
// suite (they were half of its time: docs/development.md, "CI"). Unset, as for a
// developer or the README's command alone, it does nothing. An explicit -skip wins.
func LeaveToLoadStage() {
	pattern := os.Getenv(LoadStageEnv)
	if pattern == "" {
		return
	}
	flag.Parse()
	skip := flag.Lookup("test.skip")
	if skip == nil || skip.Value.String() != "" {
		return
	}
	if err := skip.Value.Set(pattern); err != nil {
		fmt.Fprintf(os.Stderr, "proctest: %s=%q: %v\n", LoadStageEnv, pattern, err)
		os.Exit(2)
	}
}
