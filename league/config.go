// Package league is the hub of a league: many club rooms, each a scoreboard daemon
// whose embedded server joins the hub as a leaf node with a JetStream domain of its
// own, and one hub with a stream per club (LEAGUE_<CLUB>, within the club's share of
// its store) that sources the club's history stream across its domain, with the
// club's name put in the subjects. It holds the hub's
// configuration (the clubs and their credentials), the authentication of the
// clubs' leaf connections, the stream and its sources, and what the hub knows of
// each club's link.
package league

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/web"
)

// Club is a club the hub takes in: its name (its JetStream domain, its user at the
// hub) and its credentials, either its public nkey (NKey, "U...": the club signs
// the hub's nonce with the seed it alone holds) or a token. Prefix is the subjects'
// prefix of the club's daemon, bus.DefaultPrefix when empty.
type Club struct {
	Name   string `toml:"name"`
	NKey   string `toml:"nkey"`
	Token  string `toml:"token"`
	Prefix string `toml:"prefix"`
	// MaxBytes and MaxAge are the club's share of the hub's store (its stream
	// LEAGUE_<CLUB>): "512MiB", "30d"; empty: the hub's league.club_max_bytes and
	// league.club_max_age (WithDefaults), else DefaultClubMaxBytes and
	// DefaultClubMaxAge.
	MaxBytes string `toml:"max_bytes"`
	MaxAge   string `toml:"max_age"`
	// Delay holds the club's units back from the league page: "15m"; empty: the
	// hub's league.http_delay (ClubDelays).
	Delay string `toml:"delay"`
}

// Config is what this package reads of the hub's configuration file: one [[club]]
// table per club. The file's other tables ([league], [nats], [log]) are the hub's
// settings, which the config package reads and checks.
type Config struct {
	Clubs []Club `toml:"club"`
	// Tables maps a tournament table to the club.port it is played on, for the
	// organiser's pairings loads at the hub (scoreboard pairings load --league).
	Tables map[string]string `toml:"tables"`
}

// TableMap is the file's [tables], checked by ParseConfig.
func (c Config) TableMap() map[int]string {
	t, _ := ParseTables(c.Tables, Names(c.Clubs))
	return t
}

// Domain is the hub's own JetStream domain; no club may take it.
const Domain = "league"

// ParseConfig reads a hub configuration file's contents; file names it in errors.
// Every error found is returned, each naming the table and the key.
func ParseConfig(file string, data []byte) (Config, error) {
	var c Config
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w (the hub's file has one [[club]] table per club; configs/league-hub.toml is an example)", file, err)
	}
	var errs []error
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "club" {
			errs = append(errs, fmt.Errorf("%s: unknown key %q (a [[club]] table has name, nkey or token, prefix, max_bytes, max_age and delay)", file, k.String()))
		}
	}
	if err := CheckClubs(c.Clubs); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", file, err))
	}
	if _, err := ParseTables(c.Tables, Names(c.Clubs)); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", file, err))
	}
	return c, errors.Join(errs...)
}

// CheckClubs says everything wrong with a list of clubs: a name that is not a
// subject token or is the hub's domain, a name twice, neither a key nor a token or
// both, a key that is no user's public nkey or is another club's, a bad prefix.
func CheckClubs(clubs []Club) error {
	var errs []error
	seen, seenKey := map[string]bool{}, map[string]bool{}
	streams := map[string]string{} // a club's stream -> its club
	for i, c := range clubs {
		where := fmt.Sprintf("[[club]] %d", i+1)
		if c.Name != "" {
			where += fmt.Sprintf(" (%q)", c.Name)
		}
		switch {
		case !bus.ValidToken(c.Name):
			errs = append(errs, fmt.Errorf("%s name: want lowercase letters, digits, '-' and '_' (the club's --hub-club)", where))
		case c.Name == Domain:
			errs = append(errs, fmt.Errorf("%s name: %q is the hub's own JetStream domain; give the club another name", where, Domain))
		case seen[c.Name]:
			errs = append(errs, fmt.Errorf("%s name: a second club of this name; each club needs its own", where))
		}
		seen[c.Name] = true
		switch {
		case c.NKey != "" && c.Token != "":
			errs = append(errs, fmt.Errorf("%s: give the club an nkey or a token, not both", where))
		case c.NKey != "":
			if !nkeys.IsValidPublicUserKey(c.NKey) {
				errs = append(errs, fmt.Errorf("%s nkey: want a user's public key (U..., 56 characters), as scoreboard hub key prints it; never the seed (S...)", where))
			} else if seenKey[c.NKey] {
				errs = append(errs, fmt.Errorf("%s nkey: another club's key; each club needs its own (scoreboard hub key %s --out FILE)", where, c.Name))
			}
			seenKey[c.NKey] = true
		case c.Token == "":
			errs = append(errs, fmt.Errorf("%s: missing the club's nkey (scoreboard hub key %s --out FILE makes it) or token", where, c.Name))
		case strings.ContainsAny(c.Token, " \t\r\n"):
			errs = append(errs, fmt.Errorf("%s token: contains white space", where))
		}
		if c.Prefix != "" && !bus.ValidPrefix(c.Prefix) {
			errs = append(errs, fmt.Errorf("%s prefix %q: want dot-separated tokens of lowercase letters, digits, '-' and '_'", where, c.Prefix))
		}
		errs = append(errs, c.checkShare(where, streams))
		if _, err := c.delay(); err != nil {
			errs = append(errs, fmt.Errorf("%s %w", where, err))
		}
	}
	return errors.Join(errs...)
}

// delay is the club's own delay on the league page; 0 when it has none.
func (c Club) delay() (time.Duration, error) {
	if c.Delay == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(c.Delay)
	if err == nil {
		err = web.CheckDelay(d)
	} else {
		err = fmt.Errorf("%q: want a duration such as 15m or 90s", c.Delay)
	}
	if err != nil {
		return 0, fmt.Errorf("delay %w", err)
	}
	return d, nil
}

// ClubDelays is the delay of each club that has its own ([[club]] delay), for
// the league page (web.Delays); the others have the hub's league.http_delay. The
// clubs are checked (CheckClubs).
func ClubDelays(clubs []Club) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, c := range clubs {
		if d, err := c.delay(); err == nil && c.Delay != "" {
			out[c.Name] = d
		}
	}
	return out
}

func (c Club) prefix() string {
	if c.Prefix == "" {
		return bus.DefaultPrefix
	}
	return c.Prefix
}

// names lists the clubs' names, sorted.
func names(clubs []Club) []string {
	var n []string
	for _, c := range clubs {
		n = append(n, c.Name)
	}
	slices.Sort(n)
	return n
}
