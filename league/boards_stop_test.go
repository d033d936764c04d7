package league_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	// The hub's server as configs/league-hub.conf makes it: an account a club, whose
	// imports the hub's streams need (a bare nats-server has none of them).
	conf, err := os.ReadFile("../configs/league-hub.conf")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	c := strings.Replace(string(conf), "listen: 0.0.0.0:7422", fmt.Sprintf("listen: 127.0.0.1:%d", proctest.FreePort(t)), 1)
	c = strings.Replace(c, `store_dir: "/var/lib/nats-league"`, fmt.Sprintf("store_dir: %q", filepath.Join(root, "js")), 1)
	confPath := filepath.Join(root, "league-hub.conf")
	if err := os.WriteFile(confPath, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEAGUE_ADMIN_PASSWORD", "admin-secret")
	t.Setenv("LEAGUE_TOKEN_NORTH", "token-north")
	t.Setenv("LEAGUE_TOKEN_SOUTH", "token-south")
	srv := proctest.StartNATS(t, proctest.NATSOptions{Config: confPath, Name: "league-hub"})
	nc, err := nats.Connect(srv.URL(), nats.UserInfo("admin", "admin-secret"), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := league.Attach(ctx, nc, []league.Club{{Name: "north", Token: "token-north"}, {Name: "south", Token: "token-south"}}, 1, testLog(t))
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
