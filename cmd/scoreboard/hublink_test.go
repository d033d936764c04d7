package main

import (
	"strings"
	"testing"
)

// TestConfigHub: [hub] in the file, the token from the environment over the file,
// and the settings that cannot work refused, naming the key.
func TestConfigHub(t *testing.T) {
	file := []byte("[hub]\nurl = \"nats-leaf://hub.example.org:7422\"\nclub = \"north\"\ntoken = \"from-file\"\n")
	env := func(k string) (string, bool) {
		if k == "SCOREBOARD_HUB_TOKEN" {
			return "from-env", true
		}
		return "", false
	}
	c, err := parseConfig("club.toml", file, configFlags(t), env)
	if err != nil {
		t.Fatal(err)
	}
	h := hubLink(c.Hub)
	if h == nil || h.URL != "nats-leaf://hub.example.org:7422" || h.Club != "north" || h.Token != "from-env" {
		t.Fatalf("hub link %+v", h)
	}
	for _, bad := range []struct{ file, want string }{
		{"[hub]\nclub = \"north\"\n", "hub.club: a club name without the hub's URL"},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"North\"\ntoken = \"t\"\n", "club name \"North\""},
		{"[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\n", "the hub needs the club's credentials"},
		{"[hub]\nurl = \"http://h:7422\"\nclub = \"north\"\ntoken = \"t\"\n", "want nats-leaf://HOST:PORT"},
		{"[hub]\nurl = \"nats-leaf://u:p@h:7422\"\nclub = \"north\"\ntoken = \"t\"\n", "credentials do not go in the URL"},
		{"[nats]\nurl = \"nats://x:4222\"\n[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ntoken = \"t\"\n", "cannot go with nats.url"},
		{"[history]\nenabled = false\n[hub]\nurl = \"nats-leaf://h:7422\"\nclub = \"north\"\ntoken = \"t\"\n", "cannot go with the history off"},
	} {
		_, err := parseConfig("club.toml", []byte(bad.file), configFlags(t), noEnv)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one containing %q", bad.file, err, bad.want)
		}
	}
}
