package main

import (
	"testing"

	"github.com/goclub/scoreboard/internal/proctest"
)

// TestMain removes the binaries proctest built for this package's tests, and gives
// the daemons a state directory of their own. Under .ci/run's race stage, the fault
// and soak tests wait for its load stage (proctest.LeaveToLoadStage).
func TestMain(m *testing.M) {
	proctest.LeaveToLoadStage()
	proctest.Main(m, proctest.StateDir())
}
