// Package pairing is who plays on each board: a tournament round's games, read
// from the pairing program's file (OpenGotha's tournament XML, or a plain CSV), each
// game's table mapped to the port (the scoreboard) it is played on, and kept in a
// KV bucket beside the boards, one key per port, whose value is the port's current
// game with its round. The page reads "the game on port P now" with one get
// (ForPort) and follows changes with a watch (Watch); the daemon stamps each unit's
// record with it (result.Players), so a later round does not rename earlier units.
//
// Where it is kept, and how it reaches a league hub:
//
//   - at a club, the bucket <STREAM>_PAIRINGS (SCOREBOARD_PAIRINGS), keyed by port;
//     its stream is a source of the club's history stream, under the subjects
//     <prefix>.pairing.<port>, so the hub's sourcing of the club's history (the
//     link the boards use) brings them with no new subject opened;
//   - at a hub, LEAGUE_PAIRINGS, keyed <club>.<port> as LEAGUE_BOARDS is: the
//     boards keeper copies each club's <prefix>.pairing.<port> there after checking
//     it, and the organiser's load writes there too; the later load wins (Loaded).
//
// Who writes: only the daemon (or the hub), through its request endpoint
// (LoadSubject): the command parses the file and sends the round, the daemon
// checks it, maps the tables to its ports and writes. The tools keep their rights:
// no bucket is theirs to write.
package pairing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/result"
)

// Player is one player as the pairing program has them.
type Player struct {
	Name      string `json:"name"`
	FirstName string `json:"first_name,omitempty"`
	Rank      string `json:"rank,omitempty"` // "5d", "12k", "1p", as the file says
	Club      string `json:"club,omitempty"`
	Country   string `json:"country,omitempty"`
	EGFPin    string `json:"egf_pin,omitempty"`
}

// FullName is the player's first name and name, as a tile or a record shows it;
// a Chinese, Japanese or Korean name as its own script writes it, the family
// name first, with no space (王小明).
func (p Player) FullName() string {
	switch {
	case p.FirstName == "":
		return p.Name
	case p.Name == "":
		return p.FirstName
	case eastAsian(p.Name) && eastAsian(p.FirstName):
		return p.Name + p.FirstName
	}
	return p.FirstName + " " + p.Name
}

func eastAsian(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.In(r, unicode.Han, unicode.Hangul, unicode.Hiragana, unicode.Katakana)
}

// Game is one game of a round.
type Game struct {
	Table    int    `json:"table"`
	Black    Player `json:"black"`
	White    Player `json:"white"`
	Handicap int    `json:"handicap,omitempty"`
	// Result is the file's result in SGF's RE form ("B+", "W+", "B+F" by forfeit,
	// "0" a draw, "Void"); empty while the game is not over in the file.
	Result string `json:"result,omitempty"`
}

// Info is a round's own data, which each port's value repeats.
type Info struct {
	Tournament string `json:"tournament,omitempty"`
	Round      int    `json:"round"`
	Date       string `json:"date,omitempty"`  // YYYY-MM-DD, the round's or the tournament's
	Place      string `json:"place,omitempty"` // the tournament's location
}

// Round is one round as loaded: its data and its games.
type Round struct {
	Info
	Games []Game `json:"games"`
}

// Current is the bucket's value for one port: the game played on it now, with its
// round, and when it was loaded (the later load wins at a hub).
type Current struct {
	Info
	Game
	Loaded time.Time `json:"loaded"`
}

// Bounds of what is loaded and kept: a name longer than a tile could show, or a
// round larger than any tournament's, is refused.
const (
	MaxText   = 200     // bytes of a name, a rank, a club, a tournament's name
	MaxGames  = 5000    // games in a round
	MaxTable  = 100000  // a table's number
	MaxRound  = 1000    // a round's number
	MaxValue  = 4 << 10 // bytes of a bucket's value
	MaxFile   = 10 << 20
	maxHandi  = 9
	maxResult = 8
)

// Bucket is the KV bucket of the ports' current games under prefix: the history
// stream's name and _PAIRINGS ("SCOREBOARD_PAIRINGS"; at a hub, prefix "league",
// "LEAGUE_PAIRINGS").
func Bucket(prefix string) string { return bus.Subjects{Prefix: prefix}.Pairings() }

// Subject is where a club's history stream holds port's current game (sourced from
// the bucket): the subject the hub's sourcing brings, under league.<club>.
func Subject(prefix, port string) string { return prefix + ".pairing." + port }

// LoadSubject is the daemon's request endpoint that loads a round: the request is
// a Load's JSON, the reply a Report's. At a hub (prefix "league") it is
// "$LEAGUE_PAIRINGS.load", outside the league.> that the hub's tools may not touch.
func LoadSubject(prefix string) string {
	if prefix == HubPrefix {
		return "$LEAGUE_PAIRINGS.load"
	}
	return bus.Subjects{Prefix: prefix}.PairingsLoad()
}

// HubPrefix is a league hub's prefix (league.SubjectPrefix, not imported: the
// league imports this package).
const HubPrefix = "league"

// Load is a request to load a round: the command parsed the file; the daemon
// checks it again (Check) and maps its tables.
type Load struct {
	File  string `json:"file"` // for the messages: the file's name as given
	Round Round  `json:"round"`
}

// Report is the daemon's answer to a Load.
type Report struct {
	// Ports are the ports (at a hub, <club>.<port>) given a game, by table.
	Ports map[int]string `json:"ports,omitempty"`
	// NoPort are the round's tables that no port names: not shown, the rest applied.
	NoPort []int `json:"no_port,omitempty"`
	// Cleared are the ports whose game of the round before was taken off: they
	// show no players now.
	Cleared []string `json:"cleared,omitempty"`
	// Unseen are the ports of Ports of which the hub holds no board: [tables]
	// names only the file's clubs, so a misspelt port is as likely as one not on
	// yet. Applied all the same.
	Unseen []string `json:"unseen,omitempty"`
	// Error says why nothing was changed; empty when the round was applied.
	Error string `json:"error,omitempty"`
}

// Players is the part of c a unit's record keeps (result.Players).
func (c Current) Players() *result.Players {
	return &result.Players{
		Tournament: c.Tournament, Round: c.Round, Table: c.Table, Date: c.Date, Place: c.Place,
		Black: c.Black.FullName(), BlackRank: c.Black.Rank,
		White: c.White.FullName(), WhiteRank: c.White.Rank,
		Handicap: c.Handicap, Result: c.Result,
	}
}

// Encode is c as the bucket keeps it.
func (c Current) Encode() []byte {
	b, _ := json.Marshal(c) // strings, numbers and a time: never fails
	return b
}

// Decode reads a bucket's value, and checks it as Check does a loaded game: a
// hub takes a club's values only so.
func Decode(data []byte) (Current, error) {
	var c Current
	if len(data) > MaxValue {
		return c, fmt.Errorf("pairing: a value of %d bytes, over %d", len(data), MaxValue)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("pairing: %w", err)
	}
	if err := checkInfo(c.Info); err != nil {
		return c, err
	}
	if c.Game == (Game{}) {
		return c, nil // the port has no game in the round
	}
	return c, checkGame(c.Game)
}

// Check says what is wrong with a round, all of it, or nil: a round with no game,
// two games at one table, a text too long or not UTF-8, a number out of bounds.
func Check(r Round) error {
	var errs []error
	if err := checkInfo(r.Info); err != nil {
		errs = append(errs, err)
	}
	if len(r.Games) == 0 {
		errs = append(errs, fmt.Errorf("round %d has no games: give the round that is paired (--round N), or pair it in the program first", r.Round))
	}
	if len(r.Games) > MaxGames {
		errs = append(errs, fmt.Errorf("round %d has %d games, over %d", r.Round, len(r.Games), MaxGames))
	}
	seen := map[int]bool{}
	for _, g := range r.Games {
		if err := checkGame(g); err != nil {
			errs = append(errs, err)
		}
		if seen[g.Table] {
			errs = append(errs, fmt.Errorf("table %d has two games: give each game its own table", g.Table))
		}
		seen[g.Table] = true
	}
	return errors.Join(errs...)
}

func checkInfo(i Info) error {
	if i.Round < 1 || i.Round > MaxRound {
		return fmt.Errorf("round %d: want 1 to %d", i.Round, MaxRound)
	}
	for _, s := range []string{i.Tournament, i.Date, i.Place} {
		if err := checkText(s); err != nil {
			return fmt.Errorf("round %d: %w", i.Round, err)
		}
	}
	return nil
}

func checkGame(g Game) error {
	if g.Table < 1 || g.Table > MaxTable {
		return fmt.Errorf("table %d: want 1 to %d", g.Table, MaxTable)
	}
	if g.Handicap < 0 || g.Handicap > maxHandi {
		return fmt.Errorf("table %d: handicap %d: want 0 to %d", g.Table, g.Handicap, maxHandi)
	}
	if len(g.Result) > maxResult {
		return fmt.Errorf("table %d: result %.20q: want B+, W+, 0 or Void", g.Table, g.Result)
	}
	for _, p := range []Player{g.Black, g.White} {
		for _, s := range []string{p.Name, p.FirstName, p.Rank, p.Club, p.Country, p.EGFPin} {
			if err := checkText(s); err != nil {
				return fmt.Errorf("table %d: %w", g.Table, err)
			}
		}
	}
	return nil
}

func checkText(s string) error {
	switch {
	case len(s) > MaxText:
		return fmt.Errorf("%.40q...: %d bytes, over %d", s, len(s), MaxText)
	case !utf8.ValidString(s):
		return fmt.Errorf("%.40q: not UTF-8", s)
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%.40q: a control character", s)
	}
	return nil
}

// PortTables maps each table to the port that names it (a [[port]]'s table), and
// says which table two ports name (an error: a game is on one board).
func PortTables(ports map[string]int) (map[int]string, error) {
	tables := map[int]string{}
	var errs []error
	for port, t := range ports {
		if t == 0 {
			continue
		}
		if other, ok := tables[t]; ok {
			a, b := min(port, other), max(port, other)
			errs = append(errs, fmt.Errorf("ports %s and %s both name table %d: give each port its own table", a, b, t))
			continue
		}
		tables[t] = port
	}
	return tables, errors.Join(errs...)
}
