package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/league"
)

// schedSample is what a process's threads had of the CPUs by a time, summed over
// its threads (/proc/PID/task/*/schedstat): their time on a CPU, and their time
// runnable but waiting for one.
type schedSample struct {
	at         time.Time
	run, delay time.Duration
}

func readSched(pid int) schedSample {
	s := schedSample{at: time.Now()}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, tk := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, tk.Name()))
		if err != nil {
			continue // a thread that ended meanwhile
		}
		var run, delay int64
		if n, _ := fmt.Sscanf(string(b), "%d %d", &run, &delay); n == 2 {
			s.run += time.Duration(run)
			s.delay += time.Duration(delay)
		}
	}
	return s
}

// schedTrace samples processes' schedstat every 100 ms until the test ends: how
// much of the machine's CPUs they had, and how long they waited for one.
type schedTrace struct {
	mu      sync.Mutex
	samples map[int][]schedSample
}

func traceSched(t *testing.T, pids ...int) *schedTrace {
	st := &schedTrace{samples: map[int][]schedSample{}}
	done, stopped := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, pid := range pids {
				s := readSched(pid)
				st.mu.Lock()
				st.samples[pid] = append(st.samples[pid], s)
				st.mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return st
}

// between is what pid had of the CPUs from a to b, read from the samples around
// them (span, up to 100 ms more on each side): its threads' time on a CPU and
// waiting for one.
func (st *schedTrace) between(pid int, a, b time.Time) (run, wait, span time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.samples[pid]
	var first, last *schedSample
	for k := range s {
		if !s[k].at.After(a) {
			first = &s[k]
		}
		if last == nil && !s[k].at.Before(b) {
			last = &s[k]
		}
	}
	if first == nil || last == nil {
		return 0, 0, 0
	}
	return last.run - first.run, last.delay - first.delay, last.at.Sub(first.at)
}

// slowEvent judged: a result whose event took over the bound, and whether the
// machine or the hub held it up.
type slowJudged struct {
	slowEvent
	// starved: while the result was on its way (the samples around it), the hub's
	// threads together, or the test process's (the club's server, the page's
	// reader), waited for a CPU at least as long: for all of it the process had
	// work the machine did not run.
	starved bool
	// overtaken: a result of the flooding club published after it was on the page
	// a second or more before it: the hub held this one up, not the machine the
	// whole hub.
	overtaken bool
	sched     string
}

// seenEvent is a board's event on the page: its port, seq and when it came.
type seenEvent struct {
	port string
	seq  uint64
	at   time.Time
}

// slowEvents judges the results measured (pageDelays.measure) whose event took
// bound or more: starved by st's samples of pids, overtaken by a result of port
// (publishedAt says when each of its seqs was published, or false).
func (p *pageDelays) slowEvents(bound time.Duration, st *schedTrace, port string, publishedAt func(uint64) (time.Time, bool), pids ...int) []slowJudged {
	p.mu.Lock()
	all := append([]slowEvent(nil), p.all...)
	seen := append([]seenEvent(nil), p.seen...)
	p.mu.Unlock()
	var out []slowJudged
	for _, e := range all {
		if e.delay < bound {
			continue
		}
		j := slowJudged{slowEvent: e}
		var waits []string
		for _, pid := range pids {
			run, wait, span := st.between(pid, e.sentAt, e.sentAt.Add(e.delay))
			j.starved = j.starved || span > 0 && wait >= span
			waits = append(waits, fmt.Sprintf("pid %d ran %v, waited for a CPU %v in %v", pid, run.Round(time.Millisecond), wait.Round(time.Millisecond), span.Round(time.Millisecond)))
		}
		j.sched = strings.Join(waits, "; ")
		for _, s := range seen {
			if at, ok := publishedAt(s.seq); ok && s.port == port && at.After(e.sentAt) && s.at.Before(e.sentAt.Add(e.delay-time.Second)) {
				j.overtaken = true
				break
			}
		}
		out = append(out, j)
	}
	return out
}

// resultTrace is when a club's results were stored on their way to the hub's page,
// each by the server that stored it: in the club's history, in its stream at the
// hub, as its board in the hub's bucket. With the page's events, it tells where a
// slow result waited.
type resultTrace struct {
	club string
	mu   sync.Mutex
	at   map[string]*traceTimes // "<club>.<port> <seq>"
}

type traceTimes struct{ history, stream, board time.Time }

// traceResults starts a trace of club's results: the boards of the club the
// hub's bucket stores from now on, watched with js (the hub's).
func traceResults(t *testing.T, ctx context.Context, js jetstream.JetStream, club string) *resultTrace {
	t.Helper()
	tr := &resultTrace{club: club, at: map[string]*traceTimes{}}
	kv, err := js.KeyValue(ctx, league.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	w, err := kv.Watch(ctx, club+".>", jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop() })
	go func() {
		for e := range w.Updates() {
			if e == nil {
				continue
			}
			if key, ok := traceKey(club, e.Value()); ok {
				tr.mu.Lock()
				tr.times(key).board = e.Created()
				tr.mu.Unlock()
			}
		}
	}()
	return tr
}

func (tr *resultTrace) times(key string) *traceTimes {
	tt := tr.at[key]
	if tt == nil {
		tt = &traceTimes{}
		tr.at[key] = tt
	}
	return tt
}

// traceKey is a result's "<club>.<port> <seq>", from its JSON.
func traceKey(club string, data []byte) (string, bool) {
	var r struct {
		Port string `json:"port"`
		Seq  uint64 `json:"seq"`
	}
	if json.Unmarshal(data, &r) != nil || r.Port == "" {
		return "", false
	}
	return fmt.Sprintf("%s.%s %d", club, r.Port, r.Seq), true
}

// stored reads the times a stream stored the results it holds (under filter).
func (tr *resultTrace) stored(ctx context.Context, js jetstream.JetStream, stream, filter string, step func(*traceTimes) *time.Time) error {
	c, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		return err
	}
	for {
		b, err := c.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return err
		}
		n, pending := 0, uint64(0)
		for m := range b.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			pending = md.NumPending
			if key, ok := traceKey(tr.club, m.Data()); ok {
				tr.mu.Lock()
				*step(tr.times(key)) = md.Timestamp
				tr.mu.Unlock()
			}
		}
		if b.Error() != nil {
			return b.Error()
		}
		if n == 0 || pending == 0 {
			return nil
		}
	}
}

// steps tells how long after its publishing each of events was stored at each step.
func (tr *resultTrace) steps(events []slowJudged) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	since := func(from, to time.Time) string {
		if to.IsZero() {
			return "-"
		}
		return fmt.Sprint(to.Sub(from).Round(time.Millisecond))
	}
	var out []string
	for _, e := range events {
		tt := tr.at[e.key]
		if tt == nil {
			tt = &traceTimes{}
		}
		page := "on the page"
		if e.newer {
			page = "a newer one of its port on the page"
		}
		out = append(out, fmt.Sprintf("%s: in the club's history %s, in its stream at the hub %s, its board in the bucket %s, %s %s; starved %v (%s), overtaken %v",
			e.key, since(e.sentAt, tt.history), since(e.sentAt, tt.stream), since(e.sentAt, tt.board), page, e.delay.Round(time.Millisecond), e.starved, e.sched, e.overtaken))
	}
	return out
}

// delayJudge is what judgeDelays needs of a test: the page's events of a club's
// results (measured from from to to), the processes' samples, the trace of the
// club's results, and the flooding club's port on the page with the times its
// results were published.
type delayJudge struct {
	events    *pageDelays
	sched     *schedTrace
	trace     *resultTrace
	hubPID    int
	from, to  time.Time
	bound     time.Duration
	floodPort string
	flooded   func(seq uint64) (time.Time, bool)
	steps     func(context.Context) // reads the times the club's streams stored its results into trace
}

// judgeDelays holds a club's results to the page under j.bound at the 99th
// percentile (at most 1% of them over it; a result the page never showed, a
// newer one of its port shown in its place, by the newer one's time: a stall
// shows so more than as late results), on the product and not on the machine:
// a result over it is not counted when the machine starved the whole hub, that
// is, while it was on its way the hub's threads or the test process's (the
// club's server, the page's reader) waited for a CPU, summed, at least as long
// (slowEvents), and no result of the flooding club published after it was on the
// page a second or more before it (then the hub held this club up alone, whatever
// the machine did).
//
// Beside the load stage's loads on the shared 2-core machine (load average 11 to
// 31), TestLeagueHostileClubFault's p99 was 0.25 to 5.1 s, on the code of f71d311
// and on the code before it alike (1.25 s in the CI run that failed); a slow
// result's hub ran 10 to 135 ms and its threads waited for a CPU 3.3 to 7.7 s
// while it was on its way, its time spread over every step (the club's stream at
// the hub, the bucket, the page), no one step's stall; alone the p99 is 110 ms.
// Judged so, 19 runs of 19 passed there. A stall of 2 s put in the good club's
// follower for the check fails it at a load average of 5 to 10 (4 of 4 runs; the
// p99 of the results seen was 0.82 to 0.97 s in three: the stall's results were
// shown by newer ones), and passed in 6 of 8 beside the load stage's loads, where
// the machine starved the whole hub.
func judgeDelays(t *testing.T, ctx context.Context, j delayJudge) {
	t.Helper()
	j.events.mu.Lock()
	n := len(j.events.all) // the results measured: seen, or a newer one of their port
	j.events.mu.Unlock()
	d, _ := j.events.take()
	hubRun, hubWait, _ := j.sched.between(j.hubPID, j.from, j.to)
	testRun, testWait, _ := j.sched.between(os.Getpid(), j.from, j.to)
	slow := j.events.slowEvents(j.bound, j.sched, j.floodPort, j.flooded, j.hubPID, os.Getpid())
	heldUp := 0
	for _, e := range slow {
		if !e.starved || e.overtaken {
			heldUp++
		}
	}
	t.Logf("in the %v measured the hub ran %v and waited for a CPU %v, the test process ran %v and waited %v (its threads' sums); %d results over %v, %d of them held up by the hub (not starved, or overtaken by %s)",
		j.to.Sub(j.from).Round(time.Millisecond), hubRun.Round(time.Millisecond), hubWait.Round(time.Millisecond),
		testRun.Round(time.Millisecond), testWait.Round(time.Millisecond), len(slow), j.bound, heldUp, j.floodPort)
	if len(slow) > 0 {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		j.steps(sctx)
		cancel()
		for _, l := range j.trace.steps(slow) {
			t.Logf("slow: %s", l)
		}
	}
	if allowed := n - 1 - int(0.99*float64(n)); len(d) < 20 || heldUp > allowed {
		t.Errorf("%d of %d results (%d seen, the others in a newer one's place) over %v held up by the hub, not by a starved machine (p99 of those seen %v); want at most %d (a p99 under %v), over at least 20 results seen",
			heldUp, n, len(d), j.bound, percentile(d, 0.99), allowed, j.bound)
	}
}
