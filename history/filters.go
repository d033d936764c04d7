package history

import (
	"fmt"
	"time"

	"github.com/goclub/scoreboard/bus"
)

// Filters are a query's filters as a command line gives them (history, watch):
// text to check.
type Filters struct {
	Port, Problem, Since, Until string
	Last                        int
}

// FilterError is a filter's bad value. Filter names it (port, problem, since,
// until, last), and Text follows that name as the command line's flag: "--" +
// Filter + Text.
type FilterError struct {
	Filter, Text string
}

func (e *FilterError) Error() string { return e.Filter + e.Text }

// Query checks the filters and makes them a Query, its times read against now
// (ParseTime). The problem's name is checked as a token only: the caller knows the
// problems, and which one a wrong name meant.
func (f Filters) Query(now time.Time) (Query, error) {
	q := Query{Port: f.Port, Problem: f.Problem, Last: f.Last}
	for _, t := range []struct{ name, v string }{{"port", f.Port}, {"problem", f.Problem}} {
		if t.v != "" && !bus.ValidToken(t.v) {
			return q, &FilterError{t.name, fmt.Sprintf(" %q: want lowercase letters, digits, '-' and '_'", t.v)}
		}
	}
	if q.Last < 0 {
		return q, &FilterError{"last", fmt.Sprintf(" %d: want a positive number of units, or 0 for all", q.Last)}
	}
	for _, t := range []struct {
		name, v string
		at      *time.Time
	}{{"since", f.Since, &q.Since}, {"until", f.Until, &q.Until}} {
		if t.v == "" {
			continue
		}
		at, err := ParseTime(t.v, now)
		if err != nil {
			return q, &FilterError{t.name, " " + err.Error()}
		}
		*t.at = at
	}
	if !q.Until.IsZero() && q.Until.Before(q.Since) {
		return q, &FilterError{"until", fmt.Sprintf(" %s is before --since %s", q.Until.Format(time.RFC3339), q.Since.Format(time.RFC3339))}
	}
	return q, nil
}
