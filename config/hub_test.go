package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
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
	dir := t.TempDir()
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	seedFile, open := filepath.Join(dir, "hub.seed"), filepath.Join(dir, "open.seed")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(open, seed, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = parseRunConfig("", nil, configFlags(t, "--hub-url", "tls://h:7422", "--hub-club", "east", "--hub-seed-file", seedFile), noEnv)
	if err != nil || c.Hub.SeedFile != seedFile {
		t.Fatalf("--hub-seed-file: %+v, %v", c.Hub, err)
	}
	_, err = parseRunConfig("", nil, configFlags(t, "--hub-url", "tls://h:7422", "--hub-club", "east", "--hub-seed-file", open), noEnv)
	if err == nil || !strings.Contains(err.Error(), "--hub-seed-file: seed file "+open+" has mode 0644") || !strings.Contains(err.Error(), "chmod 600 "+open) {
		t.Errorf("a seed file others may read: %v", err)
	}
	_, err = parseRunConfig("", nil, configFlags(t, "--hub-url", "tls://h:7422", "--hub-club", "east", "--hub-tls-ca", seedFile, "--hub-seed-file", seedFile), noEnv)
	if err == nil || !strings.Contains(err.Error(), "--hub-tls-ca: the hub's CA (hub.tls_ca) "+seedFile+": no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v", err)
	}
	for _, bad := range []struct{ file, want string }{
		{"[hub]\nclub = \"north\"\ntoken = \"t\"\n", "key hub.club: the club's link needs the hub's URL"},
		{"[hub]\ntoken = \"t\"\n", "key hub.token: the club's link needs the hub's URL"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\ntoken = \"t\"\n", "the hub needs the club's name"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"North\"\ntoken = \"t\"\n", "key hub.club: club name \"North\""},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\n", "the hub needs the club's credentials"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ntoken = \"t\"\nseed_file = \"/etc/passwd\"\n", "key hub.seed_file: give the hub the club's seed file or a token, not both"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\nseed_file = \"/no/such.seed\"\n", "key hub.seed_file: seed file (hub.seed_file): stat /no/such.seed"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ncreds = \"/etc/h.creds\"\n", "key hub.creds: removed: operator mode (a creds file) is no longer taken: give the club its own key, a seed file in hub.seed_file"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ntoken = \"t\"\ntls_cert = \"/etc/passwd\"\n", "key hub.tls_cert: the club's certificate (hub.tls_cert) and its key (hub.tls_key) go together"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ntoken = \"t\"\ntls_ca = \"/no/ca.crt\"\n", "key hub.tls_ca: the hub's CA (hub.tls_ca): open /no/ca.crt"},
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
		{"[league]\ncolour = 1\n", "key league.colour: unknown key (known in [league]: listen, leaf_listen, leaf_tls_cert, leaf_tls_key, leaf_tls_client_ca, http, http_tls_cert, http_tls_key, http_delay, metrics, embed_origins, max_viewers, max_viewers_per_address, trusted_proxies, replicas, state_dir, club_max_bytes, club_max_age)"},
		{"[hub]\nlisten = \"127.0.0.1:4322\"\n", "key hub.listen: unknown key"},
		{"[league]\nreplicas = 3\n", "key league.replicas: 3 copies need a NATS cluster"},
		{"[league]\nreplicas = 7\n", "key league.replicas: 7: want 1 to 5"},
		{"[league]\nleaf_tls_cert = \"/etc/passwd\"\n", "key league.leaf_tls_cert: league.leaf_tls_cert and league.leaf_tls_key go together"},
		{"[league]\nleaf_tls_client_ca = \"/etc/passwd\"\n", "key league.leaf_tls_client_ca: the clubs' certificates are asked for in TLS"},
		{"[league]\nleaf_tls_cert = \"/no/hub.crt\"\nleaf_tls_key = \"/no/hub.key\"\n", "key league.leaf_tls_cert: stat /no/hub.crt"},
		{"[league]\nhttp_tls_key = \"/etc/passwd\"\n", "key league.http_tls_cert: league.http_tls_cert and league.http_tls_key go together"},
		{"[league]\nhttp_tls_cert = \"/no/page.crt\"\nhttp_tls_key = \"/etc/passwd\"\n", "key league.http_tls_cert: stat /no/page.crt"},
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
