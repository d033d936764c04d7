package league_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
)

// TestLeagueBoardsStopWhileServerGone: a hub on a nats-server of its own
// (scoreboard hub --nats-url) stopped while that server is gone, before its
// bucket is set up, stops cleanly: RunBoards returns nil, not the set-up's
// "context canceled", which made `scoreboard hub` exit 1 on SIGTERM (systemd then
// marks scoreboard-hub.service failed after a plain systemctl stop).
func TestLeagueBoardsStopWhileServerGone(t *testing.T) {
	srv := proctest.StartNATS(t, proctest.NATSOptions{JetStream: true})
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := league.Attach(ctx, nc, []league.Club{{Name: "north", Token: "token-north"}}, 1, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	stop, cancelStop := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancelStop()
	if err := h.RunBoards(stop); err != nil {
		t.Errorf("RunBoards stopped while the hub's server was gone: %v, want nil", err)
	}
}
