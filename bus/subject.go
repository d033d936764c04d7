package bus

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
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
)

// maxOrigin bounds the origin a result carries back: a longer one is cut.
const maxOrigin = 64

// FromOrigin reports whether a result whose origin is got answers a dump published
// with mine. A result without an origin does: it comes from a worker older than
// origins (a cluster upgraded worker by worker), and a dump published by hand without
// headers, the other kind, has seq 0, which no publisher waits for.
func FromOrigin(got, mine string) bool { return got == mine || got == "" }

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

// Stream is the JetStream stream of the history: the prefix upper-cased, with '.'
// and '-' made '_' ("scoreboard" is "SCOREBOARD").
func (s Subjects) Stream() string {
	return strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(s.Prefix))
}

// Boards is the KV bucket of each port's latest board: <STREAM>_BOARDS.
func (s Subjects) Boards() string { return s.Stream() + "_BOARDS" }

// AllDumps matches every dump of every problem and port.
func (s Subjects) AllDumps() string { return s.Prefix + ".dump.*.*" }

// AllResults matches every result.
func (s Subjects) AllResults() string { return s.Prefix + ".result.>" }

// ParseDump splits a dump subject into its problem and port.
func (s Subjects) ParseDump(subject string) (problem, port string, err error) {
	rest, ok := strings.CutPrefix(subject, s.Prefix+".dump.")
	problem, port, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || problem == "" || port == "" || strings.Contains(port, ".") {
		return "", "", fmt.Errorf("subject %q: want %s.dump.<problem>.<port>", subject, s.Prefix)
	}
	return problem, port, nil
}

// ValidToken reports whether name can stand as one subject token (a port name, a
// problem name): lowercase letters, digits, '-' and '_'.
func ValidToken(name string) bool {
	if name == "" {
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

// Result is the JSON message published on a result subject for every unit: its
// answer, or its error.
type Result struct {
	Problem string `json:"problem"`
	Port    string `json:"port"`
	Seq     uint64 `json:"seq"`
	// Line is the stream line the unit started on, when the port reader knows it.
	Line int `json:"line,omitempty"`
	// Answer is the exact text written to the port (empty on error).
	Answer string `json:"answer"`
	// Error says why the unit has no answer; absent when it has one.
	Error string `json:"error,omitempty"`
	// Result is the structured answer (scores, moves, counts), absent on error.
	Result json.RawMessage `json:"result,omitempty"`
	// SolveMicros is how long the worker took to parse and solve the unit.
	SolveMicros float64 `json:"solve_us"`
	// Origin is the dump's Scoreboard-Origin header, if it had one.
	Origin string `json:"origin,omitempty"`
	// Worker names the process that solved the unit (the micro service instance id),
	// or "reader" for a unit the port reader rejected before it reached a worker.
	Worker string `json:"worker,omitempty"`
}
