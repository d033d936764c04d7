package history_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
)

var filtersNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func TestFilters(t *testing.T) {
	q, err := history.Filters{Port: "hall", Problem: "goscore", Since: "2h", Until: "1h", Last: 3}.Query(filtersNow)
	if err != nil || q.Port != "hall" || q.Problem != "goscore" || q.Last != 3 ||
		!q.Since.Equal(filtersNow.Add(-2*time.Hour)) || !q.Until.Equal(filtersNow.Add(-time.Hour)) {
		t.Fatalf("Query: %+v, %v", q, err)
	}
	for _, c := range []struct {
		f              history.Filters
		filter, inText string
	}{
		{history.Filters{Port: "Hall!"}, "port", `"Hall!"`},
		{history.Filters{Problem: "go score"}, "problem", `"go score"`},
		{history.Filters{Last: -1}, "last", "-1"},
		{history.Filters{Since: "yesterday-ish"}, "since", `"yesterday-ish"`},
		{history.Filters{Until: "soon"}, "until", `"soon"`},
		{history.Filters{Since: "1h", Until: "2h"}, "until", "is before --since"},
	} {
		_, err := c.f.Query(filtersNow)
		var fe *history.FilterError
		if !errors.As(err, &fe) || fe.Filter != c.filter || !strings.Contains(fe.Text, c.inText) {
			t.Errorf("%+v: %v; want a FilterError of %s with %q", c.f, err, c.filter, c.inText)
		}
	}
}

// FuzzFilters: any filters give a query or a FilterError, never a panic; a query
// given has valid tokens, no negative count and no until before its since.
func FuzzFilters(f *testing.F) {
	f.Add("hall", "goscore", "90m", "", 0)
	f.Add("Hall!", "", "2026-11-22T18:00", "2026-11-22", -1)
	f.Add("", "othello", "7d", "1d12h", 20)
	f.Add("a.b", "*", "2026-11-22 18:00:05", "2026-11-22T18:00:00Z", 1)
	f.Fuzz(func(t *testing.T, port, problem, since, until string, last int) {
		q, err := history.Filters{Port: port, Problem: problem, Since: since, Until: until, Last: last}.Query(filtersNow)
		if err != nil {
			var fe *history.FilterError
			if !errors.As(err, &fe) || fe.Filter == "" || fe.Text == "" {
				t.Fatalf("error %v (%T) is not a FilterError naming its filter", err, err)
			}
			return
		}
		if (port != "" && !bus.ValidToken(port)) || (problem != "" && !bus.ValidToken(problem)) || q.Last < 0 ||
			(!q.Until.IsZero() && q.Until.Before(q.Since)) {
			t.Fatalf("accepted %q %q %q %q %d: %+v", port, problem, since, until, last, q)
		}
	})
}
