package web

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/result"
)

// Player is one side of a game as the page shows it: the name as the tournament
// file spells it, and the rank ("3d", "12k").
type Player struct {
	Name string `json:"name"`
	Rank string `json:"rank,omitempty"`
}

// Game is who plays at a port's table in the round loaded: the tile shows it with
// the port's board. A port whose table has no game in the round has none.
type Game struct {
	Round    int    `json:"round"`
	Table    int    `json:"table"`
	Black    Player `json:"black"`
	White    Player `json:"white"`
	Handicap int    `json:"handicap,omitempty"`
	// Result is the game's result as the file has it ("B+", "W+R", "0"), empty
	// while it is played.
	Result string `json:"result,omitempty"`

	// folded are Black's and White's names as a search compares them (foldName),
	// made once when the game is kept, not for each event and stream.
	folded [2]string
}

// Bounds of what a game's text takes in an event, in runes and in the bytes of
// its JSON (an escaped "<" is 6): a board's event with its players stays under
// 1 KB (TestGameEventUnderOneKB) whatever the file spells. The page cuts a long
// name with an ellipsis anyway; the name beyond these is never shown, nor
// searched.
const (
	maxNameRunes, maxNameJSON     = 40, 100
	maxRankRunes, maxRankJSON     = 4, 12
	maxResultRunes, maxResultJSON = 8, 16
	// maxGames bounds the ports the page knows a game of: a league of 200 clubs
	// has some 800 tables.
	maxGames = 8192
)

// clipJSON is clip(s, n), shortened until its JSON takes at most max bytes.
func clipJSON(s string, n, max int) string {
	c := clip(s, n)
	for len(result.AppendJSONString(nil, c)) > max {
		_, size := utf8.DecodeLastRuneInString(c)
		c = strings.TrimRight(c[:len(c)-size], " ")
	}
	return c
}

// clip makes s fit the page: valid UTF-8, no control characters and no
// directional ones (a right-to-left override would turn the rest of a tile
// around: the page isolates each name as well), spaces as one, at most n runes.
func clip(s string, n int) string {
	var b strings.Builder
	runes, space := 0, false
	for _, r := range s {
		if runes == n {
			break
		}
		switch {
		case r == utf8.RuneError, unicode.IsControl(r), bidiControl(r):
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		}
		if space {
			if runes+1 >= n {
				break // a space, and no room for what follows it
			}
			b.WriteByte(' ')
			runes++
			space = false
		}
		b.WriteRune(r)
		runes++
	}
	return b.String()
}

// bidiControl says whether r is one of Unicode's explicit directional marks,
// embeddings, overrides and isolates: a name may not turn the text after it
// around. The joiners Persian and Indic names need (U+200C, U+200D) stay.
func bidiControl(r rune) bool {
	return r == '\u061c' || r == '\u200e' || r == '\u200f' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// clipped is g as the page keeps it (clip); nil for nil.
func (g *Game) clipped() *Game {
	if g == nil {
		return nil
	}
	c := *g
	c.Black = Player{clipJSON(g.Black.Name, maxNameRunes, maxNameJSON), clipJSON(g.Black.Rank, maxRankRunes, maxRankJSON)}
	c.White = Player{clipJSON(g.White.Name, maxNameRunes, maxNameJSON), clipJSON(g.White.Rank, maxRankRunes, maxRankJSON)}
	c.Result = clipJSON(g.Result, maxResultRunes, maxResultJSON)
	c.folded = [2]string{foldName(c.Black.Name), foldName(c.White.Name)}
	return &c
}

// appendGame appends g's JSON as encoding/json writes it.
func appendGame(d []byte, g *Game) []byte {
	d = append(d, `{"round":`...)
	d = strconv.AppendInt(d, int64(g.Round), 10)
	d = append(d, `,"table":`...)
	d = strconv.AppendInt(d, int64(g.Table), 10)
	for i, p := range []Player{g.Black, g.White} {
		d = append(d, []string{`,"black":{"name":`, `,"white":{"name":`}[i]...)
		d = result.AppendJSONString(d, p.Name)
		if p.Rank != "" {
			d = append(d, `,"rank":`...)
			d = result.AppendJSONString(d, p.Rank)
		}
		d = append(d, '}')
	}
	if g.Handicap != 0 {
		d = append(d, `,"handicap":`...)
		d = strconv.AppendInt(d, int64(g.Handicap), 10)
	}
	if g.Result != "" {
		d = append(d, `,"result":`...)
		d = result.AppendJSONString(d, g.Result)
	}
	return append(d, '}')
}

// appendGameValue appends g's JSON, null for nil, as encoding/json writes it.
func appendGameValue(d []byte, g *Game) []byte {
	if g == nil {
		return append(d, "null"...)
	}
	return appendGame(d, g)
}

// plays says whether the game has a player whose name holds q, q folded already
// (foldName).
func (g *Game) plays(q string) bool {
	return g != nil && q != "" && (strings.Contains(g.folded[0], q) || strings.Contains(g.folded[1], q))
}

// foldName is a name as a search compares it: lower case, spaces as one.
func foldName(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// WithPairings has the page follow the pairings' bucket of its prefix
// (SCOREBOARD_PAIRINGS; a hub's LEAGUE_PAIRINGS, keyed <club>.<port>) and show
// each port's game on its tile; call it before Run.
func (s *Server) WithPairings() { s.WithGames(pairing.Bucket(s.subj.Prefix), decodePairing) }

// decodePairing reads a value of the pairings' bucket: nil when the port has no
// game in the round loaded (a table of none), or when the value is none the
// pairings' package takes.
func decodePairing(_ string, value []byte) (*Game, error) {
	c, err := pairing.Decode(value)
	if err != nil || c.Table == 0 {
		return nil, err
	}
	return &Game{
		Round: c.Round, Table: c.Table, Handicap: c.Handicap, Result: c.Result,
		Black: Player{Name: c.Black.FullName(), Rank: c.Black.Rank},
		White: Player{Name: c.White.FullName(), Rank: c.White.Rank},
	}, nil
}

// GameDecoder reads a value of the pairings' bucket: the game of the port its key
// names. The pairings' package gives it (the page does not read tournament files).
type GameDecoder func(key string, value []byte) (*Game, error)

// WithGames has the page follow the bucket of pairings (keyed by port, as the
// boards' bucket is), each value read by decode; call it before Run. A game goes
// through the page's delay as a board does, so a delayed club's players come out
// with its boards of that time, not before.
func (s *Server) WithGames(bucket string, decode GameDecoder) {
	s.gamesBucket, s.decodeGame = bucket, decode
	if s.delays != nil {
		s.heldGames = s.newDelayStage(s.showGame, s.delays.changed[1])
	}
}

// showGame hands a game let out (or its delete) to the hub.
func (s *Server) showGame(ctx context.Context, port string, rev uint64, value []byte, del bool) {
	if _, ok := s.portOf(port); !ok {
		s.log.Debug().Str("port", port).Msg("a game of no port of this page's clubs skipped")
		return
	}
	var g *Game
	if !del {
		var err error
		if g, err = s.decodeGame(port, value); err != nil {
			s.log.Warn().Err(err).Str("port", port).Uint64("revision", rev).Msg("game value skipped")
			return
		}
	}
	s.hub.setGame(ctx, port, g.clipped(), s.delays.Port(port) > 0)
}

// watchGames follows the pairings' bucket as the boards' are followed (follow)'.
func (s *Server) watchGames(ctx context.Context) {
	if s.decodeGame == nil {
		return
	}
	s.follow(ctx, s.gamesBucket, func(ctx context.Context, e jetstream.KeyValueEntry) {
		del := e.Operation() != jetstream.KeyValuePut
		if s.heldGames == nil {
			s.showGame(ctx, e.Key(), e.Revision(), e.Value(), del)
			return
		}
		s.heldGames.take(ctx, heldValue{rev: e.Revision(), stored: e.Created(), value: e.Value(), del: del}, e.Key())
	})
}

// errNoGame is a game filter's value that names nobody.
var errNoGame = errors.New("want ?player=NAME: 2 to 40 letters of a player's name")

// playerQuery reads ?player=: a part of a name, folded; "" for none.
func playerQuery(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	q := foldName(clip(v, maxNameRunes+1))
	if n := utf8.RuneCountInString(q); n < 2 || n > maxNameRunes || !utf8.ValidString(v) {
		return "", errNoGame
	}
	return q, nil
}

// filter is what an event stream follows: one port, or a club's ports, or the
// ports where a player plays (a folded part of a name), a club's or any; the zero
// filter is every port.
type filter struct{ port, club, player string }

// every says whether f is every port's stream, whose events are batched.
func (f filter) every() bool { return f == filter{} }

// matches says whether f follows port, whose games (before and after an event)
// are given: a stream of a player is told the game that takes the player away
// from a table too.
func (f filter) matches(port string, games ...*Game) bool {
	switch {
	case f.port != "":
		return f.port == port
	case f.club != "" && clubOf(port) != f.club:
		return false
	case f.player != "":
		for _, g := range games {
			if g.plays(f.player) {
				return true
			}
		}
		return false
	}
	return f.club != ""
}

// setGame makes g the port's game (nil: none), shown on its tile. A port without
// a tile gets one with its players, within the bounds of the tiles without a
// board, unless it is delayed (held): its game waits for its first board, as its
// state does (put), for a tile would tell when its table started.
func (h *hub) setGame(ctx context.Context, port string, g *Game, held bool) {
	h.call(ctx, func() {
		was := h.games[port]
		if g == nil {
			delete(h.games, port)
		} else if was != nil || len(h.games) < maxGames {
			h.games[port] = g
		} else {
			return
		}
		s := h.ports[port]
		if s == nil {
			if g == nil || held || !h.count(clubOf(port)) {
				return
			}
			s = &shown{stateOnly: true}
			h.ports[port] = s
		}
		nb := &Board{Port: port}
		if s.board != nil {
			c := *s.board
			nb = &c
		}
		nb.Game = g
		if s.stateOnly && nb.State == nil && g == nil {
			// A tile of its game alone, which is gone.
			h.uncountState(port, s)
			delete(h.ports, port)
			h.broadcast(port, encode(event{Type: "remove", Port: port}), was)
			return
		}
		h.show(s, nb, was)
	})
}
