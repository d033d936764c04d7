package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/prune"
)

// benchFill brings every club's stream at the hub to its share before the
// benchmark measures (LEAGUE_BENCH_FILL=1), so that the measured time is that of a
// hub whose streams are at their limits, being pruned (package prune), as a hub is
// after its first weeks; at the benchmark's rate a share of 33 MiB fills in some 45
// minutes. Each club publishes filler dumps of LEAGUE_BENCH_FILL_UNIT bytes (8KiB)
// until its stream at the hub has been pruned once. A filler is a goscore dump
// larger than any goscore unit: the hub's page refuses it at once as junk
// (too_large), so that it neither holds it waiting for a result nor shows it; the
// stream stores it as any other. Then, if the measured time's own units would not
// bring a stream from the keeper's low mark past its high one, each stream is
// topped up to LEAGUE_BENCH_FILL_MARGIN (half the bytes the measured time's units
// add) below its high mark, so that it is pruned again in the measured time.
//
// A filler is larger than a played unit, and the keeper reckons the units to drop
// by sequence: the first purge in the measured time drops more than a sixteenth of
// the share (the oldest units are fillers).
//
// The figures at the end: how many streams are at their share (their first
// sequence past 1) and were pruned in the measured time, the units the hub's
// keeper dropped (scoreboard_league_pruned_messages_total) against the sequences the
// streams lost at their heads (the server's own limit dropped none if they are
// equal), and what was lost on the way: the messages each club published against
// its history's, and its history's against its stream's at the hub, once the play
// stops. Only with the hub embedded (one store, the benchmark's default).
type benchFill struct {
	h         *benchHub
	clubs     []*benchClub
	js        jetstream.JetStream // the hub's
	share     int64
	unit      int
	fills     []int64  // filler messages published, a club's each
	origins   []string // the fillers' origin, a club's each: their Nats-Msg-Ids'
	overhead  int64    // what the hub's store takes for a message beyond its data
	first     []uint64
	pruned    float64
	windowAt  time.Time
	serials   map[string]int // each club's follower's serial at the measured time's start
	fillSpent time.Duration
}

func newBenchFill(t *testing.T, h *benchHub, clubs []*benchClub) *benchFill {
	t.Helper()
	if os.Getenv("LEAGUE_BENCH_FILL") == "" {
		return nil
	}
	if h.mode != "embedded" {
		t.Fatalf("LEAGUE_BENCH_FILL: only with the hub embedded, not %s", h.mode)
	}
	share, err := history.ParseSize(benchClubShare)
	if err != nil {
		t.Fatalf("LEAGUE_BENCH_CLUB_SHARE %q: %v", benchClubShare, err)
	}
	unit := 8 << 10
	if v := os.Getenv("LEAGUE_BENCH_FILL_UNIT"); v != "" {
		n, err := history.ParseSize(v)
		if err != nil || n <= 2452 || n > 512<<10 {
			t.Fatalf("LEAGUE_BENCH_FILL_UNIT %q: want a size above a goscore unit's largest (2452 bytes) and at most 512KiB", v)
		}
		unit = int(n)
	}
	nc, err := nats.Connect(h.tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	return &benchFill{h: h, clubs: clubs, js: js, share: share, unit: unit, fills: make([]int64, len(clubs)), origins: make([]string, len(clubs))}
}

// filler is a filler of n bytes: a line of a goscore board over and over.
func filler(n int) []byte {
	b := []byte(strings.Repeat(" + @ O + + + + + + + + + + + + + + + +\n", n/39+1))
	return b[:n]
}

// publish publishes n fillers of size bytes as club i, as a port publishes its
// dumps and hands them to the club's recorder (benchClub), and waits for its
// history to have them: at most fillWindow unacked at a time, as fast as the
// stream acks them. Each has its Nats-Msg-Id, as a port's dumps have: one the
// recorder sends again after a lost ack is stored once.
func (f *benchFill) publish(t *testing.T, i int, n int64, size int) {
	c, data := f.clubs[i], filler(size)
	if f.origins[i] == "" {
		f.origins[i] = bus.NewOrigin()
	}
	settle := func(held int) bool {
		if c.settle(held, 5*time.Minute) {
			return true
		}
		t.Errorf("club %s: filler: its recorder still holds %d not stored after 5 minutes (stored %d, sent again %d, given up %d)",
			c.name, c.rec.Held(), c.rec.Stored(), c.rec.Resent(), c.rec.Dropped())
		return false
	}
	var busErrs int
	var busErr error
	for k := range n {
		f.fills[i]++
		m := nats.NewMsg("scoreboard.dump.goscore.fill")
		m.Data = data
		m.Header.Set(bus.HeaderMsgID, bus.DumpID(f.origins[i], uint64(f.fills[i])))
		c.rec.Record(m)
		// On the bus too, as a port's dump; one the connection does not take
		// (closed by its server) the recorder still has, as a daemon's does.
		if err := c.nc.PublishMsg(m); err != nil {
			busErrs, busErr = busErrs+1, err
		}
		if k%fillWindow == fillWindow-1 && !settle(fillWindow) {
			return
		}
	}
	settle(0)
	if busErrs > 0 {
		t.Logf("club %s: %d fillers not published on the bus (the last: %v); recorded", c.name, busErrs, busErr)
	}
}

// fillWindow is how many fillers a club has unacked at most: the 32 a flush of
// the core publishes bounded before the clubs recorded as the daemon does.
const fillWindow = 32

// state is club i's stream's state at the hub.
func (f *benchFill) state(i int) (jetstream.StreamState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := f.js.Stream(ctx, league.ClubStream(f.clubs[i].name))
	if err != nil {
		return jetstream.StreamState{}, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return jetstream.StreamState{}, err
	}
	return info.State, nil
}

// states is every club's stream's state at the hub, by club; one not read is
// zero, and err says how many were not.
func (f *benchFill) states() (out []jetstream.StreamState, err error) {
	out = make([]jetstream.StreamState, len(f.clubs))
	failed := 0
	var last error
	for i := range f.clubs {
		var e error
		if out[i], e = f.state(i); e != nil {
			failed, last = failed+1, e
		}
	}
	if failed > 0 {
		return out, fmt.Errorf("%d of %d streams at the hub not read, the last: %w", failed, len(f.clubs), last)
	}
	return out, nil
}

// mustStates is states, the test failing if one is not read.
func (f *benchFill) mustStates(t *testing.T) []jetstream.StreamState {
	t.Helper()
	out, err := f.states()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fill brings every club's stream past its share's high mark, the clubs
// parallel at a time, and waits until the hub's keeper has pruned each once.
func (f *benchFill) fill(t *testing.T, parallel int) {
	t.Helper()
	if f == nil {
		return
	}
	t0 := time.Now()
	// Past the high mark by a sixty-fourth of the share: the store's own overhead
	// only adds to it.
	n := (prune.High(f.share) + f.share/64) / int64(f.unit)
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i := range f.clubs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f.publish(t, i, n, f.unit)
			// The next club once the hub holds this one's fillers: a hub sourcing
			// all at once answers its API too late for its keeper and this test.
			for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
				if s, err := f.state(i); err == nil && s.LastSeq >= uint64(f.fills[i]) {
					return
				}
			}
			t.Errorf("fill: club %s: the hub does not hold its %d fillers within 10 minutes", f.clubs[i].name, f.fills[i])
		}()
	}
	wg.Wait()
	t.Logf("fill: %d fillers of %d bytes a club published and at the hub in %v, %d clubs at a time; waiting for the hub's keeper to prune every stream",
		n, f.unit, time.Since(t0).Round(time.Second), parallel)
	waitSlowly(t, 30*time.Minute, "every club's stream at the hub pruned once", func() (bool, string) {
		at, bytes, msgs, behind := 0, uint64(0), uint64(0), 0
		states, err := f.states()
		for i, s := range states {
			if s.FirstSeq > 1 {
				at++
			}
			if s.LastSeq < uint64(f.fills[i]) {
				behind++
			}
			bytes, msgs = bytes+s.Bytes, msgs+s.Msgs
		}
		if at == len(f.clubs) {
			f.overhead = int64(bytes/max(msgs, 1)) - int64(f.unit)
		}
		return at == len(f.clubs), fmt.Sprintf("%d of %d streams pruned; %d not yet holding all their fillers; %d MiB held (%v)", at, len(f.clubs), behind, bytes>>20, err)
	})
	f.fillSpent = time.Since(t0)
	f.fillersHeld(t, "the fill")
	t.Logf("fill: every stream at the hub pruned once, %v after the fill began; %d bytes a filler in the hub's store (%d over its data)",
		f.fillSpent.Round(time.Second), int64(f.unit)+f.overhead, f.overhead)
}

// topUp brings each stream to margin below its high mark, if the measured time's
// units (about want bytes a stream) would not take it from the low mark past the
// high one: the realistic rate's few units.
func (f *benchFill) topUp(t *testing.T, want int64) {
	t.Helper()
	if f == nil {
		return
	}
	margin := want / 2
	if v := os.Getenv("LEAGUE_BENCH_FILL_MARGIN"); v != "" {
		n, err := history.ParseSize(v)
		if err != nil || n < 0 {
			t.Fatalf("LEAGUE_BENCH_FILL_MARGIN %q: want a size", v)
		}
		margin = n
	}
	high, low := prune.High(f.share), prune.Low(f.share)
	if margin >= high-low {
		t.Logf("fill: the measured time's units (about %d KiB a stream) take a stream from its low mark past its high one: no top-up", want>>10)
		return
	}
	t0, per := time.Now(), int64(f.unit)+f.overhead
	states := f.mustStates(t)
	var wg sync.WaitGroup
	target := make([]uint64, len(f.clubs))
	for i, s := range states {
		deficit := high - margin - int64(s.Bytes)
		if deficit <= 0 {
			continue
		}
		target[i] = s.LastSeq + uint64(deficit/per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.publish(t, i, deficit/per, f.unit)
			if rest := int(deficit%per - f.overhead); rest > 0 {
				target[i]++
				f.publish(t, i, 1, rest)
			}
		}()
	}
	wg.Wait()
	waitSlowly(t, 10*time.Minute, "every stream at the hub topped up", func() (bool, string) {
		behind := 0
		states, err := f.states()
		for i, s := range states {
			if s.LastSeq < target[i] {
				behind++
			}
		}
		return behind == 0, fmt.Sprintf("%d of %d streams not yet holding their top-up (%v)", behind, len(f.clubs), err)
	})
	f.fillersHeld(t, "the top-up")
	var least, most uint64
	for i, s := range f.mustStates(t) {
		if i == 0 || s.Bytes < least {
			least = s.Bytes
		}
		most = max(most, s.Bytes)
	}
	t.Logf("fill: topped up to %d KiB below the high mark (%d KiB) in %v: the streams hold %d to %d KiB",
		margin>>10, high>>10, time.Since(t0).Round(time.Second), least>>10, most>>10)
	// The top-up's burst (2 MiB a stream at once) out of the measured time: each
	// stream's block cache, 8 MiB, expires 10 s after its last write
	// (nats-server's defaultCacheBufferExpiration). The first run without this
	// had its peak, 762 MiB against 328-411 after, in the measured time's first 13 s.
	time.Sleep(30 * time.Second)
	_, rss, _ := procStat(t, f.h.hub.PID())
	t.Logf("fill: 30 s after the top-up the hub's RSS is %d MiB", rss>>10)
}

// start marks the measured time's start: each stream's first sequence, the units
// pruned so far, and the hub's peak RSS from now (VmHWM reset: the fill's peak is
// not the measured time's).
func (f *benchFill) start(t *testing.T) {
	t.Helper()
	if f == nil {
		return
	}
	f.first = make([]uint64, len(f.clubs))
	for i, s := range f.mustStates(t) {
		f.first[i] = s.FirstSeq
	}
	f.pruned = f.prunedUnits(t)
	f.serials, _ = f.readers(t)
	for _, p := range f.h.procs {
		_, rss, hwm := procStat(t, p.pid)
		err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.pid), []byte("5"), 0)
		t.Logf("fill: %s before the measured time: RSS %d MiB, peak %d MiB (the fill's and warm-up's; reset: %v)", p.name, rss>>10, hwm>>10, err)
	}
	f.windowAt = time.Now()
}

// readers says what the page's readers of the clubs' streams and their sources
// went through: a club's follower is an ordered consumer whose name ends in its
// serial, which each reset (a missed heartbeat, a gap) makes one more (serials,
// by club); a source idle, lagging or failing is told by the server.
func (f *benchFill) readers(t *testing.T) (serials map[string]int, sources []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	serials = map[string]int{}
	for _, c := range f.clubs {
		s, err := f.js.Stream(ctx, league.ClubStream(c.name))
		if err != nil {
			continue
		}
		for _, si := range s.CachedInfo().Sources {
			if si.Error != nil || si.Lag > 0 || si.Active > 3*time.Second {
				sources = append(sources, fmt.Sprintf("%s<-%s lag %d active %v err %v", c.name, si.Name, si.Lag, si.Active, si.Error))
			}
		}
		for ci := range s.ListConsumers(ctx).Info() {
			i := strings.LastIndexByte(ci.Name, '_')
			if n, err := strconv.Atoi(ci.Name[i+1:]); i >= 0 && err == nil {
				serials[c.name] = max(serials[c.name], n)
			}
		}
	}
	return serials, sources
}

// prunedUnits is the hub's scoreboard_league_pruned_messages_total.
func (f *benchFill) prunedUnits(t *testing.T) float64 {
	t.Helper()
	r, err := http.Get(f.h.page + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "scoreboard_league_pruned_messages_total "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("/metrics: %q: %v", sc.Text(), err)
			}
			return n
		}
	}
	t.Fatalf("the hub's /metrics has no scoreboard_league_pruned_messages_total (%v)", sc.Err())
	return 0
}

// end reports the streams at the end of the measured time: at their share, and
// pruned in it.
func (f *benchFill) end(t *testing.T) string {
	t.Helper()
	if f == nil {
		return ""
	}
	at, pruned, heads := 0, 0, uint64(0)
	for i, s := range f.mustStates(t) {
		if s.FirstSeq > 1 {
			at++
		}
		if s.FirstSeq > f.first[i] {
			pruned++
		}
		heads += s.FirstSeq - 1
	}
	serials, sources := f.readers(t)
	resets, reset := 0, []string{}
	for club, n := range serials {
		if n > f.serials[club] {
			resets += n - f.serials[club]
			reset = append(reset, fmt.Sprintf("%s:%d", club, n-f.serials[club]))
		}
	}
	t.Logf("fill: the page's readers in the measured time: %d resets of the clubs' followers (ordered consumers) %v; sources idle, lagging or failing at its end: %d %v",
		resets, reset, len(sources), sources)
	units := f.prunedUnits(t)
	t.Logf("fill: at the end of the measured time %d of %d streams at their share (first sequence past 1), %d pruned in the measured time (%v); the hub's keeper dropped %.0f units in it, %.0f in all, the streams' heads %d (the server's own limit dropped %d)",
		at, len(f.clubs), pruned, time.Since(f.windowAt).Round(time.Second), units-f.pruned, units, heads, int64(heads)-int64(units))
	return fmt.Sprintf(" fill_unit=%d fill_s=%.0f streams=%d streams_at_share=%d streams_pruned_in_window=%d pruned_in_window=%.0f pruned_total=%.0f heads_dropped=%d",
		f.unit, f.fillSpent.Seconds(), len(f.clubs), at, pruned, units-f.pruned, units, heads)
}

// lost counts, once the play has stopped, the messages each club published that
// its history does not hold (what its recorder, the daemon's, did not store),
// and those its history holds that its stream at
// the hub did not get (held or pruned): both 0 when nothing was lost. A loss is
// an error, after which the benchmark goes on to its end. locks guard the clubs'
// counts.
func (f *benchFill) lost(t *testing.T, locks []sync.Mutex) string {
	t.Helper()
	if f == nil {
		return ""
	}
	want := make([]uint64, len(f.clubs))
	hist := make([]uint64, len(f.clubs))
	for i, c := range f.clubs {
		locks[i].Lock()
		for _, s := range c.seq {
			want[i] += 2 * s // a unit is its dump and its result
		}
		locks[i].Unlock()
		want[i] += uint64(f.fills[i])
	}
	var published, held, clubShort, hubShort, extra uint64
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		published, held, clubShort = 0, 0, 0
		for i, c := range f.clubs {
			if hist[i] < want[i] {
				js, _ := jetstream.New(c.nc)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if s, err := js.Stream(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Stream()); err == nil {
					hist[i] = s.CachedInfo().State.LastSeq
				}
				cancel()
			}
			published, held, clubShort = published+want[i], held+hist[i], clubShort+want[i]-min(hist[i], want[i])
		}
		if clubShort == 0 || time.Now().After(deadline) {
			break
		}
	}
	// A club's history and its stream at the hub hold the same messages in the
	// same order: the hub's last sequence is the count it got.
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(2 * time.Second) {
		states, err := f.states()
		hubShort, extra = 0, 0
		for i, s := range states {
			hubShort, extra = hubShort+hist[i]-min(s.LastSeq, hist[i]), extra+s.LastSeq-min(s.LastSeq, hist[i])
		}
		if (err == nil && hubShort == 0) || time.Now().After(deadline) {
			break
		}
	}
	var resent, dropped uint64
	for _, c := range f.clubs {
		resent, dropped = resent+c.rec.Resent(), dropped+c.rec.Dropped()
	}
	t.Logf("fill: lost: the clubs published %d messages (units' dumps and results, and fillers), their histories hold %d (%d short; their recorders sent %d again and gave up %d), the hub got all but %d of those (%d more)",
		published, held, clubShort, resent, dropped, hubShort, extra)
	if clubShort > 0 {
		f.shortClubs(t, locks, want, hist)
	}
	lines, more := benchClubLogs.take()
	t.Logf("fill: the clubs' servers and connections logged %d warnings:\n%s", len(lines)+more, strings.Join(lines, "\n"))
	if clubShort > 0 || hubShort > 0 {
		t.Errorf("fill: lost: %d messages between the clubs and their histories, %d between the histories and the hub", clubShort, hubShort)
	}
	return fmt.Sprintf(" club_msgs=%d club_msgs_lost=%d club_msgs_resent=%d hub_msgs_lost=%d hub_msgs_extra=%d", published, clubShort, resent, hubShort, extra)
}

// waitSlowly is bustest.WaitWithin looking every 2 s, its counts logged every
// minute: each look asks the hub for every club's stream.
func waitSlowly(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	t0 := time.Now()
	logged := t0
	for {
		ok, counts := cond()
		switch {
		case ok:
			return
		case time.Since(t0) > within:
			t.Fatalf("%s: not within %v; %s", what, within, counts)
		case time.Since(logged) > time.Minute:
			t.Logf("%s: %s (%v)", what, counts, time.Since(t0).Round(time.Second))
			logged = time.Now()
		}
		time.Sleep(2 * time.Second)
	}
}

// fillersHeld logs, after phase, the clubs whose histories hold fewer fillers
// than they published: the fillers go with nothing else (the units are the
// play's), so that the phase that lost them is told apart.
func (f *benchFill) fillersHeld(t *testing.T, phase string) {
	t.Helper()
	fill := bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", "fill")
	var short []string
	var n int64
	for i, c := range f.clubs {
		js, _ := jetstream.New(c.nc)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s, err := js.Stream(ctx, bus.Subjects{Prefix: bus.DefaultPrefix}.Stream())
		var held uint64
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = s.Info(ctx, jetstream.WithSubjectFilter(fill)); err == nil {
				held = info.State.Subjects[fill]
			}
		}
		cancel()
		if err != nil || held < uint64(f.fills[i]) {
			n += f.fills[i] - int64(held)
			short = append(short, fmt.Sprintf("%s %d of %d (%v)", c.name, held, f.fills[i], err))
		}
	}
	t.Logf("fill: after %s the clubs' histories are %d fillers short: %d clubs %v", phase, n, len(short), short)
}

// shortClubs logs, for each club whose history holds fewer messages than it
// published (want, hist: by club), what it is short of, by subject (fillers, the
// units' dumps, their results), with its connection's reconnects and its server's
// slow consumers: what lost them, and when.
func (f *benchFill) shortClubs(t *testing.T, locks []sync.Mutex, want, hist []uint64) {
	t.Helper()
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	for i, c := range f.clubs {
		if hist[i] >= want[i] {
			continue
		}
		js, _ := jetstream.New(c.nc)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var held map[string]uint64
		var err error
		if s, serr := js.Stream(ctx, subj.Stream()); serr != nil {
			err = serr
		} else if info, ierr := s.Info(ctx, jetstream.WithSubjectFilter(bus.DefaultPrefix+".>")); ierr != nil {
			err = ierr
		} else {
			held = info.State.Subjects
		}
		cancel()
		var short []string
		locks[i].Lock()
		for port, n := range c.seq {
			for _, s := range []string{subj.Dump("goscore", port), subj.Result("goscore", port)} {
				if held[s] != n {
					short = append(short, fmt.Sprintf("%s %d of %d", s, held[s], n))
				}
			}
		}
		locks[i].Unlock()
		if fill := subj.Dump("goscore", "fill"); held[fill] != uint64(f.fills[i]) {
			short = append(short, fmt.Sprintf("%s %d of %d", fill, held[fill], f.fills[i]))
		}
		t.Logf("fill: lost: club %s: %d short: %s (%v); its connection reconnected %d times, its server counted %d slow consumers",
			c.name, want[i]-hist[i], strings.Join(short, ", "), err, c.nc.Stats().Reconnects, c.srv.NATS().NumSlowConsumers())
	}
}
