// Package follow prints results as 'scoreboard watch' shows them: a time column,
// each port's results in unit order (workers answer in completion order: Othello #6
// and #7 may come before #5), and a multi-line answer as its lines.
package follow

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/goclub/scoreboard/result"
)

// DefaultHold is how long a result waits for the units before it: long enough for a
// worker's answers that come out of order, short enough to follow a board live.
const DefaultHold = time.Second

// Printer orders and prints results. Add and Flush may be called from any goroutine.
type Printer struct {
	mu      sync.Mutex
	w       io.Writer
	hold    time.Duration
	ports   map[string]*queue
	printed int
	limit   int // print no more than this many; 0 for no end
}

// queue is a port's results held until the units before them have come.
type queue struct {
	next  uint64 // the sequence number expected next, once one was printed
	known bool
	held  []item // by sequence number
}

type item struct {
	seq  uint64
	at   time.Time // when it came
	text string
}

// New returns a printer to w that holds a result at most hold for the units before
// it (a unit that never gets a result must not stop its port's output).
func New(w io.Writer, hold time.Duration) *Printer {
	return &Printer{w: w, hold: hold, ports: map[string]*queue{}}
}

// Limit makes the printer print n results at most (watch --count); 0 for no end.
func (p *Printer) Limit(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.limit = n
}

// Add takes a result received at now, shown with the time t; it prints it, and what
// it released, when it is its port's next, and holds it otherwise. It returns how
// many results have been printed in all.
func (p *Printer) Add(r *result.Record, t, now time.Time) int {
	return p.add(r.Port, r.Seq, Format(t, r), now)
}

// AddLine is Add for a line already formatted (an unanswered unit of the history).
func (p *Printer) AddLine(port string, seq uint64, text string, now time.Time) int {
	return p.add(port, seq, text, now)
}

func (p *Printer) add(port string, seq uint64, text string, now time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.ports[port]
	if q == nil {
		q = &queue{}
		p.ports[port] = q
	}
	if seq == 0 || q.known && seq < q.next {
		// No sequence (a result published by hand), or one that comes after its
		// port has moved on: shown as it comes, never dropped.
		p.print(text)
		return p.printed
	}
	i, _ := slices.BinarySearchFunc(q.held, seq, func(it item, s uint64) int { return cmp.Compare(it.seq, s) })
	q.held = slices.Insert(q.held, i, item{seq: seq, at: now, text: text})
	p.drain(q, now, false)
	return p.printed
}

// Flush prints what has waited its hold by now, or everything held when all is set
// (the input ended). It returns how many results have been printed in all.
func (p *Printer) Flush(now time.Time, all bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, port := range slices.Sorted(maps.Keys(p.ports)) {
		p.drain(p.ports[port], now, all)
	}
	return p.printed
}

// drain prints q's results from the first held while each is the port's next, or
// has waited its hold (the units before it are late, or will never come).
func (p *Printer) drain(q *queue, now time.Time, all bool) {
	for len(q.held) > 0 {
		h := q.held[0]
		if !(all || q.known && h.seq <= q.next || now.Sub(h.at) >= p.hold) {
			return
		}
		p.print(h.text)
		q.next, q.known = h.seq+1, true
		q.held = q.held[1:]
	}
}

func (p *Printer) print(text string) {
	if p.limit > 0 && p.printed >= p.limit {
		return
	}
	fmt.Fprintln(p.w, text)
	p.printed++
}

// TimeFormat is the time column's.
const TimeFormat = "15:04:05"

// Format is a result as watch prints it: time, port, problem, #seq, then the answer's
// first line; its other lines follow, each under the first, so an answer of 9 lines
// (an Othello board) reads as the scoreboard shows it, and one that starts with a
// blank line shows that line empty. An error result says error: and the error.
func Format(t time.Time, r *result.Record) string {
	head := fmt.Sprintf("%s %s %s #%d", t.Local().Format(TimeFormat), r.Port, r.Problem, r.Seq)
	if r.Error != "" {
		return head + " error: " + r.Error
	}
	return head + Lines(strings.TrimSuffix(r.Answer, "\n"), len(head)+1)
}

// Lines is text after a header: its first line after a space, every other line on
// its own, indented by indent.
func Lines(text string, indent int) string {
	lines := strings.Split(text, "\n")
	var b strings.Builder
	if lines[0] != "" {
		b.WriteString(" " + lines[0])
	}
	pad := strings.Repeat(" ", indent)
	for _, l := range lines[1:] {
		b.WriteString("\n" + pad + l)
	}
	return b.String()
}
