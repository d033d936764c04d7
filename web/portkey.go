package web

import (
	"strings"

	"github.com/goclub/scoreboard/bus"
)

// portKey is a board's key as the bucket, the URLs and the events name a port:
// <port> on a club's page, <club>.<port> on a league hub's, whose club is then
// the first token.
type portKey struct{ club, port string }

// splitPortKey reads a key the page has taken already, checking nothing.
func splitPortKey(key string) portKey {
	if club, port, two := strings.Cut(key, "."); two {
		return portKey{club: club, port: port}
	}
	return portKey{port: key}
}

// parsePortKey reads a key from outside: false unless it is a subject token, or
// two (<club>.<port>).
func parsePortKey(key string) (portKey, bool) {
	k := splitPortKey(key)
	return k, k.String() == key && bus.ValidToken(k.port) && (k.club == "" || bus.ValidToken(k.club))
}

// validPortKey says whether key names a port (parsePortKey).
func validPortKey(key string) bool {
	_, ok := parsePortKey(key)
	return ok
}

// portOf reads a port key from an address: parsePortKey's, and on a league hub's
// page of a club in the hub's list (Delays.Listed): another spelling of a club's
// name (a_b for a-b, whose streams' names are one) is no port of the page.
func (s *Server) portOf(key string) (portKey, bool) {
	k, ok := parsePortKey(key)
	return k, ok && (k.club == "" || s.delays.Listed(k.club))
}

// isClub says whether club names one of a league hub's page's clubs: a subject
// token, in the hub's list.
func (s *Server) isClub(club string) bool {
	return bus.ValidToken(club) && s.delays.Listed(club) && s.delays.League()
}

func (k portKey) String() string {
	if k.club == "" {
		return k.port
	}
	return k.club + "." + k.port
}

// prefix is the subjects' prefix of the port's units: the page's own, or on a
// league hub's page the club's, <prefix>.<club>.
func (k portKey) prefix(page string) string {
	if k.club == "" {
		return page
	}
	return page + "." + k.club
}
