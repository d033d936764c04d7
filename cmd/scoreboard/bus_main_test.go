package main

import (
	"testing"

	"github.com/goclub/scoreboard/internal/proctest"
)

// TestMain removes the binaries proctest built for this package's tests.
func TestMain(m *testing.M) { proctest.Main(m) }
