package league_test

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/league"
)

// TestHubLineWithAHostileName: nats-server writes a connection's name into its log
// lines' formats, so a client named with format verbs of huge widths had the
// hub's logger expand them (stop 53 fixed the daemon's; the hub's logger calls
// the same logging.Sprintf). From outside: clients at the hub's tools port (which
// takes no credentials: its lines name them), with a club's credentials there, and
// with a wrong one at the clubs' leaf port, name themselves with 40 verbs of width
// 99,999 and send a protocol error. With the hub's logger expanding the verbs, 5
// of each allocated 318,555 KiB, its longest line 4,000,106 bytes; now 504 KiB and
// 546 bytes, and a tool still connects.
func TestHubLineWithAHostileName(t *testing.T) {
	h, hlog := startLoggedHub(t, league.Club{Name: "north", Token: "tn"})
	name := strings.Repeat("%99999[1]s", 40)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const tries = 5
	for _, c := range []struct{ url, auth string }{
		{h.ClientURL(), ``},                            // the tools' port takes no credentials
		{h.ClientURL(), `,"user":"north","pass":"tn"`}, // nor a club's
		{h.LeafURL(), `,"user":"north","pass":"wrong"`},
	} {
		hostPort := c.url[strings.Index(c.url, "://")+3:]
		for i := range tries {
			raw, err := net.Dial("tcp", hostPort)
			if err != nil {
				t.Fatal(err)
			}
			raw.SetDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReader(raw)
			if _, err := r.ReadString('\n'); err != nil { // INFO
				t.Fatalf("%s: %v", hostPort, err)
			}
			fmt.Fprintf(raw, "CONNECT {\"verbose\":false,\"name\":%q%s}\r\nPING\r\n-ERR 'hostile %d'\r\n", name, c.auth, i)
			// Read until the hub closes the connection: its lines are logged by then.
			for {
				if _, err := r.ReadString('\n'); err != nil {
					break
				}
			}
			raw.Close()
		}
	}
	runtime.ReadMemStats(&after)
	grew := after.TotalAlloc - before.TotalAlloc
	logs := hlog.String()
	var longest, named int
	for line := range strings.Lines(logs) {
		longest = max(longest, len(line))
		if strings.Contains(line, "%99999[1]s") {
			named++
		}
	}
	t.Logf("%d clients at each port: %d KiB allocated, %d lines with the name, the longest %d bytes", tries, grew>>10, named, longest)
	if grew > 16<<20 || longest > 64<<10 {
		t.Fatalf("%d clients at each port named with 40 format verbs of width 99,999: the hub allocated %d KiB; the longest line is %d bytes", tries, grew>>10, longest)
	}
	if named == 0 {
		t.Fatalf("no line of the hub's names the hostile clients (at debug): the test reached none of the lines it is for\n%s", logs)
	}
	nc, err := nats.Connect(h.ClientURL())
	if err != nil {
		t.Fatalf("a tool at the hub after the hostile clients: %v", err)
	}
	defer nc.Close()
	if err := nc.Flush(); err != nil {
		t.Fatalf("a tool at the hub after the hostile clients: %v", err)
	}
}
