package league_test

import (
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/goclub/scoreboard/league"
)

// TestLeagueHubConfRights: configs/league-hub.conf (a nats-server as the hub) gives
// the tools and the clubs exactly the rights the embedded hub gives them
// (ToolPermissions, ClubPermissions), as nats-server reads the file, each club in
// an account of its own and the tools and the admin in the hub's, with the same
// exports and imports as the embedded hub sets up (as a running server shows them).
func TestLeagueHubConfRights(t *testing.T) {
	t.Setenv("LEAGUE_ADMIN_PASSWORD", "a")
	t.Setenv("LEAGUE_TOKEN_NORTH", "n")
	t.Setenv("LEAGUE_TOKEN_SOUTH", "s")
	opts, err := server.ProcessConfigFile("../configs/league-hub.conf")
	if err != nil {
		t.Fatal(err)
	}
	if opts.NoAuthUser != "tool" {
		t.Errorf("no_auth_user %q, want tool", opts.NoAuthUser)
	}
	users := map[string]*server.User{}
	for _, u := range opts.Users {
		users[u.Username] = u
	}
	for name, acc := range map[string]string{"tool": "LEAGUE", "admin": "LEAGUE", "north": "club-north", "south": "club-south"} {
		if u := users[name]; u == nil || u.Account == nil || u.Account.Name != acc {
			t.Errorf("configs/league-hub.conf: user %s not in account %s", name, acc)
		}
	}
	opts.Port, opts.LeafNode.Port, opts.StoreDir = server.RANDOM_PORT, server.RANDOM_PORT, t.TempDir()
	opts.NoSigs, opts.NoLog = true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("a nats-server with configs/league-hub.conf not ready")
	}
	fromConf, err := league.AccountShape(ns, "LEAGUE", "north", "south")
	if err != nil {
		t.Fatal(err)
	}
	h := startHub(t, league.Club{Name: "north", Token: "n"}, league.Club{Name: "south", Token: "s"})
	embedded, err := league.AccountShape(league.Server(h), "$G", "north", "south")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the accounts: %s", embedded)
	if fromConf != embedded {
		t.Errorf("the accounts:\nconfigs/league-hub.conf %s\nembedded hub            %s", fromConf, embedded)
	}
	for name, want := range map[string]*server.Permissions{
		"tool":  league.ToolPermissions(),
		"north": league.ClubPermissions("north"),
		"south": league.ClubPermissions("south"),
	} {
		u := users[name]
		if u == nil {
			t.Errorf("configs/league-hub.conf has no user %s", name)
			continue
		}
		samePerm(t, name+" publish", u.Permissions.Publish, want.Publish)
		samePerm(t, name+" subscribe", u.Permissions.Subscribe, want.Subscribe)
	}
}

func samePerm(t *testing.T, what string, got, want *server.SubjectPermission) {
	t.Helper()
	if got == nil {
		got = &server.SubjectPermission{}
	}
	if want == nil {
		want = &server.SubjectPermission{}
	}
	for _, l := range []struct {
		kind      string
		got, want []string
	}{{"allow", got.Allow, want.Allow}, {"deny", got.Deny, want.Deny}} {
		g, w := slices.Sorted(slices.Values(l.got)), slices.Sorted(slices.Values(l.want))
		if !slices.Equal(g, w) {
			t.Errorf("%s %s: configs/league-hub.conf has %q, the embedded hub %q", what, l.kind, g, w)
		}
	}
}
