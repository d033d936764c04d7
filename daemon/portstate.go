package daemon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
)

// states returns each port's state as the monitor knows it now.
func (m *Monitor) states() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.ports))
	for name, p := range m.ports {
		switch {
		case p.ended:
			out[name] = bus.PortStopped
		case p.open:
			out[name] = bus.PortOpen
		default:
			out[name] = bus.PortUnplugged
		}
	}
	return out
}

// PublishPortStates publishes each port's bus.PortState on <prefix>.port.<port>: at
// once when it changes (the monitor signals a change; it is not polled, so an idle
// daemon does not wake for it), and every port's again every `every`, for the
// subscribers that came later. It returns when ctx ends.
func PublishPortStates(ctx context.Context, nc *nats.Conn, prefix string, m *Monitor, every time.Duration, log zerolog.Logger) {
	subj := bus.Subjects{Prefix: prefix}
	known := map[string]bus.PortState{}
	publish := func(st bus.PortState) {
		data, _ := json.Marshal(st) // a struct of strings and a time always marshals
		if err := nc.Publish(subj.PortState(st.Port), data); err != nil {
			log.Debug().Err(err).Str("port", st.Port).Msg("publish port state")
		}
	}
	everyTick := time.NewTicker(every)
	defer everyTick.Stop()
	for {
		now := time.Now().UTC().Truncate(time.Second)
		for name, state := range m.states() {
			if st, ok := known[name]; !ok || st.State != state {
				st = bus.PortState{Port: name, State: state, Since: now}
				known[name] = st
				publish(st)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-m.Changed():
		case <-everyTick.C:
			for _, st := range known {
				publish(st)
			}
		}
	}
}
