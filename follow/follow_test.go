package follow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/follow"
	"github.com/goclub/scoreboard/result"
)

// TestPrinterOrdersPerPort: results that come in completion order (Othello #6 and #7
// before #5) print in unit order per port; another port's are not held up by it; a
// unit that never gets a result holds its port for the hold only; a result without a
// sequence number, or one after its port moved on, prints as it comes.
func TestPrinterOrdersPerPort(t *testing.T) {
	var out strings.Builder
	p := follow.New(&out, time.Second)
	t0 := time.Date(2026, 11, 25, 19, 42, 0, 0, time.Local)
	add := func(port string, seq uint64, after time.Duration) {
		p.Add(&result.Record{Port: port, Problem: "othello", Seq: seq, Answer: "x\n"}, t0, t0.Add(after))
	}
	add("hall", 4, 0) // the first of a port waits its hold: #3 may still come
	add("lobby", 1, 0)
	add("hall", 3, 10*time.Millisecond)
	p.Flush(t0.Add(time.Second), false) // lobby #1 has waited its hold
	add("hall", 6, 1100*time.Millisecond)
	add("hall", 7, 1200*time.Millisecond)
	add("lobby", 2, 1300*time.Millisecond) // lobby's next: at once
	add("hall", 5, 1400*time.Millisecond)  // hall's next: with #6 and #7
	add("hall", 9, 1500*time.Millisecond)  // #8 never comes
	p.Flush(t0.Add(2400*time.Millisecond), false)
	add("hall", 0, 2500*time.Millisecond) // by hand
	p.Flush(t0.Add(2600*time.Millisecond), false)
	add("hall", 2, 2700*time.Millisecond) // very late
	if n := p.Flush(t0.Add(time.Hour), true); n != 10 {
		t.Errorf("%d printed, want 10", n)
	}
	var got []string
	for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(l)
		got = append(got, f[1]+f[3])
	}
	// lobby #1 has waited its hold at the first flush, hall #3 (10 ms younger) not
	// yet; #9 waits its hold for #8, so the result by hand comes first.
	want := "lobby#1 hall#3 hall#4 lobby#2 hall#5 hall#6 hall#7 hall#0 hall#9 hall#2"
	if strings.Join(got, " ") != want {
		t.Errorf("printed %v,\nwant    %s", got, want)
	}
}

// TestFormat: a time column, then port, problem and #seq; a multi-line answer as its
// lines, under the first; an answer that starts with a blank line shows it empty.
func TestFormat(t *testing.T) {
	at := time.Date(2026, 11, 25, 19, 42, 7, 0, time.Local)
	for _, c := range []struct {
		r    result.Record
		want string
	}{
		{result.Record{Port: "desk", Problem: "goscore", Seq: 1, Answer: "5 3\n"}, "19:42:07 desk goscore #1 5 3"},
		{result.Record{Port: "hall", Problem: "othello", Seq: 4, Answer: "(3,4)\n--------\n---WB---\n"},
			"19:42:07 hall othello #4 (3,4)\n                         --------\n                         ---WB---"},
		{result.Record{Port: "hall", Problem: "othello", Seq: 5, Answer: "\nNo legal move.\n"},
			"19:42:07 hall othello #5\n                         No legal move."},
		{result.Record{Port: "hall", Problem: "othello", Seq: 6, Error: "othello: line 3: bad row"}, "19:42:07 hall othello #6 error: othello: line 3: bad row"},
	} {
		if got := follow.Format(at, &c.r); got != c.want {
			t.Errorf("Format(%+v) =\n%s\nwant\n%s", c.r, got, c.want)
		}
	}
}

// TestLimit: --count's bound holds when one result releases several.
func TestLimit(t *testing.T) {
	var out strings.Builder
	p := follow.New(&out, time.Second)
	p.Limit(2)
	t0 := time.Now()
	for _, s := range []uint64{3, 2, 1} {
		p.Add(&result.Record{Port: "p", Problem: "goscore", Seq: s, Answer: "1 1\n"}, t0, t0)
	}
	if n := p.Flush(t0.Add(time.Hour), true); n != 2 || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("%d printed, %q; want 2", n, out.String())
	}
}
