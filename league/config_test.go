package league_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/league"
)

func TestParseConfig(t *testing.T) {
	c, err := league.ParseConfig("hub.toml", []byte(`
[league]
leaf_listen = "0.0.0.0:7422"
[[club]]
name = "north"
token = "s3cret"
[[club]]
name = "south"
token = "other"
prefix = "club.south"
max_bytes = "512MiB"
max_age = "30d"
delay = "15m"
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Clubs) != 2 || c.Clubs[1].Prefix != "club.south" || c.Clubs[1].MaxBytes != "512MiB" || c.Clubs[1].MaxAge != "30d" {
		t.Fatalf("parsed %+v", c)
	}
	// The hub's defaults ([league] club_max_bytes, club_max_age) for a club without
	// its own share.
	d := league.WithDefaults(c.Clubs, "2GiB", "7d")
	if d[0].MaxBytes != "2GiB" || d[0].MaxAge != "7d" || d[1].MaxBytes != "512MiB" || d[1].MaxAge != "30d" {
		t.Fatalf("with the hub's defaults: %+v", d)
	}
	// A club's own delay on the league page; the others have the hub's.
	if got := league.ClubDelays(c.Clubs); len(got) != 1 || got["south"] != 15*time.Minute {
		t.Fatalf("the clubs' own delays: %v, want south's 15m alone", got)
	}
	for _, bad := range []struct{ file, want string }{
		{"[[club]]\nname = \"North\"\ntoken = \"t\"", `[[club]] 1 ("North") name: want lowercase`},
		{"[[club]]\nname = \"a\"\ntoken = \"t\"\n[[club]]\nname = \"a\"\ntoken = \"u\"", `[[club]] 2 ("a") name: a second club`},
		{"[[club]]\nname = \"a\"", `[[club]] 1 ("a"): missing the club's nkey`},
		{"[[club]]\nname = \"a\"\nnkey = \"SUAM\"", `[[club]] 1 ("a") nkey: want a user's public key`},
		{"[[club]]\nname = \"a\"\nnkey = \"" + testKey + "\"\ntoken = \"t\"", `[[club]] 1 ("a"): give the club an nkey or a token, not both`},
		{"[[club]]\nname = \"a\"\nnkey = \"" + testKey + "\"\n[[club]]\nname = \"b\"\nnkey = \"" + testKey + "\"", `[[club]] 2 ("b") nkey: another club's key`},
		{"[[club]]\nname = \"league\"\ntoken = \"t\"", "the hub's own JetStream domain"},
		{"[[club]]\nname = \"a\"\ntoken = \"t\"\ncolour = 1", `unknown key "club.colour"`},
		{"[league\n", "hub.toml: toml:"},
		{"[[club]]\nname = \"a\"\ntoken = \"t\"\nmax_bytes = \"lots\"", `[[club]] 1 ("a") max_bytes "lots": want a positive size`},
		{"[[club]]\nname = \"a\"\ntoken = \"t\"\nmax_age = \"0d\"", `[[club]] 1 ("a") max_age "0d": want a positive duration`},
		{"[[club]]\nname = \"a\"\ntoken = \"t\"\ndelay = \"soon\"", `[[club]] 1 ("a") delay "soon": want a duration such as 15m`},
		{"[[club]]\nname = \"a\"\ntoken = \"t\"\ndelay = \"25h\"", `[[club]] 1 ("a") delay 25h0m0s: want 0 (live) to 24h0m0s`},
		{"[[club]]\nname = \"a-b\"\ntoken = \"t\"\n[[club]]\nname = \"a_b\"\ntoken = \"u\"", `[[club]] 2 ("a_b") name: its stream LEAGUE_A_B would be club "a-b"'s too`},
	} {
		_, err := league.ParseConfig("hub.toml", []byte(bad.file))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one containing %q", bad.file, err, bad.want)
		}
	}
}

// FuzzParseConfig: any file gives clubs that pass CheckClubs, or an error.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("[league]\nlisten = \"127.0.0.1:4322\"\n[[club]]\nname = \"north\"\ntoken = \"t\"\n"))
	f.Add([]byte("[[club]]\nname = \"a\"\n[[club]]\nname = \"a\"\ntoken = \"\"\nprefix = \"x..y\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := league.ParseConfig("fuzz.toml", data)
		if err != nil {
			return
		}
		if err := league.CheckClubs(c.Clubs); err != nil {
			t.Fatalf("parsed without error, yet the clubs are bad: %v", err)
		}
	})
}

// TestShippedHubConfig: configs/league-hub.toml parses, with its two clubs.
func TestShippedHubConfig(t *testing.T) {
	data, err := os.ReadFile("../configs/league-hub.toml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := league.ParseConfig("configs/league-hub.toml", data)
	if err != nil || len(c.Clubs) != 2 {
		t.Fatalf("%+v, %v", c, err)
	}
}

// testKey is a user's public nkey.
const testKey = "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"

// TestParseConfigTables: the hub file's [tables] map a table to club.port; each
// wrong entry is said, naming it.
func TestParseConfigTables(t *testing.T) {
	good := "[[club]]\nname = \"north\"\ntoken = \"t\"\n[tables]\n1 = \"north.t1\"\n12 = \"north.t2\"\n"
	c, err := league.ParseConfig("hub.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if m := c.TableMap(); len(m) != 2 || m[1] != "north.t1" || m[12] != "north.t2" {
		t.Fatalf("tables %v", m)
	}
	bad := "[[club]]\nname = \"north\"\ntoken = \"t\"\n[tables]\n0 = \"north.t1\"\n2 = \"south.t1\"\n3 = \"north\"\n4 = \"north.t9\"\n5 = \"north.t9\"\n"
	_, err = league.ParseConfig("hub.toml", []byte(bad))
	for _, want := range []string{`[tables] "0": a table is a number from 1`, `[tables] 2 = "south.t1": "south" is no [[club]]`,
		`[tables] 3 = "north": want "club.port"`, `[tables] 4 and 5 are both north.t9`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}
