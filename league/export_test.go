package league

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// SetUpdateFault makes the hub's updates of its streams fail while f says so: the
// seam of a JetStream API that times out in an election, which a bounded test of
// one server cannot bring about.
func SetUpdateFault(h *Hub, f func(jetstream.StreamConfig) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.updateFault = f
}

// KickSource sets the club's source up again, as WatchLinks does to an idle one.
func KickSource(ctx context.Context, h *Hub, club string) bool { return h.kickSource(ctx, club) }
