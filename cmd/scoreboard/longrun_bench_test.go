package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/serialio"
)

// The long runs of issue 44 (BENCHMARKS.md, "Long runs"), each behind SOAK=DURATION:
// a process played for that long, its RSS and goroutines sampled every
// SOAK_SAMPLE (1m), and their slopes after SOAK_WARM (10m) reported as a share of
// their mean an hour; and the slope of the RSS's peaks, each SOAK_WINDOW's (15m). SOAK_OUT=FILE appends every sample and the summary to FILE as
// they come, so a run cut short still says what it measured.

// soakEnv is the long run's settings; it skips the test without SOAK.
type soakEnv struct {
	dur, every, warm time.Duration
	out              *os.File
}

func longRun(t *testing.T) soakEnv {
	s := os.Getenv("SOAK")
	if s == "" {
		t.Skip("a long run: SOAK=2h (BENCHMARKS.md, \"Long runs\")")
	}
	dur := func(k, def string) time.Duration {
		v := os.Getenv(k)
		if v == "" {
			v = def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a duration such as 2h or 30s", k, v)
		}
		return d
	}
	e := soakEnv{dur: dur("SOAK", s), every: dur("SOAK_SAMPLE", "1m"), warm: dur("SOAK_WARM", "10m")}
	if p := os.Getenv("SOAK_OUT"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		e.out = f
	}
	return e
}

// say logs a line and appends it to SOAK_OUT.
func (e soakEnv) say(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	if e.out != nil {
		fmt.Fprintf(e.out, "%s %s %s\n", time.Now().UTC().Format(time.RFC3339), t.Name(), line)
	}
}

// soakSample is one reading of the measured process.
type soakSample struct {
	at         time.Duration // since the start
	rssKiB     int
	goroutines int
}

// metricValue is a metric's value in a Prometheus text exposition, -1 when absent.
func metricValue(url, name string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// sampleFor samples pid's RSS and the goroutines its /metrics (at metrics) reports,
// every e.every until e.dur has passed since start, calling check between samples
// (a failure it finds ends the run). It returns the samples.
func (e soakEnv) sampleFor(t *testing.T, pid int, metrics string, start time.Time, check func() string) []soakSample {
	t.Helper()
	var samples []soakSample
	for {
		_, rss, _ := procStat(t, pid)
		g := int(metricValue(metrics, "go_goroutines"))
		s := soakSample{at: time.Since(start), rssKiB: rss, goroutines: g}
		samples = append(samples, s)
		extra := ""
		if check != nil {
			extra = check()
		}
		e.say(t, "sample t=%s rss_kib=%d goroutines=%d %s", s.at.Round(time.Second), rss, g, extra)
		if s.at >= e.dur {
			return samples
		}
		time.Sleep(min(e.every, e.dur-s.at+time.Second))
	}
}

// slope is the least-squares slope of the samples after warm, of f, as a share of
// its mean an hour (0.01: 1 % an hour), with the number of samples it is over.
func slope(samples []soakSample, warm time.Duration, f func(soakSample) float64) (perHour float64, n int) {
	var xs, ys []float64
	for _, s := range samples {
		if s.at >= warm {
			xs, ys = append(xs, s.at.Hours()), append(ys, f(s))
		}
	}
	n = len(xs)
	if n < 2 {
		return 0, n
	}
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 || my == 0 {
		return 0, n
	}
	return sxy / sxx / my, n
}

// peaks are the largest RSS of each window of the samples after warm, each at its
// window's middle: a process whose memory is a sawtooth (the hub's streams fill
// their 8 MiB blocks together, then let them go) is flat when its peaks are, and the
// slope of all its samples is the phase of the last tooth.
func peaks(samples []soakSample, warm, window time.Duration) []soakSample {
	var out []soakSample
	for from := warm; ; from += window {
		var top soakSample
		found := false
		for _, s := range samples {
			if s.at >= from && s.at < from+window && s.rssKiB > top.rssKiB {
				top, found = s, true
			}
		}
		if !found || samples[len(samples)-1].at < from+window {
			return out
		}
		out = append(out, soakSample{at: from + window/2, rssKiB: top.rssKiB})
	}
}

// teeth are the whole teeth of a sawtooth RSS after warm, each its mean at its
// middle: a tooth ends where the RSS falls by more than a third from one sample to
// the next. Over whole teeth the phase at which a run is cut counts for nothing.
func teeth(samples []soakSample, warm time.Duration) []soakSample {
	var falls []int
	for i := 1; i < len(samples); i++ {
		if samples[i].at >= warm && 3*samples[i].rssKiB < 2*samples[i-1].rssKiB {
			falls = append(falls, i)
		}
	}
	var out []soakSample
	for k := 1; k < len(falls); k++ {
		tooth := samples[falls[k-1]:falls[k]]
		sum := 0
		for _, s := range tooth {
			sum += s.rssKiB
		}
		out = append(out, soakSample{at: (tooth[0].at + tooth[len(tooth)-1].at) / 2, rssKiB: sum / len(tooth)})
	}
	return out
}

// mibList is the samples' RSS in MiB, with one decimal.
func mibList(samples []soakSample) string {
	var l []string
	for _, s := range samples {
		l = append(l, fmt.Sprintf("%.1f", float64(s.rssKiB)/1024))
	}
	return strings.Join(l, ",")
}

// summary reports the samples' slopes and ranges after the warm-up.
func (e soakEnv) summary(t *testing.T, what string, samples []soakSample) {
	t.Helper()
	rs, n := slope(samples, e.warm, func(s soakSample) float64 { return float64(s.rssKiB) })
	gs, _ := slope(samples, e.warm, func(s soakSample) float64 { return float64(s.goroutines) })
	var rss, gor []int
	for _, s := range samples {
		if s.at >= e.warm {
			rss, gor = append(rss, s.rssKiB), append(gor, s.goroutines)
		}
	}
	if len(rss) == 0 {
		e.say(t, "SOAK_RESULT %s: no sample after the warm-up (%v)", what, e.warm)
		return
	}
	window := 15 * time.Minute
	if v, err := time.ParseDuration(os.Getenv("SOAK_WINDOW")); err == nil && v > 0 {
		window = v
	}
	top := peaks(samples, e.warm, window)
	ps, _ := slope(top, 0, func(s soakSample) float64 { return float64(s.rssKiB) })
	var tops []string
	for _, p := range top {
		tops = append(tops, fmt.Sprintf("%.0f", float64(p.rssKiB)/1024))
	}
	e.say(t, "SOAK_PEAKS %s window=%v rss_peaks_mib=%s rss_peak_slope_pct_per_hour=%.2f", what, window, strings.Join(tops, ","), 100*ps)
	tt := teeth(samples, e.warm)
	ts, _ := slope(tt, 0, func(s soakSample) float64 { return float64(s.rssKiB) })
	e.say(t, "SOAK_TEETH %s teeth=%d rss_teeth_means_mib=%s rss_teeth_slope_pct_per_hour=%.2f", what, len(tt), mibList(tt), 100*ts)
	e.say(t, "SOAK_RESULT %s duration=%v samples_after_warm=%d warm=%v rss_mib_min=%.1f rss_mib_max=%.1f rss_slope_pct_per_hour=%.2f goroutines_min=%d goroutines_max=%d goroutines_slope_pct_per_hour=%.2f",
		what, samples[len(samples)-1].at.Round(time.Second), n, e.warm, float64(slices.Min(rss))/1024, float64(slices.Max(rss))/1024, 100*rs,
		slices.Min(gor), slices.Max(gor), 100*gs)
}

// soakBoard is a pty scoreboard of the run soak: a writer sending a unit every
// interval, and a reader checking each answer against its unit's, in order, and
// timing it from the unit's write.
type soakBoard struct {
	name    string
	pt      *serialio.PTY
	mu      sync.Mutex
	pending []soakUnit // written, not answered yet, oldest first
	sent    atomic.Int64
	answers atomic.Int64
	wrong   atomic.Int64
	delays  []time.Duration
}

type soakUnit struct {
	at     time.Time
	answer string
}

func (b *soakBoard) write(stop <-chan struct{}, interval time.Duration, k0 int) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for k := k0; ; k++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		u, a := faulttest.GoscoreBoard(k % 32000)
		b.mu.Lock()
		b.pending = append(b.pending, soakUnit{at: time.Now(), answer: strings.TrimSpace(a)})
		b.mu.Unlock()
		if _, err := b.pt.Master.WriteString(u); err != nil {
			return
		}
		b.sent.Add(1)
	}
}

// read reads the answers until stop; a read that fails (no daemon has the device
// open yet: EIO) is tried again.
func (b *soakBoard) read(stop <-chan struct{}) {
	r := bufio.NewReader(b.pt.Master)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		now := time.Now()
		b.mu.Lock()
		if len(b.pending) == 0 {
			b.mu.Unlock()
			b.wrong.Add(1)
			continue
		}
		u := b.pending[0]
		b.pending = b.pending[1:]
		b.delays = append(b.delays, now.Sub(u.at))
		b.mu.Unlock()
		if strings.TrimSpace(line) != u.answer {
			b.wrong.Add(1)
		}
		b.answers.Add(1)
	}
}

// TestRunSoak is the long run of `scoreboard run` (SOAK=2h): 4 pty ports, each sent
// a goscore unit every 1/SOAK_RATE s (10 units/s), history on, the page on with a
// viewer on its events; SOAK_BUDGET, if set, is its --memory-budget. Every unit must
// be answered, right and in order; it reports the unit -> answer delay (p50, p99,
// max), and the RSS and goroutines (sampled, their slope after the warm-up).
//
// With SOAK_RATE=0.0333 (a unit a board every 30 s, a club's realistic rate) and
// SOAK_BUDGET=64MiB it is the Pi-sized budget's measurement. SOAK_HISTORY_BYTES is
// the history's max_bytes; SOAK_FILL=1 fills it first (fillHistory), so that the
// soak runs at its limit.
func TestRunSoak(t *testing.T) {
	e := longRun(t)
	rate := 10.0
	if s := os.Getenv("SOAK_RATE"); s != "" {
		var err error
		if rate, err = strconv.ParseFloat(s, 64); err != nil || rate <= 0 || rate > 1000 {
			t.Fatalf("SOAK_RATE=%q: want units a second a port, above 0, at most 1000", s)
		}
	}
	bin := proctest.Scoreboard(t)
	httpPort := proctest.FreePort(t)
	page := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	state := filepath.Join(t.TempDir(), "state")
	conf := fmt.Sprintf("[nats]\nlisten = \"off\"\n[daemon]\nstate_dir = %q\n[http]\nlisten = \"127.0.0.1:%d\"\n", state, httpPort)
	if b := os.Getenv("SOAK_BUDGET"); b != "" {
		conf += fmt.Sprintf("[memory]\nbudget = %q\n", b)
	}
	if b := os.Getenv("SOAK_HISTORY_BYTES"); b != "" {
		conf += fmt.Sprintf("[history]\nmax_bytes = %q\n", b)
	}
	boards := make([]*soakBoard, 4)
	for i := range boards {
		boards[i] = &soakBoard{name: fmt.Sprintf("board%d", i), pt: runPTY(t)}
		conf += fmt.Sprintf("[[port]]\nname = %q\ndevice = %q\nproblem = \"goscore\"\nbaud = 115200\n", boards[i].name, boards[i].pt.Path)
	}
	path := filepath.Join(t.TempDir(), "scoreboard.toml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	soakProfiles(t)
	run := proctest.Start(t, bin, "run", "--config", path, "--log-format", "json", "--log-level", "warn")
	proctest.WaitTCP(t, fmt.Sprintf("127.0.0.1:%d", httpPort), 60*time.Second)
	readStop := make(chan struct{})
	defer close(readStop)
	for _, b := range boards {
		go b.read(readStop)
	}
	viewer := startBenchViewers(t, page, 1, &pageDelays{sentAt: map[string]time.Time{}, last: map[string]uint64{}})[0]
	if os.Getenv("SOAK_FILL") != "" {
		fillHistory(t, e, boards, page, state)
	}
	e.say(t, "run: blocks %s", storeBlocks(state))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for i, b := range boards {
		wg.Go(func() { b.write(stop, interval, i*8000) })
	}
	e.say(t, "run: 4 ports x %.4g units/s for %v, budget %q, pid %d", rate, e.dur, os.Getenv("SOAK_BUDGET"), run.PID())
	counts := func() (sent, answered, wrong int64) {
		for _, b := range boards {
			sent, answered, wrong = sent+b.sent.Load(), answered+b.answers.Load(), wrong+b.wrong.Load()
		}
		return
	}
	samples := e.sampleFor(t, run.PID(), page+"/metrics", start, func() string {
		select {
		case <-run.Done():
			t.Fatalf("the daemon exited: %v\n%s", run.Err(), lastLines(run.Output(), 30))
		default:
		}
		s, a, w := counts()
		return fmt.Sprintf("sent=%d answered=%d wrong=%d viewer_events=%d pruned=%.0f %s", s, a, w, viewer.events.Load(), metricValue(page+"/metrics", "scoreboard_history_pruned_messages_total"), memDetail(run.PID(), page+"/metrics"))
	})
	close(stop)
	wg.Wait()
	bustest.WaitWithin(t, 2*time.Minute, "every unit answered", func() (bool, string) {
		s, a, _ := counts()
		return a == s, fmt.Sprintf("%d of %d answered", a, s)
	})
	sent, answered, wrong := counts()
	var delays []time.Duration
	for _, b := range boards {
		b.mu.Lock()
		delays = append(delays, b.delays...)
		b.mu.Unlock()
	}
	slices.Sort(delays)
	_, _, hwm := procStat(t, run.PID())
	e.say(t, "run: sent %d, answered %d, wrong %d; unit -> answer p50 %v p99 %v max %v; peak RSS %.1f MiB; viewer events %d",
		sent, answered, wrong, percentile(delays, 0.5).Round(10*time.Microsecond), percentile(delays, 0.99).Round(10*time.Microsecond),
		percentile(delays, 1).Round(10*time.Microsecond), float64(hwm)/1024, viewer.events.Load())
	e.summary(t, fmt.Sprintf("run ports=4 rate=%.4g budget=%q hwm_mib=%.1f", rate, os.Getenv("SOAK_BUDGET"), float64(hwm)/1024), samples)
	e.say(t, "run: blocks %s", storeBlocks(state))
	run.Stop()
	e.gcTrace(t, run.Output())
	if wrong > 0 || answered != sent {
		t.Errorf("%d units sent, %d answered, %d answers wrong or unasked", sent, answered, wrong)
	}
}

// lastMissing is how many of a club's ports' last results (want: port -> its last
// seq) are not the last of their subject in s, the club's stream at the hub.
func lastMissing(s jetstream.Stream, club string, want map[string]uint64) int {
	n := 0
	for port, seq := range want {
		m, err := s.GetLastMsgForSubject(context.Background(), league.Subject(club, "result.goscore."+port))
		var r result.Record
		if err != nil || json.Unmarshal(m.Data, &r) != nil || r.Seq != seq {
			n++
		}
	}
	return n
}

// TestHubSoak is the long run of `scoreboard hub` (SOAK=2h): SOAK_CLUBS (20) stand-in
// clubs of the league benchmark (startBenchClubs), 4 ports each, a unit a port every
// SOAK_INTERVAL (500ms), 10 viewers on the page; SOAK_BUDGET, if set, is the hub's
// memory.budget. At the end every club's stream at the hub holds every result the
// club published; it reports the hub's RSS and goroutines (sampled, their slope after
// the warm-up).
func TestHubSoak(t *testing.T) {
	e := longRun(t)
	nClubs, err := strconv.Atoi(cmp.Or(os.Getenv("SOAK_CLUBS"), "20"))
	if err != nil || nClubs < 1 {
		t.Fatalf("SOAK_CLUBS=%q: want a number of clubs", os.Getenv("SOAK_CLUBS"))
	}
	interval, err := time.ParseDuration(cmp.Or(os.Getenv("SOAK_INTERVAL"), "500ms"))
	if err != nil || interval <= 0 {
		t.Fatalf("SOAK_INTERVAL=%q: want a duration", os.Getenv("SOAK_INTERVAL"))
	}
	if b := os.Getenv("SOAK_BUDGET"); b != "" {
		t.Setenv("SCOREBOARD_MEMORY_BUDGET", b) // the hub's, and nothing else this test starts reads it
	}
	const ports = 4
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	names := make([]string, nClubs)
	for i := range names {
		names[i] = fmt.Sprintf("c%02d", i)
	}
	h := startBenchHub(t, bin, root, names, 0, "", "")
	viewers := startBenchViewers(t, h.page, 10, &pageDelays{sentAt: map[string]time.Time{}, last: map[string]uint64{}})
	clubs := startBenchClubs(t, root, names, h.leaf, 8)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	locks := make([]sync.Mutex, nClubs)
	var units atomic.Int64
	start := time.Now()
	for i, c := range clubs {
		wg.Go(func() {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(i) * interval / time.Duration(nClubs)):
			}
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				locks[i].Lock()
				for p := range ports {
					c.unit(fmt.Sprintf("p%d", p), nil)
				}
				locks[i].Unlock()
				units.Add(ports)
			}
		})
	}
	e.say(t, "hub: %d clubs x %d ports, a unit a port every %v, for %v, budget %q, pid %d", nClubs, ports, interval, e.dur, os.Getenv("SOAK_BUDGET"), h.hub.PID())
	samples := e.sampleFor(t, h.hub.PID(), h.page+"/metrics", start, func() string {
		select {
		case <-h.hub.Done():
			t.Fatalf("the hub exited: %v\n%s", h.hub.Err(), lastLines(h.hub.Output(), 30))
		default:
		}
		return fmt.Sprintf("units=%d viewer_events=%d pruned=%.0f", units.Load(), viewers[0].events.Load(), metricValue(h.page+"/metrics", "scoreboard_league_pruned_messages_total"))
	})
	close(stop)
	wg.Wait()
	// Nothing lost: every club's results in its stream at the hub; once a stream is
	// at its share (a long run), it has dropped its oldest by its limit, and each
	// port's last result is there, with as many as the stream keeps.
	hnc, err := nats.Connect(h.tools)
	if err != nil {
		t.Fatal(err)
	}
	defer hnc.Close()
	hjs, _ := jetstream.New(hnc)
	full := 0
	missing := func() (int, string) {
		short, total := 0, 0
		full = 0
		for i, c := range clubs {
			locks[i].Lock()
			want := maps.Clone(c.seq)
			locks[i].Unlock()
			s, err := hjs.Stream(context.Background(), league.ClubStream(c.name))
			if err == nil {
				var info *jetstream.StreamInfo
				info, err = s.Info(context.Background(), jetstream.WithSubjectFilter(league.Subject(c.name, "result.>")))
				if err == nil && info.State.FirstSeq > 1 {
					full++
					short += lastMissing(s, c.name, want)
					continue
				}
				for port, n := range want {
					total += int(n)
					if err == nil {
						short += max(int(n)-int(info.State.Subjects[league.Subject(c.name, "result.goscore."+port)]), 0)
					} else {
						short += int(n)
					}
				}
				continue
			}
			for _, n := range want {
				short += int(n)
				total += int(n)
			}
		}
		return short, fmt.Sprintf("%d results not at the hub (of %d in the clubs whose streams drop nothing; %d streams at their share: a port's last result missing counts 1)", short, total, full)
	}
	bustest.WaitWithin(t, 5*time.Minute, "every result at the hub", func() (bool, string) {
		n, s := missing()
		return n == 0, s
	})
	if full > 0 {
		e.say(t, "hub: %d of %d clubs' streams at their share (%s): their oldest dropped by its limit; each port's last result at the hub", full, nClubs, benchClubShare)
	}
	_, _, hwm := procStat(t, h.hub.PID())
	e.say(t, "hub: %d units, every result at the hub; peak RSS %.1f MiB; viewer events %d", units.Load(), float64(hwm)/1024, viewers[0].events.Load())
	e.summary(t, fmt.Sprintf("hub clubs=%d interval=%v budget=%q hwm_mib=%.1f", nClubs, interval, os.Getenv("SOAK_BUDGET"), float64(hwm)/1024), samples)
}

// readSoakSamples reads the samples of a SOAK_OUT file, up to until (all, if 0).
func readSoakSamples(t *testing.T, path string, until time.Duration) []soakSample {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []soakSample
	for n, line := range strings.Split(string(b), "\n") {
		_, rest, ok := strings.Cut(line, " sample t=")
		if !ok {
			continue
		}
		var at string
		var s soakSample
		if _, err := fmt.Sscanf(rest, "%s rss_kib=%d goroutines=%d", &at, &s.rssKiB, &s.goroutines); err != nil {
			t.Fatalf("%s:%d: %v: want \"sample t=DURATION rss_kib=N goroutines=N\"", path, n+1, err)
		}
		if s.at, err = time.ParseDuration(at); err != nil {
			t.Fatalf("%s:%d: t=%q: %v", path, n+1, at, err)
		}
		if until > 0 && s.at > until {
			break
		}
		out = append(out, s)
	}
	return out
}

// TestSoakSamples: the summary of the hub's soaks as RELIABILITY.md, "Long runs",
// gives them, from their samples (testdata/soak): the 2-hour run of 2962484 until
// its clubs' streams reached their share (1 h 43 min) and after, and the 20-minute
// run at the limit. SOAK_SAMPLES=FILE (SOAK_UNTIL, SOAK_WARM, SOAK_WINDOW) gives
// the same summary of any SOAK_OUT file.
func TestSoakSamples(t *testing.T) {
	if f := os.Getenv("SOAK_SAMPLES"); f != "" {
		until, _ := time.ParseDuration(os.Getenv("SOAK_UNTIL"))
		warm, err := time.ParseDuration(cmp.Or(os.Getenv("SOAK_WARM"), "10m"))
		if err != nil {
			t.Fatalf("SOAK_WARM: %v", err)
		}
		soakEnv{warm: warm}.summary(t, f, readSoakSamples(t, f, until))
		return
	}
	all := readSoakSamples(t, "testdata/soak/hub-2962484.txt", 0)
	before := readSoakSamples(t, "testdata/soak/hub-2962484.txt", 103*time.Minute)
	if len(all) != 121 || len(before) != 104 {
		t.Fatalf("%d samples, %d to 1 h 43 min: want 121 and 104", len(all), len(before))
	}
	pk := peaks(before, 10*time.Minute, 15*time.Minute)
	ps, _ := slope(pk, 0, func(s soakSample) float64 { return float64(s.rssKiB) })
	tt := teeth(all, 10*time.Minute)
	ts, _ := slope(tt, 0, func(s soakSample) float64 { return float64(s.rssKiB) })
	gs, _ := slope(all, 10*time.Minute, func(s soakSample) float64 { return float64(s.goroutines) })
	var after []int
	for _, s := range all {
		if s.at >= 104*time.Minute {
			after = append(after, s.rssKiB/1024)
		}
	}
	got := fmt.Sprintf("peaks %s (%+.2f %%/h); teeth %s (%+.2f %%/h); goroutines %+.2f %%/h; from 1 h 44 min %d samples, %d-%d MiB",
		mibList(pk), 100*ps, mibList(tt), 100*ts, 100*gs, len(after), slices.Min(after), slices.Max(after))
	t.Log(got)
	want := "peaks 416.4,431.4,420.5,419.7,425.4,440.6 (+2.74 %/h); teeth 324.8,319.9,304.8,299.1,306.1,310.4 (-5.08 %/h); goroutines +0.02 %/h; from 1 h 44 min 17 samples, 580-814 MiB"
	if got != want {
		t.Errorf("the 2-hour soak's figures:\n got %s\nwant %s", got, want)
	}
}
