package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// JetStream's API error codes that mean a cluster not settled yet: nats-server's
// JSClusterNotAvailErr, JSClusterNoPeersErrF (the peers not known yet) and
// JSInsufficientResourcesErr.
var notSettled = []jetstream.ErrorCode{10008, 10005, 10023}

// setupPatience bounds SetupWait: a cluster settles within seconds, so past this the
// error is taken for what it says (three replicas asked of two nodes, say).
const setupPatience = 2 * time.Minute

var setupRetry = backoff.Policy{Min: 50 * time.Millisecond, Max: 2 * time.Second}

// SetupWait is Setup on a server or cluster that may not be ready for it yet: a
// cluster just formed, or one electing a leader after losing a node, does not answer,
// or answers that it is not available, for a few seconds. It tries again with
// back-off (up to 2 s) for up to 2 minutes or until ctx ends, logging the first
// failure and every tenth; any other error ends it at once.
func SetupWait(ctx context.Context, js jetstream.JetStream, c Config, log zerolog.Logger) (jetstream.KeyValue, error) {
	deadline := time.Now().Add(setupPatience)
	for attempt := 1; ; attempt++ {
		kv, err := Setup(ctx, js, c)
		if err == nil || !notReady(ctx, err) || time.Now().After(deadline) {
			return kv, err
		}
		if backoff.Logged(attempt) {
			log.Warn().Str("component", "history").Err(err).Int("attempts", attempt).Msg("JetStream not ready yet: trying again")
		}
		if cerr := backoff.Sleep(ctx, setupRetry.Wait(attempt-1)); cerr != nil {
			return nil, fmt.Errorf("%w (waiting for JetStream: %v)", err, cerr)
		}
	}
}

func notReady(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var api *jetstream.APIError
	if errors.As(err, &api) {
		for _, code := range notSettled {
			if api.ErrorCode == code {
				return true
			}
		}
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}
