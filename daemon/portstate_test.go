package daemon_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/serialio"
)

// TestPublishPortStates: a port's device plugged, unplugged and plugged again is
// published as open, unplugged (since when), open; and a subscriber that comes late
// learns every port's state from the periodic repeat.
func TestPublishPortStates(t *testing.T) {
	_, nc := startBus(t, true)
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	states := make(chan *nats.Msg, 256)
	sub, err := nc.ChanSubscribe(subj.PortState("hall"), states)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	link := filepath.Join(t.TempDir(), "scoreboard")
	mon := daemon.NewMonitor()
	startDaemon(t, nc, daemon.Config{Monitor: mon, Ports: []daemon.PortConfig{
		{Name: "hall", Device: link, Problem: "goscore", Line: serialio.LineSettings{Baud: 115200}},
	}})
	// First with a repeat too rare to matter: each change is published because the
	// monitor signals it, not because a timer came.
	publish := func(every time.Duration) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			daemon.PublishPortStates(ctx, nc, bus.DefaultPrefix, mon, every, zerolog.Nop())
		}()
		return func() { cancel(); <-done }
	}
	stop := publish(time.Hour)
	defer func() { stop() }()

	// next returns the next state published that differs from the last one seen.
	var last bus.PortState
	next := func(want string) bus.PortState {
		t.Helper()
		deadline := time.After(long)
		for {
			select {
			case m := <-states:
				var st bus.PortState
				if err := json.Unmarshal(m.Data, &st); err != nil {
					t.Fatalf("port state %q: %v", m.Data, err)
				}
				if st == last {
					continue // the periodic repeat
				}
				last = st
				if st.State != want || st.Port != "hall" {
					t.Fatalf("port state %+v, want %s", st, want)
				}
				return st
			case <-deadline:
				t.Fatalf("no port state %s within %v (last %+v)", want, long, last)
			}
		}
	}
	next(bus.PortUnplugged) // the device is not there yet
	pt := plug(t, link)
	opened := next(bus.PortOpen)
	unplug(t, link, pt.Master)
	lost := next(bus.PortUnplugged)
	if lost.Since.Before(opened.Since) {
		t.Errorf("unplugged since %v, before it was opened at %v", lost.Since, opened.Since)
	}
	plug(t, link)
	next(bus.PortOpen)

	// A subscriber that comes now hears the state within the repeat period.
	stop()
	stop = publish(200 * time.Millisecond)
	late, err := nc.SubscribeSync(subj.AllPortStates())
	if err != nil {
		t.Fatal(err)
	}
	m, err := late.NextMsg(long)
	if err != nil {
		t.Fatalf("a late subscriber heard no state: %v", err)
	}
	var st bus.PortState
	if json.Unmarshal(m.Data, &st); st.State != bus.PortOpen {
		t.Errorf("the late subscriber heard %q", m.Data)
	}
}
