package main

import (
	"testing"

	"github.com/goclub/scoreboard/internal/proctest"
)

// TestMain removes the binaries proctest built for this package's tests, and gives
// the daemons a state directory of their own.
func TestMain(m *testing.M) { proctest.Main(m, proctest.StateDir()) }
