// Package engine holds the pure solvers for the scoreboard's contest problems.
//
// Each problem is a Problem: a framer that cuts a stream of contest input lines into
// units, and a solver that answers one unit with exactly the contest output for it.
// The package does no I/O beyond io.Reader and io.Writer and imports nothing of the
// project, so every other package can depend on it.
package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Problem is one contest problem.
type Problem interface {
	// Name is the problem's lowercase name, as used in subjects and on the command line.
	Name() string

	// Limits bounds what a stream of this problem may hold.
	Limits() Limits

	// NewFramer returns a framer for one stream of contest input.
	NewFramer() Framer

	// Append answers one unit, as a Framer emits it, and appends its exact contest
	// output to dst. It is the hot path: it must not allocate beyond growing dst.
	// Errors are *InputError with Line counted from the unit's first line (1).
	Append(dst, unit []byte) ([]byte, error)

	// Solve answers one unit with its structured answer, for the result messages.
	// Its AppendText gives the same bytes Append would.
	Solve(unit []byte) (Answer, error)
}

// Answer is the structured answer to one unit. It marshals to JSON.
type Answer interface {
	// AppendText appends the unit's exact contest output to dst.
	AppendText(dst []byte) []byte
}

// Limits bounds the input of a problem, so that a hostile stream cannot make a reader
// buffer without end.
type Limits struct {
	MaxLine int // longest line, in bytes, without its terminator
	MaxUnit int // largest unit, in bytes, as emitted by the framer
	// MaxAnswer is the longest contest output one unit can have, in bytes: a longer
	// text, whatever claims to be its answer, is not one.
	MaxAnswer int
}

// maxScoreLine is the length of the longest "B W\n" line whose numbers are at most
// most.
func maxScoreLine(most int) int { return 2*len(strconv.Itoa(most)) + 2 }

// Frame is what a Framer hands back: one complete unit, or an error for input that
// could not be framed and was skipped.
type Frame struct {
	// Unit is the contest input text of one unit, every line ending in "\n". It is
	// only valid until the next call to the framer: copy it to keep it.
	Unit []byte
	// Line is the stream's line number (from 1) of the unit's first line, or of the
	// first skipped line.
	Line int
	// Err is set when the lines from Line on were skipped; it is an *InputError whose
	// Line is the stream's line number.
	Err error
}

// Framer cuts a stream of contest input lines into units. It keeps whatever state the
// framing needs (a partial unit, the Othello position) and resynchronises at the next
// unit boundary after bad input.
type Framer interface {
	// Feed takes the next line of the stream, without its terminator ("\n" or "\r\n"),
	// and appends the frames it completes to dst. A nil line stands for a line that was
	// dropped before it reached the framer (too long, say): it is never valid.
	Feed(dst []Frame, line []byte) []Frame

	// End tells the framer that the stream ended, and appends an error frame if a unit
	// was cut short.
	End(dst []Frame) []Frame

	// Reset forgets the partial unit and all stream state, as if a new stream began,
	// and reports how many lines of a partial unit it dropped (0 if none).
	Reset() int
}

// InputError is bad input: where it is and what is wrong.
type InputError struct {
	Problem string
	Line    int // from 1; 0 when the error is not about one line
	Msg     string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", e.Problem, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Problem, e.Msg)
}

// Errorf returns an *InputError for problem at line.
func Errorf(problem string, line int, format string, args ...any) *InputError {
	return &InputError{Problem: problem, Line: line, Msg: fmt.Sprintf(format, args...)}
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Problem{}
)

// Register makes a problem available by name. A problem's file registers it in init.
func Register(p Problem) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[p.Name()]; dup {
		panic("engine: problem registered twice: " + p.Name())
	}
	registry[p.Name()] = p
}

// Lookup returns the problem with the given name.
func Lookup(name string) (Problem, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	p, ok := registry[name]
	return p, ok
}

// Find returns the problem with the given name, or an *UnknownProblemError.
func Find(name string) (Problem, error) {
	if p, ok := Lookup(name); ok {
		return p, nil
	}
	return nil, &UnknownProblemError{Name: name}
}

// UnknownProblemError is the one error for a problem name that is not registered:
// it names the problems there are. Hint, if set, is what the user may have meant.
type UnknownProblemError struct {
	Name, Hint string
}

func (e *UnknownProblemError) Error() string {
	hint := ""
	if e.Hint != "" {
		hint = "; did you mean " + e.Hint + "?"
	}
	return fmt.Sprintf("unknown problem %q%s (problems: %s)", e.Name, hint, strings.Join(Names(), ", "))
}

// Names lists the registered problems in alphabetical order.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LargestUnit is the largest unit of any registered problem, in bytes: what a
// message carrying one unit must have room for.
func LargestUnit() int {
	registryMu.RLock()
	defer registryMu.RUnlock()
	largest := 0
	for _, p := range registry {
		largest = max(largest, p.Limits().MaxUnit)
	}
	return largest
}
