// Command prebuild builds the programs the process-level tests start into the
// directory it is given, once for all the test processes of a .ci/run stage, which
// then name it in $SCOREBOARD_PROCTEST_BIN (proctest.Prebuild).
package main

import (
	"fmt"
	"os"

	"github.com/goclub/scoreboard/internal/proctest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: prebuild DIR")
		os.Exit(2)
	}
	if err := proctest.Prebuild(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "prebuild:", err)
		os.Exit(1)
	}
}
