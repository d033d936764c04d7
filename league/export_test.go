package league

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/nats-io/nats.go/jetstream"
)

// SetUpdateFault makes the hub's updates of its streams fail while f says so: the
// seam of a JetStream API that times out in an election, which a bounded test of
// one server cannot bring about.
func SetUpdateFault(h *Hub, f func(jetstream.StreamConfig) error) {
	h.updateFault.Store(&f)
}

// ClubCreatedKey is where a club's intake's config metadata records which stream
// of the club's it sources (its Created time).
const ClubCreatedKey = clubCreatedKey

// IntakeMaxBytes is a club's intake's room, its account's memory.
const IntakeMaxBytes = intakeMaxBytes

// KickSource sets the club's source up again, as WatchLinks does to an idle one.
func KickSource(ctx context.Context, h *Hub, club string) bool { return h.kickSource(ctx, club) }

// KickIntake sets the club's intake's source up again, as WatchLinks does to an
// idle one.
func KickIntake(ctx context.Context, h *Hub, club string) bool { return h.kickIntakeSource(ctx, club) }

// IntakeJS is the JetStream API of a club's account at the hub, through the hub's
// import: where its intake is.
func IntakeJS(h *Hub, club string) jetstream.JetStream {
	js, err := h.intakeJS(club)
	if err != nil {
		panic(err)
	}
	return js
}

// AccountConn is an in-process connection in a club's account at the hub, with
// every right there (the hub's own).
func AccountConn(t *testing.T, h *Hub, club string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect("", nats.InProcessServer(h.ns), nats.UserInfo(clubAccount(club), ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// AccountShape says what can be seen from outside of the clubs' accounts on a
// server whose hub account is hub: for a comparison of the embedded hub with
// configs/league-hub.conf.
func AccountShape(ns *server.Server, hub string, clubs ...string) (string, error) {
	h, err := ns.LookupAccount(hub)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("hub service imports %d", h.NumServiceImports())
	for _, c := range clubs {
		acc, err := ns.LookupAccount(clubAccount(c))
		if err != nil {
			return "", err
		}
		out += fmt.Sprintf("; %s: jetstream %v, exports API %v, flow control %v, hub's deliveries as a service %v",
			acc.Name, acc.JetStreamEnabled(), acc.IsExportService("$JS.API.>"), acc.IsExportService(intakeFC(c)), acc.IsExportService(intakeDeliver(c)+".>"))
	}
	return out, nil
}

// Server is the hub's embedded server.
func Server(h *Hub) *server.Server { return h.ns }

// IntakeRoom is club's intake's room (its account's memory limit) and what it
// holds, as the server has them.
func IntakeRoom(h *Hub, club string) (room, held int64) {
	h.mu.Lock()
	acc := h.accounts[club]
	h.mu.Unlock()
	if acc == nil {
		return 0, 0
	}
	return intakeUsage(acc)
}

// GateSlots is how many intakes have their whole room at once under a hub whose
// JetStream memory is maxMemory; GateSmallRoom the others'.
func GateSlots(maxMemory int64) int { return newGate(maxMemory).slots }

const GateSmallRoom = gateSmallRoom

// GateLook is one look of the hub's gate at every intake, as RunGate's.
func GateLook(h *Hub) {
	h.gate.look(time.Now(), h.gatedAccounts(), h)
}

// GateTurn is how long a club keeps a slot while others wait.
const GateTurn = gateTurn

// GateWaiting is how many clubs wait for a slot of the hub's gate.
func GateWaiting(h *Hub) int { return h.gate.waitingNow() }

// GateWaitingClubs are the clubs waiting for a slot of the hub's gate.
func GateWaitingClubs(h *Hub) []string {
	h.gate.mu.Lock()
	defer h.gate.mu.Unlock()
	return slices.Clone(h.gate.waiting)
}

// StreamBytes is what each of clubs' streams at the hub holds, as the server has them.
func StreamBytes(h *Hub, clubs []string) (map[string]uint64, error) {
	jsz, err := h.ns.Jsz(&server.JSzOptions{Account: h.ns.GlobalAccount().Name, Streams: true})
	if err != nil {
		return nil, err
	}
	byName := map[string]uint64{}
	for _, a := range jsz.AccountDetails {
		for _, st := range a.Streams {
			byName[st.Name] = st.State.Bytes
		}
	}
	out := make(map[string]uint64, len(clubs))
	for _, c := range clubs {
		out[c] = byName[ClubStream(c)]
	}
	return out, nil
}

// KickIdleSources makes one round of the hub's looks at the sources of idle, clubs
// whose links are up, with a learner of its own: it says which sources it set up
// again, and how many of its learner's asks were under way as the round ended.
func KickIdleSources(ctx context.Context, h *Hub, idle []string) (kicked []string, asking int) {
	l := newLearner(h)
	kicked = h.kickIdleSources(ctx, nil, idle, &seenSeqs{}, l)
	l.mu.Lock()
	for _, c := range l.clubs {
		if c.asking {
			asking++
		}
	}
	l.mu.Unlock()
	l.wait()
	return kicked, asking
}
