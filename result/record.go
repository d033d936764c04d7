// Package result is what one unit came to: the record a worker publishes, the
// display writer checks and writes, the history keeps, the page draws and the tools
// print. It is the one shape of a result; each of those places uses it or a view of
// it. It imports nothing of the project, so every package may import it.
//
// Its JSON is the wire format of the results subjects, byte for byte what
// encoding/json writes (testdata/golden at the module's root holds it), so that
// tools built before this package keep reading it.
package result

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Record is a worker's answer to one unit, or why the unit has none.
type Record struct {
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
	// UnitDigest is bus.UnitDigest of the dump's data: which unit this answers.
	UnitDigest string `json:"unit_digest,omitempty"`
	// Worker names the process that solved the unit (the micro service instance id),
	// "daemon" for a unit no worker answered, or "reader" for a unit the port reader
	// rejected before it reached a worker.
	Worker string `json:"worker,omitempty"`
	// Outcome is OutcomeStopped for the result a daemon publishes for a unit still
	// unanswered when its drain bound ended; absent otherwise.
	Outcome string `json:"outcome,omitempty"`
	// Players are who played the unit, as the pairings loaded said when the port
	// read it (the dump's Scoreboard-Players header, which the daemon stamps): a
	// round loaded later does not rename it. Absent on a port without a game.
	Players *Players `json:"players,omitempty"`
}

// Players are a unit's game as the pairing program had it: the round, the table,
// Black and White (first name and name) with their ranks, the handicap, and the
// file's result in SGF's RE form.
type Players struct {
	Tournament string `json:"tournament,omitempty"`
	Round      int    `json:"round,omitempty"`
	Table      int    `json:"table,omitempty"`
	Date       string `json:"date,omitempty"`
	Place      string `json:"place,omitempty"`
	Black      string `json:"black,omitempty"`
	BlackRank  string `json:"black_rank,omitempty"`
	White      string `json:"white,omitempty"`
	WhiteRank  string `json:"white_rank,omitempty"`
	Handicap   int    `json:"handicap,omitempty"`
	Result     string `json:"result,omitempty"`
}

// OutcomeStopped is the Outcome of a unit the daemon stopped before any worker
// answered it: read, kept in the history, never answered.
const OutcomeStopped = "stopped"

// Stopped says whether the daemon stopped before any worker answered the unit.
func (r *Record) Stopped() bool { return r.Outcome == OutcomeStopped }

// OneLine is the record as watch prints a result on one line: port, problem, #seq,
// and the answer (its lines joined by " | "), or the error.
func (r *Record) OneLine() string {
	if r.Error != "" {
		return fmt.Sprintf("%s %s #%d error: %s", r.Port, r.Problem, r.Seq, r.Error)
	}
	answer := strings.ReplaceAll(strings.TrimSuffix(r.Answer, "\n"), "\n", " | ")
	return fmt.Sprintf("%s %s #%d %s", r.Port, r.Problem, r.Seq, answer)
}

// Kept is a result as the history keeps it, the bucket's value a page draws and a
// line `history --json` prints: the record with the unit's text, when the result
// came, and othello's board after the command. history.AppendRecord writes it onto
// the result's JSON as published, so that the record's bytes stay the publisher's.
type Kept struct {
	Record
	Unit  string   `json:"unit"`
	Time  string   `json:"time"`
	Board []string `json:"board,omitempty"`
	// Unanswered is set on a unit read and never answered (history --json).
	Unanswered bool `json:"unanswered,omitempty"`
	// StreamSeq is the stream sequence of the result a bucket's value holds.
	StreamSeq uint64 `json:"stream_seq,omitempty"`
}

// MaxPlayers bounds the players' JSON a dump's header may carry: a round's longest
// names are a few hundred bytes.
const MaxPlayers = 2048

// ParsePlayers reads a dump's Scoreboard-Players header: nil when it is empty,
// too long or not a Players object (a unit is never refused for its players).
func ParsePlayers(s string) *Players {
	if s == "" || len(s) > MaxPlayers {
		return nil
	}
	var p Players
	if json.Unmarshal([]byte(s), &p) != nil || p == (Players{}) {
		return nil
	}
	return &p
}

// JSON is p as a dump's Scoreboard-Players header carries it; "" for nil.
func (p *Players) JSON() string {
	if p == nil {
		return ""
	}
	return string(p.appendJSON(nil))
}
