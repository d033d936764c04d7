package bus_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/internal/bustest"
)

// TestServerLineWithAHostileName: nats-server writes a client's connection name
// into its log line's format (inside %q, which leaves '%' as it is), so a client
// without credentials that names itself with format verbs of huge widths had the
// daemon's logger expand them before it clipped the line: five lines of a client
// named with 40 verbs of width 99,999 (400 bytes; a CONNECT holds 4 KB) allocated
// 157,525 KiB. The line is now written without expanding the client's verbs
// (logging.Sprintf), clipped as any other: 423 KiB.
func TestServerLineWithAHostileName(t *testing.T) {
	srv, logs := startLoggedServer(t)
	name := strings.Repeat("%99999[1]s", 40)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const lines = 5
	for i := range lines {
		raw, _ := rawClient(t, srv)
		// A client's -ERR is an error line of the server's, with the client's name.
		fmt.Fprintf(raw, "CONNECT {\"verbose\":false,\"name\":%q}\r\nPING\r\n-ERR 'hostile %d'\r\n", name, i)
		bustest.Wait(t, "the server's line of the client's error", func() (bool, string) {
			n := strings.Count(logs.String(), "Client Error")
			return n > i, fmt.Sprintf("%d lines", n)
		})
		raw.Close()
	}
	runtime.ReadMemStats(&after)
	grew := after.TotalAlloc - before.TotalAlloc
	var longest int
	for line := range strings.Lines(logs.String()) {
		longest = max(longest, len(line))
	}
	if grew > 4<<20 || longest > 2048 {
		t.Fatalf("%d lines of a client named with %d format verbs of width 99,999: the process allocated %d KiB; the longest line is %d bytes", lines, 40, grew>>10, longest)
	}
	t.Logf("%d lines: %d KiB allocated, the longest line %d bytes", lines, grew>>10, longest)
}
