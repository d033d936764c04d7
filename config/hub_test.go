package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/goclub/scoreboard/daemon"
)

// TestConfigHub: a club's [hub] in the file, the token from the environment over
// the file, the former flags --hub and --club, and every setting that cannot work
// refused, naming the key or the flag.
func TestConfigHub(t *testing.T) {
	file := []byte("[hub]\nurl = \"nats-leaf://hub.example.org:7422\"\nclub = \"north\"\ntoken = \"from-file\"\n")
	env := func(k string) (string, bool) {
		if k == "SCOREBOARD_HUB_TOKEN" {
			return "from-env", true
		}
		return "", false
	}
	c, err := parseRunConfig("club.toml", file, configFlags(t), env)
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Hub; h.URL != "nats-leaf://hub.example.org:7422" || h.Club != "north" || h.Token != "from-env" {
		t.Fatalf("hub %+v", h)
	}
	c, err = parseRunConfig("", nil, configFlags(t, "--hub", "nats-leaf://h:7422", "--club", "south"), env)
	if err != nil || c.Hub.URL != "nats-leaf://h:7422" || c.Hub.Club != "south" {
		t.Fatalf("--hub and --club: %+v, %v", c.Hub, err)
	}
	creds := filepath.Join(t.TempDir(), "hub.creds")
	if err := os.WriteFile(creds, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = parseRunConfig("", nil, configFlags(t, "--hub-url", "tls://h:7422", "--hub-club", "east", "--hub-creds", creds), noEnv)
	if err != nil || c.Hub.Creds != creds {
		t.Fatalf("--hub-creds: %+v, %v", c.Hub, err)
	}
	for _, bad := range []struct{ file, want string }{
		{"[hub]\nclub = \"north\"\ntoken = \"t\"\n", "key hub.club: the club's link needs the hub's URL"},
		{"[hub]\ntoken = \"t\"\n", "key hub.token: the club's link needs the hub's URL"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\ntoken = \"t\"\n", "the hub needs the club's name"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"North\"\ntoken = \"t\"\n", "key hub.club: club name \"North\""},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\n", "the hub needs the club's credentials"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ntoken = \"t\"\ncreds = \"/etc/passwd\"\n", "key hub.creds: give the hub the club's token or a creds file, not both"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ncreds = \"/no/such.creds\"\n", "key hub.creds: stat /no/such.creds"},
		{"[hub]\nurl = \"http://h:7422\"\nclub = \"north\"\ntoken = \"t\"\n", "want nats-leaf://HOST:PORT"},
		{"[hub]\nurl = \"nats-leaf://h\"\nclub = \"north\"\ntoken = \"t\"\n", "want a host and a port"},
		{"[hub]\nurl = \"nats-leaf://u:p@h:7422\"\nclub = \"north\"\ntoken = \"t\"\n", "credentials do not go in the URL"},
		{"[nats]\nurl = \"nats://x:4222\"\n[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ntoken = \"t\"\n", "cannot go with nats.url"},
		{"[history]\nenabled = false\n[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ntoken = \"t\"\n", "cannot go with the history off"},
		{"[[club]]\nname = \"north\"\ntoken = \"t\"\n", "[[club]] tables are a league hub's"},
	} {
		_, err := parseRunConfig("club.toml", []byte(bad.file), configFlags(t), noEnv)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one containing %q", bad.file, err, bad.want)
		}
		if err != nil && strings.Contains(err.Error(), "u:p@") {
			t.Errorf("%q: the error shows the URL's password: %v", bad.file, err)
		}
	}
	// From the command line, the error names the flag: a usage error.
	_, err = parseRunConfig("", nil, configFlags(t, "--hub-url", "http://h:1", "--hub-club", "n"), env)
	if err == nil || !strings.Contains(err.Error(), "--hub-url: ") || !FromCommandLine(err) {
		t.Errorf("--hub-url http://h:1: %v", err)
	}
}

// TestConfigLeague: scoreboard hub's settings: [league] from the file under the
// flags, its [[club]] tables left to the league package, and a club's [hub] keys
// not the hub's.
func TestConfigLeague(t *testing.T) {
	ss := Lookup(HubKeys()...)
	flags := func(args ...string) *pflag.FlagSet {
		fs := pflag.NewFlagSet("hub", pflag.ContinueOnError)
		Bind(fs, ss, &Config{}, &daemon.PortConfig{})
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	file := []byte("[league]\nleaf_listen = \"0.0.0.0:7433\"\nhttp = \"off\"\n\n[log]\nlevel = \"debug\"\n\n[[club]]\nname = \"north\"\ntoken = \"t\"\n")
	c, err := Parse(flags("--league-listen", "127.0.0.1:4999"), ss, "hub.toml", file, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	l := c.League
	if l.Listen != "127.0.0.1:4999" || l.LeafListen != "0.0.0.0:7433" || l.HTTP != "off" || l.StateDir != "" || c.Log.Level != "debug" {
		t.Fatalf("league %+v, log %+v", l, c.Log)
	}
	c, err = Parse(flags(), ss, "", nil, noEnv)
	if err != nil || c.League.Listen != DefaultLeagueListen || c.League.LeafListen != DefaultLeagueLeafListen || c.League.HTTP != DefaultLeagueHTTP {
		t.Fatalf("defaults: %+v, %v", c.League, err)
	}
	for _, bad := range []struct{ file, want string }{
		{"[league]\nleaf_listen = \"7422\"\n", "key league.leaf_listen"},
		{"[league]\nhttp = \"nowhere\"\n", "key league.http: \"nowhere\": want HOST:PORT"},
		{"[league]\ncolour = 1\n", "key league.colour: unknown key (known in [league]: listen, leaf_listen, http, replicas, state_dir, club_max_bytes, club_max_age)"},
		{"[hub]\nlisten = \"127.0.0.1:4322\"\n", "key hub.listen: unknown key"},
		{"[league]\nreplicas = 3\n", "key league.replicas: 3 copies need a NATS cluster"},
		{"[league]\nreplicas = 7\n", "key league.replicas: 7: want 1 to 5"},
	} {
		_, err := Parse(flags(), ss, "hub.toml", []byte(bad.file), noEnv)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one containing %q", bad.file, err, bad.want)
		}
	}
}

// TestConfigExampleHub: configs/league-hub.toml, as generated, is a hub's file
// that loads at its defaults.
func TestConfigExampleHub(t *testing.T) {
	c, err := Parse(nil, Lookup(HubKeys()...), "league-hub.toml", ExampleHub(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.League.Listen != DefaultLeagueListen || c.League.LeafListen != DefaultLeagueLeafListen || c.League.Replicas != 1 {
		t.Fatalf("%+v", c.League)
	}
	if _, err := Parse(nil, Lookup(RunKeys()...), "league-hub.toml", ExampleHub(), noEnv); err == nil || !strings.Contains(err.Error(), "[[club]] tables are a league hub's") {
		t.Fatalf("run with the hub's file: %v", err)
	}
}
