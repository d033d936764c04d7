package pairing

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// OpenGotha's tournament file (its distribution/tournamentfiles/tournament.dtd):
// <Tournament> holds <Players> (each <Player name firstName rank club country
// egfPin ...>), <Games> (each <Game roundNumber tableNumber blackPlayer
// whitePlayer handicap result ...>), and <TournamentParameterSet>'s
// <GeneralParameterSet name location beginDate ...>. A game names its players by
// their key: name and first name run together, spaces out, in upper case
// (OpenGotha's Player.computeKeyString).

// gothaResults are OpenGotha's results in SGF's RE form. Both winning or both
// losing is no game result SGF has: Void.
var gothaResults = map[string]string{
	"RESULT_UNKNOWN":         "",
	"RESULT_WHITEWINS":       "W+",
	"RESULT_BLACKWINS":       "B+",
	"RESULT_EQUAL":           "0",
	"RESULT_BOTHLOSE":        "Void",
	"RESULT_BOTHWIN":         "Void",
	"RESULT_WHITEWINS_BYDEF": "W+F",
	"RESULT_BLACKWINS_BYDEF": "B+F",
	"RESULT_EQUAL_BYDEF":     "0",
	"RESULT_BOTHLOSE_BYDEF":  "Void",
	"RESULT_BOTHWIN_BYDEF":   "Void",
}

// PlayerKey is OpenGotha's key of a player: what a game's blackPlayer and
// whitePlayer say.
func PlayerKey(name, firstName string) string {
	k := strings.ToUpper(strings.ReplaceAll(name+firstName, " ", ""))
	return strings.ReplaceAll(k, "ß", "SS") // Java's upper case of ß, which Go keeps
}

// gothaGame is a game as read, its players by key.
type gothaGame struct {
	game
	black, white string
}

// ParseOpenGotha reads an OpenGotha tournament file's round (0: the latest).
func ParseOpenGotha(name string, data []byte, round int) (Round, error) {
	e := &errs{file: name}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = latin1
	d.Entity = nil // the five predefined entities only; any other is an error
	players := map[string]Player{}
	var games []gothaGame
	var info Info
	tournament := false
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				line = se.Line
			}
			e.add(line, "not an OpenGotha file as far as it goes (%v): save it again from OpenGotha; a file cut short was not saved whole", xmlErr(err))
			return Round{}, e.err()
		}
		switch t := tok.(type) {
		case xml.Directive:
			if bytes.Contains(bytes.ToUpper(t), []byte("ENTITY")) {
				e.add(line, "a DOCTYPE that declares entities is refused (an OpenGotha file has none): save the file again from OpenGotha")
				return Round{}, e.err()
			}
		case xml.StartElement:
			line, _ = d.InputPos()
			switch t.Name.Local {
			case "Tournament":
				tournament = true
			case "Player":
				p := Player{
					Name:      text(e, line, "the player's name", attr(t, "name")),
					FirstName: text(e, line, "the player's first name", attr(t, "firstName")),
					Rank:      rank(text(e, line, "the rank", attr(t, "rank"))),
					Club:      text(e, line, "the club", attr(t, "club")),
					Country:   text(e, line, "the country", attr(t, "country")),
					EGFPin:    text(e, line, "the EGF pin", attr(t, "egfPin")),
				}
				if p.Name == "" && p.FirstName == "" {
					e.add(line, "a Player without a name: give the player a name in OpenGotha")
					continue
				}
				players[PlayerKey(p.Name, p.FirstName)] = p
			case "Game":
				games = append(games, readGame(e, t, line))
			case "GeneralParameterSet":
				info.Tournament = text(e, line, "the tournament's name", attr(t, "name"))
				info.Place = text(e, line, "the location", attr(t, "location"))
				info.Date = text(e, line, "the begin date", attr(t, "beginDate"))
			}
		}
	}
	if !tournament {
		e.add(0, "no <Tournament> element: this is not an OpenGotha tournament file (File > Save in OpenGotha writes one)")
		return Round{}, e.err()
	}
	var read []game
	for _, g := range games {
		for _, s := range []struct {
			colour, key string
			p           *Player
		}{{"black", g.black, &g.Black}, {"white", g.white, &g.White}} {
			p, ok := players[PlayerKey(s.key, "")]
			if !ok {
				e.add(g.line, "round %d, table %d: the %s player %q is no Player of the file: register the player in OpenGotha, or fix the game", g.round, g.Table, s.colour, s.key)
				continue
			}
			*s.p = p
		}
		read = append(read, g.game)
	}
	// Errors of games in other rounds count too: the file is wrong, whatever round.
	r := pick(e, info, read, round)
	if err := e.err(); err != nil {
		return Round{}, err
	}
	return r, nil
}

// readGame reads a <Game>'s attributes.
func readGame(e *errs, t xml.StartElement, line int) gothaGame {
	g := gothaGame{game: game{line: line}}
	num := func(what, s string, lo, hi int) int {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < lo || n > hi {
			e.add(line, "%s %.20q: want a number from %d to %d", what, s, lo, hi)
			return 0
		}
		return n
	}
	g.round = num("roundNumber", attr(t, "roundNumber"), 1, MaxRound)
	// The file counts tables from 1, as the players see them (OpenGotha's own
	// count, from 0, is the file's less one).
	g.Table = num("tableNumber", attr(t, "tableNumber"), 1, MaxTable)
	if h := attr(t, "handicap"); h != "" {
		g.Handicap = num("handicap", h, 0, maxHandi)
	}
	res := attr(t, "result")
	if res == "" {
		res = "RESULT_UNKNOWN"
	}
	re, ok := gothaResults[res]
	if !ok {
		e.add(line, "result %.40q is none of OpenGotha's (RESULT_WHITEWINS, RESULT_BLACKWINS, ...): save the file again from OpenGotha", res)
	}
	g.Result = re
	g.black = text(e, line, "blackPlayer", attr(t, "blackPlayer"))
	g.white = text(e, line, "whitePlayer", attr(t, "whitePlayer"))
	return g
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// xmlErr is the decoder's error without its own line, which the message gives.
func xmlErr(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}

// latin1 reads an ISO-8859-1 file (older Java programs wrote it) as UTF-8; any
// other charset is refused with the decoder's error.
func latin1(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "latin-1", "iso8859-1":
	default:
		return nil, errors.New("encoding " + strconv.Quote(charset) + " is not read: save the file as UTF-8")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(data)+len(data)/4)
	for _, c := range data {
		out = utf8.AppendRune(out, rune(c))
	}
	return bytes.NewReader(out), nil
}
