package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
)

// thief is a tool without credentials that pulls from every consumer of the
// daemon's streams by name (review F3): it lists them, and asks each for a batch
// on its own inbox, again and again, listing afresh as the names change.
type thief struct {
	mu     sync.Mutex
	stolen map[string]int            // messages taken, by stream
	names  map[string]map[string]int // the highest serial seen of each ordered consumer, by stream and id
	first  map[string]map[string]int // the first serial seen, likewise
	pulls  int                       // MSG.NEXT requests sent
	rounds int                       // rounds of listing and pulling done
	// taken is each message taken from an ordered consumer: its stream, its
	// consumer's id and serial, its stream sequence.
	taken []takenMsg
	// starts is where each ordered consumer the thief saw starts in its stream
	// (its opt_start_seq), by stream, id and serial.
	starts map[string]map[string]map[int]uint64
	// statuses counts the server's answers to the pulls that took nothing, by
	// stream, status and description.
	statuses map[string]int
}

// takenMsg is a message the thief took from an ordered consumer.
type takenMsg struct {
	stream, id string
	serial     int
	seq        uint64
}

// pulledStreams are the daemon's streams a tool may read: the history, and the
// buckets' (the page's boards, the pairings).
var pulledStreams = []string{"SCOREBOARD", "KV_SCOREBOARD_BOARDS", "KV_SCOREBOARD_PAIRINGS"}

// orderedName is an ordered consumer's name: a random id, and the serial of its
// reset (nats.go names them afresh at each one).
var orderedName = regexp.MustCompile(`^(.+)_(\d+)$`)

// steal runs the thief until stop is closed; the returned func waits for its end.
func (th *thief) steal(t *testing.T, url string, stop <-chan struct{}) (wait func()) {
	t.Helper()
	nc := toolConn(t, url)
	inbox := nats.NewInbox()
	_, err := nc.Subscribe(inbox+".>", func(m *nats.Msg) {
		// A message of the stream comes with its ack subject; a status (404, 408)
		// without.
		// $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>
		parts := strings.Split(m.Reply, ".")
		th.mu.Lock()
		defer th.mu.Unlock()
		if !strings.HasPrefix(m.Reply, "$JS.ACK.") || len(parts) != 9 {
			if code := m.Header.Get("Status"); code != "" {
				th.statuses[strings.TrimPrefix(m.Subject, inbox+".")+" "+code+" "+m.Header.Get("Description")]++
			}
			return
		}
		th.stolen[parts[2]]++
		if o := orderedName.FindStringSubmatch(parts[3]); o != nil {
			serial, _ := strconv.Atoi(o[2])
			seq, _ := strconv.ParseUint(parts[5], 10, 64)
			th.taken = append(th.taken, takenMsg{stream: parts[2], id: o[1], serial: serial, seq: seq})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, stream := range pulledStreams {
				m, err := nc.Request("$JS.API.CONSUMER.NAMES."+stream, nil, 5*time.Second)
				if err != nil {
					continue
				}
				var r struct{ Consumers []string }
				if json.Unmarshal(m.Data, &r) != nil {
					continue
				}
				for _, name := range r.Consumers {
					th.note(nc, stream, name)
					// A batch that waits a second: it takes what comes while the
					// daemon's own pull waits beside it.
					req := fmt.Sprintf(`{"batch":100,"expires":%d}`, time.Second.Nanoseconds())
					if nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT."+stream+"."+name, inbox+"."+stream, []byte(req)) == nil {
						th.mu.Lock()
						th.pulls++
						th.mu.Unlock()
					}
				}
			}
			th.mu.Lock()
			th.rounds++
			th.mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { <-done }
}

// waitRounds waits, at most 30 s, until the thief has done k more rounds: its
// pulls then wait beside the daemon's own for what comes next.
func (th *thief) waitRounds(t *testing.T, k int) {
	t.Helper()
	th.mu.Lock()
	want := th.rounds + k
	th.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		th.mu.Lock()
		got := th.rounds
		th.mu.Unlock()
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the thief did %d rounds of pulls in 30 s, want %d", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// note keeps the serial of an ordered consumer's name: its resets are the serial's
// growth.
func (th *thief) note(nc *nats.Conn, stream, name string) {
	m := orderedName.FindStringSubmatch(name)
	if m == nil {
		return
	}
	n, _ := strconv.Atoi(m[2])
	th.mu.Lock()
	defer th.mu.Unlock()
	if th.names[stream] == nil {
		th.names[stream], th.first[stream] = map[string]int{}, map[string]int{}
		th.starts[stream] = map[string]map[int]uint64{}
	}
	if th.starts[stream][m[1]] == nil {
		th.starts[stream][m[1]] = map[int]uint64{}
	}
	if _, ok := th.starts[stream][m[1]][n]; !ok {
		// Where the consumer starts: after a reset, after the last message its
		// reader read.
		if r, err := nc.Request("$JS.API.CONSUMER.INFO."+stream+"."+name, nil, 5*time.Second); err == nil {
			var info struct {
				Config struct {
					OptStartSeq uint64 `json:"opt_start_seq"`
				}
			}
			if json.Unmarshal(r.Data, &info) == nil && info.Config.OptStartSeq > 0 {
				th.starts[stream][m[1]][n] = info.Config.OptStartSeq
			}
		}
	}
	if _, ok := th.first[stream][m[1]]; !ok {
		th.first[stream][m[1]] = n
	}
	th.names[stream][m[1]] = max(th.names[stream][m[1]], n)
}

// notReadAgain lists the messages taken from a live ordered consumer (one whose id
// is in ids) that no later consumer of the same reader starts at or before: the
// reader skipped them.
func (th *thief) notReadAgain(stream string, ids map[string]bool) []string {
	th.mu.Lock()
	defer th.mu.Unlock()
	var lost []string
	for _, m := range th.taken {
		if m.stream != stream || !ids[m.id] {
			continue
		}
		again := false
		for serial, start := range th.starts[stream][m.id] {
			again = again || (serial > m.serial && start <= m.seq)
		}
		if !again {
			lost = append(lost, fmt.Sprintf("%s_%d #%d (later starts %v)", m.id, m.serial, m.seq, th.starts[stream][m.id]))
		}
	}
	return lost
}

// counts says what the thief took and how often the consumers it saw were made
// again, by stream.
func (th *thief) counts() (stolen, resets map[string]int, pulls int, total int) {
	th.mu.Lock()
	defer th.mu.Unlock()
	resets = map[string]int{}
	for stream, ids := range th.names {
		for id, n := range ids {
			resets[stream] += n - th.first[stream][id]
		}
	}
	stolen = map[string]int{}
	for s, n := range th.stolen {
		stolen[s] = n
		total += n
	}
	return stolen, resets, th.pulls, total
}

// F3: a tool pulls from the daemon's own consumers, on the history stream and the
// buckets', while the device sends its units. The daemon's readers are ordered
// consumers: a message the tool took is a gap in the reader's consumer sequence,
// and the reader starts again after the last it read, so it reads the message
// again. What a user sees is whole: every unit and answer in `scoreboard history`,
// the page's board the port's last, /api/history every unit, the display's answers
// each once and in order.
func TestTrustToolPullsDaemonConsumers(t *testing.T) {
	e := startHistoryEnv(t, true)
	e.send(t, 1)
	th := &thief{stolen: map[string]int{}, names: map[string]map[string]int{}, first: map[string]map[string]int{},
		starts: map[string]map[string]map[int]uint64{}, statuses: map[string]int{}}
	stop := make(chan struct{})
	wait := th.steal(t, e.url, stop)
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			wait()
		}
	}()

	// 30 units in batches of 3, each batch's answers read whole before the next:
	// an answer written twice, or out of order, is a wrong byte in the next read.
	const n = 30
	var slowest time.Duration
	for range n / 3 {
		th.waitRounds(t, 2)
		start := time.Now()
		e.send(t, 3)
		slowest = max(slowest, time.Since(start))
	}

	// The history, read by `scoreboard history` while the tool still pulls.
	recs := e.portHistory(t)
	e.checkPortHistory(t, recs)
	e.checkBoards(t, th)

	close(stop)
	wait()
	stopped = true
	th.checkReadAgain(t, e)
	stolen, resets, pulls, total := th.counts()
	// The daemon counts its reader's resets.
	var counted float64
	bustest.Wait(t, "scoreboard_history_reader_resets_total", func() (bool, string) {
		resp, err := http.Get("http://" + e.web + "/metrics")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		page, _ := io.ReadAll(resp.Body)
		var ok bool
		counted, ok = metric(string(page), "scoreboard_history_reader_resets_total")
		return ok && (counted > 0 || stolen["SCOREBOARD"] == 0), fmt.Sprintf("%v resets counted (found %v) after %d messages taken from SCOREBOARD", counted, ok, stolen["SCOREBOARD"])
	})
	out := e.run.Output()
	restarts := strings.Count(out, "reading the history stream's results for the bucket again")
	behind := strings.Count(out, "the history stream's reader is behind")
	late := strings.Count(out, "has not stored the unit's result in time")
	th.mu.Lock()
	statuses := fmt.Sprint(th.statuses)
	th.mu.Unlock()
	t.Logf("the tool: %d pulls, took %d messages %v, refused or empty %s; the daemon's ordered consumers made again %v times (their names' serials), its reader's resets counted %v; "+
		"updater restarts %d, 'reader is behind' %d, answers past the stored-wait %d; the slowest batch of 3 answered in %v; %d history records, %d units sent",
		pulls, total, stolen, statuses, resets, counted, restarts, behind, late, slowest.Round(time.Millisecond), len(recs), e.next)
	if total == 0 {
		t.Errorf("the tool took nothing from the daemon's consumers in %d pulls: the attack did not run", pulls)
	}
}

// checkBoards waits, at most 30 s, for the port's last board in the bucket (as a
// tool reads it) and on the page, and looks for every unit once on /api/history.
func (e *toolEnv) checkBoards(t *testing.T, th *thief) {
	t.Helper()
	_, wantAnswer := faulttest.GoscoreBoard(e.next - 1)
	wantSeq := uint64(e.next)
	js := historyJetStream(t, e.url)
	kv, err := js.KeyValue(t.Context(), bus.Subjects{Prefix: bus.DefaultPrefix}.Boards())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var b struct {
			Seq    uint64
			Answer string
		}
		v, err := kv.Get(t.Context(), trustPort)
		if err == nil {
			_ = json.Unmarshal(v.Value(), &b)
		}
		problem, seq, answer := e.pageBoard(t)
		if b.Seq == wantSeq && b.Answer == wantAnswer && problem == "goscore" && seq == wantSeq && answer == wantAnswer {
			break
		}
		if time.Now().After(deadline) {
			st, rs, pulls, _ := th.counts()
			t.Fatalf("after 30 s, the bucket's board of %s is #%d %q (%v) and the page's %s #%d %q; want #%d %q (the tool: %d pulls, took %v, resets %v)",
				trustPort, b.Seq, b.Answer, err, problem, seq, answer, wantSeq, wantAnswer, pulls, st, rs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	items := e.apiHistory(t)
	var missing []uint64
	for seq := uint64(1); seq <= wantSeq; seq++ {
		if items[seq] != 1 {
			missing = append(missing, seq)
		}
	}
	if len(missing) > 0 {
		t.Errorf("/api/history of %s: units %v not shown once (of %d sent, %d items)", trustPort, missing, wantSeq, len(items))
	}
}

// checkReadAgain looks for every message the thief took from the history's live
// reader (the bucket's updater) read again: a later consumer of the same reader
// starts at or before it. A message taken last is seen missing only at the next
// one: a unit more, with the tool gone (and nothing left over on the device's
// line), until each is, at most 5.
func (th *thief) checkReadAgain(t *testing.T, e *toolEnv) {
	t.Helper()
	nc := toolConn(t, e.url)
	var lost []string
	for extra := 0; ; extra++ {
		e.send(t, 1)
		deadline := time.Now().Add(5 * time.Second)
		for {
			ids := map[string]bool{}
			for _, name := range consumers(t, nc, "SCOREBOARD") {
				th.note(nc, "SCOREBOARD", name)
				if o := orderedName.FindStringSubmatch(name); o != nil {
					ids[o[1]] = true
				}
			}
			if lost = th.notReadAgain("SCOREBOARD", ids); len(lost) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if len(lost) == 0 || extra == 4 {
			break
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d messages a tool took from the daemon's history reader were never read again by it: %v", len(lost), lost)
	}
}

// apiHistory counts /api/history's items of the port, by unit seq.
func (e *toolEnv) apiHistory(t *testing.T) map[uint64]int {
	t.Helper()
	resp, err := http.Get("http://" + e.web + "/api/history?port=" + trustPort + "&limit=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var items []struct {
		Seq    uint64 `json:"seq"`
		Answer string `json:"answer"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&items); err != nil {
		t.Fatalf("/api/history: %v", err)
	}
	seen := map[uint64]int{}
	for _, it := range items {
		if _, a := faulttest.GoscoreBoard(int(it.Seq) - 1); a == it.Answer {
			seen[it.Seq]++
		}
	}
	return seen
}
