package bus

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// DefaultPrefix is the first token of every subject the scoreboard uses.
const DefaultPrefix = "scoreboard"

// ServiceName is the name of the NATS micro service the workers form.
const ServiceName = "scoreboard"

// Headers of a dump message. A dump without them still gets a result: the port comes
// from the subject and the sequence number is then 0.
const (
	HeaderPort = "Scoreboard-Port" // the port's name, as in the subject
	HeaderSeq  = "Scoreboard-Seq"  // the port's sequence number of the unit, from 1
	HeaderLine = "Scoreboard-Line" // the stream line the unit started on, for error messages
	// HeaderOrigin names who published the dump and waits for its result (a port of a
	// daemon, a send command); the result carries it back as origin, so that two of
	// them using one port name can each tell their own results.
	HeaderOrigin = "Scoreboard-Origin"
	// HeaderAttempt is the attempt a dump is, from 1. It says that its publisher
	// publishes it again when no answer comes in time (a daemon's port does): a
	// worker that cannot solve it (stopping, overloaded) hands it back by not
	// answering, so that another worker answers the next attempt, rather than
	// giving it an error result that would be written as the unit's outcome.
	HeaderAttempt = "Scoreboard-Attempt"
	// HeaderPlayers is the game on the dump's port when it read the unit, as
	// result.Players' JSON: the worker copies it into the result (its players).
	HeaderPlayers = "Scoreboard-Players"
)

// HeaderMsgID is JetStream's deduplication header: the history stream stores a message
// whose id it has seen within its duplicates window only once. Set by the publishers
// of dumps and results that carry an origin and a seq (DumpID, ResultID), so a dump
// published again after a timeout, and a second result for one unit (a late worker,
// or the daemon's error result), are kept once: the first wins, as on the port.
const HeaderMsgID = "Nats-Msg-Id"

// HeaderTime is when a result was published, by its publisher's clock (RFC 3339, UTC):
// the club's time of a result that reaches a league hub later, since the hub's
// LEAGUE stream stamps a sourced message with the time it came in (a catch-up's).
const HeaderTime = "Scoreboard-Time"

// FormatTime is t as HeaderTime carries it.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseTime reads HeaderTime's value; false when it is absent or not a time.
func ParseTime(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

// DumpID is the Nats-Msg-Id of the dump numbered seq by origin; "" (no id, so kept
// every time) for a dump without both, such as one published by hand.
func DumpID(origin string, seq uint64) string { return msgID("d.", origin, seq) }

// ResultID is the Nats-Msg-Id of the result of the dump numbered seq by origin,
// whoever publishes it: every worker that answers it, and the daemon when none did.
func ResultID(origin string, seq uint64) string { return msgID("r.", origin, seq) }

// ParseResultID is ResultID's inverse: the origin and seq a result's Nats-Msg-Id
// names; ok is false for any other id.
func ParseResultID(id string) (origin string, seq uint64, ok bool) {
	rest, found := strings.CutPrefix(id, "r.")
	i := strings.LastIndexByte(rest, '.')
	if !found || i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(rest[i+1:], 10, 64)
	if err != nil || seq == 0 {
		return "", 0, false
	}
	return rest[:i], seq, true
}

func msgID(kind, origin string, seq uint64) string {
	if origin == "" || seq == 0 {
		return ""
	}
	return kind + origin + "." + strconv.FormatUint(seq, 10)
}

// MaxOrigin bounds the origin a result carries back: a longer one is cut.
const MaxOrigin = 64

// UnitDigest is what a result carries to say which unit it answers: the first 16
// bytes of the SHA-256 of the dump's data, in hex. A publisher compares it with its
// own unit's: a dump forged with its reply subject, origin and seq, but another unit,
// gets a result that does not match.
func UnitDigest(unit []byte) string {
	sum := sha256.Sum256(unit)
	return hex.EncodeToString(sum[:16])
}

// Dumped is what a publisher knows of a dump it sent, to check the reply that claims
// to answer it.
type Dumped struct {
	// Problem and Port are the dump subject's: a result must echo them (workers
	// take them from the subject the dump came on), so that the answer to a copy
	// of the dump published on another problem's or port's subject is refused.
	// Empty: not checked.
	Problem, Port string
	Seq           uint64
	Origin        string
	Digest        string // UnitDigest of the unit
	MaxAnswer     int    // the problem's longest answer (engine.Limits.MaxAnswer)
}

// Why a reply is not the answer to a dump.
var (
	ErrNotMine     = errors.New("not for this publisher's dumps (another origin, or none: a worker older than the origins)")
	ErrOtherUnit   = errors.New("answers another unit (its digest differs, or it has none: a worker older than the digests)")
	ErrTooLong     = errors.New("longer than any answer of the problem")
	ErrOtherSeq    = errors.New("for another sequence number than its reply subject's")
	ErrOtherDump   = errors.New("answers a copy of the dump published on another subject (another problem or port)")
	errNoMaxAnswer = errors.New("the problem has no answer bound")
)

// Check says why a reply carrying seq, origin, digest and an answer of n bytes is
// not the answer to d, or nil if it is. A result without an origin or a digest is
// refused: anyone able to publish where the publisher listens could send one.
func (d Dumped) Check(seq uint64, origin, digest string, n int) error {
	switch {
	case origin != d.Origin:
		return ErrNotMine
	case seq != d.Seq:
		return fmt.Errorf("seq %d, want %d: %w", seq, d.Seq, ErrOtherSeq)
	case digest != d.Digest:
		return ErrOtherUnit
	case d.MaxAnswer <= 0:
		return errNoMaxAnswer
	case n > d.MaxAnswer:
		return fmt.Errorf("%d bytes, at most %d: %w", n, d.MaxAnswer, ErrTooLong)
	}
	return nil
}

// CheckSubject says why a reply echoing problem and port is not for d's dump
// subject, or nil if it is.
func (d Dumped) CheckSubject(problem, port string) error {
	if (d.Problem != "" && problem != d.Problem) || (d.Port != "" && port != d.Port) {
		return fmt.Errorf("for %.40q port %.40q, not %q port %q: %w", problem, port, d.Problem, d.Port, ErrOtherDump)
	}
	return nil
}

// NewOrigin makes a Scoreboard-Origin: random, so that it is one publisher's own.
func NewOrigin() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// Subjects builds the subjects under one prefix.
type Subjects struct{ Prefix string }

// Solve is the request-reply subject of a problem's endpoint.
func (s Subjects) Solve(problem string) string { return s.Prefix + ".solve." + problem }

// Dump is where a port's units of a problem are published.
func (s Subjects) Dump(problem, port string) string {
	return s.Prefix + ".dump." + problem + "." + port
}

// Result is where the results of a port's units are published.
func (s Subjects) Result(problem, port string) string {
	return s.Prefix + ".result." + problem + "." + port
}

// Stream is the name of the JetStream stream that keeps the history of dumps and
// results: the prefix in upper case, '.' and '-' made '_' ("SCOREBOARD").
func (s Subjects) Stream() string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' {
			return '_'
		}
		return unicode.ToUpper(r)
	}, s.Prefix)
}

// Boards is the name of the KV bucket that holds each port's latest result
// ("SCOREBOARD_BOARDS").
func (s Subjects) Boards() string { return s.Stream() + "_BOARDS" }

// Pairings is the name of the KV bucket that holds the game on each port now
// ("SCOREBOARD_PAIRINGS", package pairing).
func (s Subjects) Pairings() string { return s.Stream() + "_PAIRINGS" }

// PairingsLoad is the daemon's endpoint that loads a round of pairings: a tool
// may request it; the daemon checks the round and writes its bucket.
func (s Subjects) PairingsLoad() string { return s.Prefix + ".pairings.load" }

// AllDumps matches every dump of every problem and port.
func (s Subjects) AllDumps() string { return s.Prefix + ".dump.*.*" }

// AllResults matches every result.
func (s Subjects) AllResults() string { return s.Prefix + ".result.>" }

// Repair is the subject on which the daemon's recorder copies into a replicated
// history stream, with an acknowledged publish, a message the bus carried on subject
// (a dump or a result): the stream stores it under subject again, and nothing else
// takes it, so a worker never sees a dump twice and a watcher never a result twice.
// The name is the one the repairer this replaced used: deployed servers'
// permissions keep tools off it.
func (s Subjects) Repair(subject string) string {
	return s.Prefix + ".repair." + strings.TrimPrefix(subject, s.Prefix+".")
}

// AllRepairs matches every Repair subject.
func (s Subjects) AllRepairs() string { return s.Prefix + ".repair.>" }

// ParseDump splits a dump subject into its problem and port. Both must be names
// (ValidToken), as the settings' port names are: a wildcard ("*", ">"), an empty
// or an over-long token is refused, so that nobody makes the workers answer, or the
// history keep, ports that no configuration could name.
func (s Subjects) ParseDump(subject string) (problem, port string, err error) {
	rest, ok := strings.CutPrefix(subject, s.Prefix+".dump.")
	problem, port, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || strings.Contains(port, ".") {
		return "", "", fmt.Errorf("subject %s: want %s.dump.<problem>.<port>", quoteCut(subject, 64), s.Prefix)
	}
	for _, t := range []struct{ what, tok string }{{"problem", problem}, {"port", port}} {
		if !ValidToken(t.tok) {
			return "", "", fmt.Errorf("dump subject: %s %s is no name: want 1 to %d lowercase letters, digits, '-' and '_'",
				t.what, quoteCut(t.tok, 64), MaxToken)
		}
	}
	return problem, port, nil
}

// quoteCut quotes at most n bytes of s, and says how long s was when it is cut: a
// quoted byte may take four, so a cut by runes after quoting (%.80q) let a subject
// of invalid bytes make an error of 400 bytes and more.
func quoteCut(s string, n int) string {
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:n]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// InboxPrefix starts every subject a requester of the project waits for its answer
// on: nats.go's default inbox, which the dump publishers (a port's display writer,
// send), solve, the micro clients and `nats req` all use.
const InboxPrefix = "_INBOX."

// ReplyInbox reports whether a worker may answer on reply: an inbox under
// InboxPrefix, one literal subject. Anything else (the history's $KV, $JS and repair
// subjects, the results, the dumps, $SRV, $SYS) is where the daemon's own rights
// would write on a requester's behalf, and is never answered.
func ReplyInbox(reply string) bool {
	rest, ok := strings.CutPrefix(reply, InboxPrefix)
	if !ok || rest == "" || len(reply) > MaxReply {
		return false
	}
	for tok := range strings.SplitSeq(rest, ".") {
		if tok == "" || strings.ContainsAny(tok, "*> \t\r\n") {
			return false
		}
	}
	return true
}

// MaxReply bounds a reply subject a worker answers on: nats.go's inboxes are 29
// bytes, a request's 52.
const MaxReply = 256

// MaxToken bounds a name that stands as a subject token: a port's, a problem's, a
// club's.
const MaxToken = 64

// ValidToken reports whether name can stand as one subject token (a port name, a
// problem name): 1 to MaxToken lowercase letters, digits, '-' and '_'.
func ValidToken(name string) bool {
	if name == "" || len(name) > MaxToken {
		return false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// ValidPrefix reports whether prefix can start subjects: one or more dot-separated
// tokens, each a ValidToken.
func ValidPrefix(prefix string) bool {
	for tok := range strings.SplitSeq(prefix, ".") {
		if !ValidToken(tok) {
			return false
		}
	}
	return true
}

var semVer = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

var notIdent = regexp.MustCompile(`[^0-9A-Za-z-]+`)

// SemVer makes a build version into the semantic version the micro service requires:
// "v1.2.3" becomes "1.2.3", and anything else ("dev", "") "0.0.0-" and its letters.
func SemVer(v string) string {
	if s := strings.TrimPrefix(v, "v"); semVer.MatchString(s) {
		return s
	}
	pre := strings.Trim(notIdent.ReplaceAllString(v, "-"), "-")
	if pre == "" {
		pre = "unknown"
	}
	return "0.0.0-" + pre
}
