package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
)

// pageEvent is a board as the hub page's events carry it.
type pageEvent struct {
	Port    string `json:"port"`
	Problem string `json:"problem"`
	Seq     uint64 `json:"seq"`
	Answer  string `json:"answer"`
	Error   string `json:"error"`
}

// pageDelays follows a hub page's event stream (/api/events): for each result
// marked sent ("<club>.<port> <seq>"), the delay to its board's event, while
// measuring; and each board event, for check.
type pageDelays struct {
	mu        sync.Mutex
	sentAt    map[string]time.Time
	delays    []time.Duration
	measuring bool
	last      map[string]uint64 // port -> the seq of its last event
	bad       []string          // what check refused
	check     func(pageEvent) string
	slow      []slowEvent     // while measuring, the results that took over slowAfter
	all       []slowEvent     // while measuring, every result's event, or its port's newer one's (slowEvents)
	seen      []seenEvent     // with coverNewer, while measuring, every board's event (overtaken)
	covered   map[string]bool // with coverNewer: the results counted in all
}

// slowAfter is the delay past which a result's event is kept as slow, to be told
// by club and time (slowReport).
const slowAfter = time.Second

// slowEvent is a result whose event took over slowAfter.
type slowEvent struct {
	key    string // "<club>.<port> <seq>"
	sentAt time.Time
	delay  time.Duration
	// newer: the page showed the port's newer result in its place (a port's
	// latest only), delay after the result was published.
	newer bool
}

// followPage follows the page's events at page (http://HOST:PORT) until the test
// ends. check, if not nil, says what is wrong with an event's board, or "".
func followPage(t *testing.T, page string, check func(pageEvent) string) *pageDelays {
	t.Helper()
	p := &pageDelays{sentAt: map[string]time.Time{}, last: map[string]uint64{}, check: check}
	resp, err := http.Get(page + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Board *pageEvent `json:"board"`
			}
			if json.Unmarshal([]byte(data), &ev) != nil || ev.Board == nil {
				continue
			}
			p.event(*ev.Board, time.Now())
		}
	}()
	return p
}

func (p *pageDelays) event(b pageEvent, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.check != nil {
		if why := p.check(b); why != "" && len(p.bad) < 20 {
			p.bad = append(p.bad, fmt.Sprintf("%s #%d: %s", b.Port, b.Seq, why))
		}
	}
	p.last[b.Port] = max(p.last[b.Port], b.Seq)
	if p.measuring && p.covered != nil {
		p.seen = append(p.seen, seenEvent{b.Port, b.Seq, now})
		p.cover(b, now)
	}
	key := fmt.Sprintf("%s %d", b.Port, b.Seq)
	if at, ok := p.sentAt[key]; ok {
		if p.measuring {
			p.delays = append(p.delays, now.Sub(at))
			if p.covered != nil {
				p.all = append(p.all, slowEvent{key: key, sentAt: at, delay: now.Sub(at)})
			}
			if now.Sub(at) > slowAfter {
				p.slow = append(p.slow, slowEvent{key: key, sentAt: at, delay: now.Sub(at)})
			}
		}
		delete(p.sentAt, key)
	}
}

// cover takes the results of b's port older than b and not seen, which the page
// shows b in place of, as shown now (once): a stall of a port's results shows as
// results the page never showed, more than as late ones.
func (p *pageDelays) cover(b pageEvent, now time.Time) {
	for key, at := range p.sentAt {
		port, seq, _ := strings.Cut(key, " ")
		n, err := strconv.ParseUint(seq, 10, 64)
		if port != b.Port || err != nil || n >= b.Seq || p.covered[key] {
			continue
		}
		p.covered[key] = true
		p.all = append(p.all, slowEvent{key: key, sentAt: at, delay: now.Sub(at), newer: true})
	}
}

// coverNewer makes p keep, while measuring, every board's event (seen) and the
// results a newer one of their port was shown in place of (cover), for
// slowEvents; a test of many clubs' events does without the cost.
func (p *pageDelays) coverNewer() {
	p.mu.Lock()
	p.covered = map[string]bool{}
	p.mu.Unlock()
}

// sent marks a result published now.
func (p *pageDelays) sent(key string) {
	p.mu.Lock()
	p.sentAt[key] = time.Now()
	p.mu.Unlock()
}

// measure turns the measuring of delays on or off.
func (p *pageDelays) measure(on bool) {
	p.mu.Lock()
	p.measuring = on
	if on && p.covered != nil {
		// What was left unseen before is not the measured time's (cover).
		for key := range p.sentAt {
			p.covered[key] = true
		}
	}
	p.mu.Unlock()
}

// take returns the delays measured, sorted, and how many results were not seen.
func (p *pageDelays) take() (delays []time.Duration, pending int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := slices.Clone(p.delays)
	slices.Sort(d)
	return d, len(p.sentAt)
}

// slowReport tells the slow results (slowAfter) and those not seen by club: how
// many, when the first and last were published (from t0), the longest delay.
func (p *pageDelays) slowReport(t0 time.Time) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	type span struct {
		n, unseen   int
		first, last time.Duration
		most        time.Duration
	}
	by := map[string]*span{}
	note := func(key string, at time.Time, d time.Duration, unseen bool) {
		club, _, _ := strings.Cut(key, ".")
		s := by[club]
		rel := at.Sub(t0)
		if s == nil {
			s = &span{first: rel, last: rel}
			by[club] = s
		}
		s.n++
		if unseen {
			s.unseen++
		}
		s.first, s.last, s.most = min(s.first, rel), max(s.last, rel), max(s.most, d)
	}
	for _, e := range p.slow {
		note(e.key, e.sentAt, e.delay, false)
	}
	for key, at := range p.sentAt {
		if at.After(t0) {
			note(key, at, 0, true)
		}
	}
	var out []string
	for club, s := range by {
		out = append(out, fmt.Sprintf("%s: %d slow or unseen (%d unseen), published %v to %v into the window, the longest %v",
			club, s.n, s.unseen, s.first.Round(time.Second), s.last.Round(time.Second), s.most.Round(100*time.Millisecond)))
	}
	slices.Sort(out)
	return out
}

// lastSeq is the seq of port's last event.
func (p *pageDelays) lastSeq(port string) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last[port]
}

// refused is what check refused of the events so far.
func (p *pageDelays) refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.bad)
}

// percentile is the p-th of sorted delays d; -1 when there are none.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return -1
	}
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

// hubProcess is a `scoreboard hub` process with its page, on free ports, and its
// clubs, each with the token token-<name>.
type hubProcess struct {
	*proctest.Process
	hubPort, leafPort int
	page              string // http://HOST:PORT
}

func startHubProcess(t *testing.T, bin, root string, clubs ...string) *hubProcess {
	t.Helper()
	return startHubProcessTables(t, bin, root, "", clubs...)
}

// startHubProcessTables is startHubProcess with more [[club]] tables.
func startHubProcessTables(t *testing.T, bin, root, tables string, clubs ...string) *hubProcess {
	t.Helper()
	h := &hubProcess{hubPort: proctest.FreePort(t), leafPort: proctest.FreePort(t)}
	httpPort := proctest.FreePort(t)
	h.page = fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	conf := fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\n",
		h.hubPort, h.leafPort, httpPort, filepath.Join(root, "hub"))
	for _, c := range clubs {
		conf += fmt.Sprintf("[[club]]\nname = %q\ntoken = \"token-%s\"\n", c, c)
	}
	conf += tables
	path := filepath.Join(root, "hub.toml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	h.Process = proctest.Start(t, bin, "hub", "--config", path, "--log-format", "json")
	h.WaitOutput("league hub running", 30*time.Second)
	// The hub says it runs once its page listens: a first GET right after the line
	// is taken (it came 263 ms before the listener under the load stage's loads
	// while the line was said before the page was opened, e5d722a).
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", httpPort), 30*time.Second)
	if err != nil {
		t.Fatalf("the hub said it runs, and its page refused a connection: %v", err)
	}
	c.Close()
	return h
}
