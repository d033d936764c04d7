package league

import (
	"fmt"
	"strings"
)

// Stream is the hub's one stream of every club's history from before a stream per
// club (ClubStream): an upgraded hub parks it, read-only, until its units age out.
const Stream = "LEAGUE"

// SubjectPrefix is the first token of the clubs' streams' subjects at the hub:
// league.<club>.<what the club's subject has after its prefix>, such as
// league.north.result.othello.table1.
const SubjectPrefix = "league"

// Subject is where a club's subject (under its prefix) is kept at the hub.
func Subject(club, rest string) string { return SubjectPrefix + "." + club + "." + rest }

// ClubSubjects matches every subject of club at the hub.
func ClubSubjects(club string) string { return SubjectPrefix + "." + club + ".>" }

// ParseSubject splits a subject of a club's stream at the hub into its club and the club's subject after
// its prefix ("result.othello.table1").
func ParseSubject(subject string) (club, rest string, err error) {
	r, ok := strings.CutPrefix(subject, SubjectPrefix+".")
	club, rest, ok2 := strings.Cut(r, ".")
	if !ok || !ok2 || club == "" || rest == "" {
		return "", "", fmt.Errorf("subject %q: want %s.<club>.<subject>", subject, SubjectPrefix)
	}
	return club, rest, nil
}

// deliverPrefix is where a club's server delivers what the hub sources from it:
// a subject of the club's own, which no other club may publish on.
func deliverPrefix(club string) string { return "$LEAGUE." + club }

// apiPrefix is the club's domain's JetStream API, as the hub reaches it.
func apiPrefix(club string) string { return "$JS." + club + ".API" }
