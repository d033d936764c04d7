package bus_test

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/goclub/scoreboard/bus"
)

// The conf file bounds subscriptions and connections as the embedded server does
// (review-club F11).
func TestLimitsConfMatchesEmbedded(t *testing.T) {
	setConfEnv(t)
	opts, err := server.ProcessConfigFile(confFile)
	if err != nil {
		t.Fatal(err)
	}
	if opts.MaxSubs != bus.MaxSubs || opts.MaxConn != bus.MaxConns {
		t.Errorf("%s: max_subscriptions %d, max_connections %d; want %d and %d (bus.MaxSubs, bus.MaxConns)",
			confFile, opts.MaxSubs, opts.MaxConn, bus.MaxSubs, bus.MaxConns)
	}
}
