package bus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
)

// TestLinkGuardSweepsLeftConsumers: a consumer that delivers the club's history
// into its workers' queue group, or onto the club's own subjects, left on the
// stream by a hub under a daemon of an earlier version (which kept it across
// restarts), is deleted when the guard starts, and said so; a consumer of the
// sourcing's shape is left. Planted here with the daemon's own rights on a real
// embedded server, since a tool's is deleted by the server's guard as it is made
// (TestTrustToolDeliverOntoSolve) and a hub's by the link's.
func TestLinkGuardSweepsLeftConsumers(t *testing.T) {
	b := bustest.Start(t, bustest.Options{JetStream: true})
	nc := b.Daemon()
	api := func(subj, body string) map[string]any {
		t.Helper()
		m, err := nc.Request(subj, []byte(body), 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", subj, err)
		}
		var r map[string]any
		if err := json.Unmarshal(m.Data, &r); err != nil || r["error"] != nil {
			t.Fatalf("%s: %s", subj, m.Data)
		}
		return r
	}
	api("$JS.API.STREAM.CREATE.SCOREBOARD", `{"name":"SCOREBOARD","subjects":["scoreboard.dump.>","scoreboard.result.>"],"storage":"memory"}`)
	for _, c := range []struct{ name, cfg string }{
		{"group", `"deliver_subject":"scoreboard.solve.goscore","deliver_group":"scoreboard-workers"`},
		{"own", `"deliver_subject":"scoreboard.port.hall"`},
		{"source", `"deliver_subject":"$LEAGUE.victim.S.abc"`},
	} {
		api("$JS.API.CONSUMER.CREATE.SCOREBOARD."+c.name,
			fmt.Sprintf(`{"stream_name":"SCOREBOARD","config":{"durable_name":%q,"name":%q,%s,"ack_policy":"none"}}`, c.name, c.name, c.cfg))
	}
	names := func() []string {
		r := api("$JS.API.CONSUMER.NAMES.SCOREBOARD", `{}`)
		var out []string
		for _, n := range r["consumers"].([]any) {
			out = append(out, n.(string))
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"group", "own", "source"}) {
		t.Fatalf("consumers planted: %v", got)
	}
	var logs strings.Builder
	log := bustest.Logger(t).Output(&logs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := bus.GuardLink(ctx, nc, &bus.HubLink{Club: "victim"}, "scoreboard", log); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, []string{"source"}) {
		t.Errorf("consumers after the guard's start: %v, want [source]", got)
	}
	if n := strings.Count(logs.String(), "consumer found on the club's history deleted"); n != 2 {
		t.Errorf("%d deletes said in the log, want 2:\n%s", n, logs.String())
	}
}
