package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/result"
)

// viewersEnv, set, makes TestViewersChild the viewers of a benchmark: the test
// binary run again, so that the page's process has its own CPU and RSS.
const viewersEnv = "SCOREBOARD_BENCH_VIEWERS"

// BenchmarkThousandViewers holds 1,000 event-stream clients (a child process) on a
// league hub's page, which follows the hub's real bucket (LEAGUE_BOARDS, keys
// <club>.<port>) on an embedded JetStream server, while a unit is put into it every
// 100 ms, b.N units in all. It reports the p99 from a value's put to its event at
// a client, the page's CPU and RSS per viewer (its process: the NATS server and
// the puts included, measured without viewers first and taken off), and the bytes
// per event per viewer.
//
//	go test -run '^$' -bench ThousandViewers -benchtime 200x ./web/
func BenchmarkThousandViewers(b *testing.B) {
	viewers := 1000
	if v := os.Getenv("SCOREBOARD_BENCH_VIEWERS_N"); v != "" {
		viewers, _ = strconv.Atoi(v)
	}
	ns := bustest.Start(b, bustest.Options{JetStream: true, Prefix: "league"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	js, _ := jetstream.New(ns.Daemon())
	// As the hub makes it (league's setupBoards).
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: league.Bucket, History: 1, Storage: jetstream.FileStorage})
	if err != nil {
		b.Fatal(err)
	}
	if got := (bus.Subjects{Prefix: "league"}).Boards(); got != league.Bucket {
		b.Fatalf("a page under the prefix league reads %s, not the hub's %s", got, league.Bucket)
	}
	page, _ := serveTestPage(b, ns.Tool(), pageOpts{prefix: "league"})

	// 4 clubs of 5 ports, each port a problem of its own (every problem, each
	// sample unit in turn): the boards of a hub.
	problems := engine.Names()
	units := map[string][][]byte{}
	for _, p := range problems {
		units[p] = samples.Units(b, p, p+".in")
	}
	var ports []string
	for _, club := range []string{"north", "south", "east", "west"} {
		for i := range 5 {
			ports = append(ports, fmt.Sprintf("%s.table-%d", club, i+1))
		}
	}
	seq := uint64(0)
	put := func() {
		seq++
		i := int(seq) % len(ports)
		problem := problems[i%len(problems)]
		us := units[problem]
		v := benchValue(b, problem, ports[i], seq, us[int(seq/uint64(len(ports)))%len(us)], time.Now())
		if _, err := kv.Put(ctx, ports[i], v); err != nil {
			b.Fatal(err)
		}
	}
	every := func(n int) time.Duration {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		start := time.Now()
		for range n {
			<-tick.C
			put()
		}
		return time.Since(start)
	}
	for range ports {
		put() // every board there before the viewers come
	}

	// Without viewers: what the page, the bus and the puts cost alone.
	const alone = 50
	cpu0 := cpuTime()
	wall0 := every(alone)
	cpuAlone := cpuTime() - cpu0
	rss0 := rssBytes(b)

	child := exec.Command(os.Args[0], "-test.run=^TestViewersChild$", "-test.v")
	child.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", viewersEnv, page, viewers))
	child.Stderr = os.Stderr
	toChild, _ := child.StdinPipe()
	fromChild, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	lines := bufio.NewScanner(fromChild)
	wait := func(prefix string) string {
		for lines.Scan() {
			if s, ok := strings.CutPrefix(lines.Text(), prefix); ok {
				return s
			}
		}
		b.Fatalf("the viewers ended before saying %q: %v", prefix, lines.Err())
		return ""
	}
	wait("ready")

	b.ResetTimer()
	cpu1 := cpuTime()
	wall1 := every(b.N)
	// The viewers stop once each has the last unit's event.
	fmt.Fprintf(toChild, "%d\n", seq)
	var sum viewersSummary
	if err := json.Unmarshal([]byte(wait("summary ")), &sum); err != nil {
		b.Fatal(err)
	}
	cpuViewed := cpuTime() - cpu1
	b.StopTimer()
	rss1 := rssBytes(b)

	reportViewers(b, sum, viewers, spell{cpuAlone, wall0, rss0}, spell{cpuViewed, wall1, rss1})
}

// spell is what a spell of the benchmark cost: the process's CPU, the wall time,
// and its RSS at the end.
type spell struct {
	cpu, wall time.Duration
	rss       int64
}

// reportViewers reports the viewers' summary and what they cost, alone (without
// viewers) taken off viewed.
func reportViewers(b *testing.B, sum viewersSummary, viewers int, alone, viewed spell) {
	perSec := func(s spell) float64 { return float64(s.cpu) / float64(s.wall) }
	extra := perSec(viewed) - perSec(alone) // of a core
	b.ReportMetric(float64(sum.P50)/1e6, "p50-ms")
	b.ReportMetric(float64(sum.P99)/1e6, "p99-ms")
	b.ReportMetric(float64(sum.Max)/1e6, "max-ms")
	b.ReportMetric(float64(sum.Bytes)/float64(max(sum.Events, 1)), "bytes/event/viewer")
	b.ReportMetric(100*perSec(viewed), "cpu-%")
	b.ReportMetric(100*perSec(alone), "cpu-%-no-viewers")
	b.ReportMetric(1e6*extra/float64(viewers), "cpu-us/s/viewer")
	b.ReportMetric(float64(viewed.rss)/(1<<20), "rss-MB")
	b.ReportMetric(float64(viewed.rss-alone.rss)/float64(viewers)/1024, "rss-KB/viewer")
	b.ReportMetric(float64(sum.Events)/float64(viewers), "events/viewer")
	b.ReportMetric(float64(sum.Behind), "viewers-behind")
	if sum.Pictures > 0 {
		b.ReportMetric(float64(sum.PictureBytes)/float64(sum.Pictures), "picture-bytes/event/viewer")
		b.ReportMetric(float64(sum.PictureP99)/1e6, "picture-p99-ms")
	}
}

// benchValue is a bucket value as the hub puts it (the result and the unit).
func benchValue(tb testing.TB, problem, port string, seq uint64, unit []byte, at time.Time) []byte {
	p, _ := engine.Lookup(problem)
	ans, err := p.Solve(unit)
	if err != nil {
		tb.Fatal(err)
	}
	res, _ := json.Marshal(ans)
	v, _ := json.Marshal(result.Kept{
		Record: result.Record{Problem: problem, Port: port, Seq: seq, Answer: string(ans.AppendText(nil)), Result: res, Worker: "bench"},
		Unit:   string(unit), Time: at.Format(time.RFC3339Nano),
	})
	return v
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rssBytes(tb testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// viewersSummary is what the viewers' process tells the benchmark.
type viewersSummary struct {
	P50, P99, Max time.Duration
	// Events and Bytes are summed over the viewers: the events timed (put after
	// every viewer was there) and the bytes of their lines, "data: " included.
	Events, Bytes int
	// Behind is the viewers that did not have the last unit's event at the end.
	Behind int
	// Pictures, PictureBytes and PictureP99 are the pictures fetched (gzipped, as
	// a browser asks), their bytes and the p99 from the put to a picture's last
	// byte, when the viewers fetch them (SCOREBOARD_BENCH_VIEWERS_PICTURES=1).
	Pictures, PictureBytes int
	PictureP99             time.Duration
}

// TestViewersChild is the viewers of BenchmarkThousandViewers, run as a process of
// its own: it skips unless the benchmark started it.
func TestViewersChild(t *testing.T) {
	spec := os.Getenv(viewersEnv)
	if spec == "" {
		t.Skip("the viewers of BenchmarkThousandViewers: run by it")
	}
	page, n, _ := strings.Cut(spec, ",")
	viewers, _ := strconv.Atoi(n)
	tr := &http.Transport{MaxIdleConnsPerHost: viewers, DisableCompression: true}
	fetch := os.Getenv("SCOREBOARD_BENCH_VIEWERS_PICTURES") != ""
	type want struct {
		url string
		at  time.Time
	}
	all := make([]*benchStream, viewers)
	var ready sync.WaitGroup
	var readyAt time.Time
	start := make(chan struct{})
	for i := range viewers {
		s := &benchStream{}
		all[i] = s
		ready.Add(1)
		pics := make(chan want, 4096)
		// A browser fetches each picture an event names, beside the stream.
		go func() {
			for p := range pics {
				req, _ := http.NewRequest("GET", page+p.url, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					panic(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				s.mu.Lock()
				s.pictures++
				s.picBytes += int(n)
				s.picLat = append(s.picLat, time.Since(p.at))
				s.mu.Unlock()
			}
		}()
		go func() {
			resp, err := (&http.Client{Transport: tr}).Get(page + "/api/events")
			if err != nil {
				panic(err)
			}
			defer resp.Body.Close()
			ready.Done()
			<-start
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<16), 1<<20)
			for sc.Scan() {
				now := time.Now()
				line := sc.Bytes()
				// Read by hand, not decoded: the viewers must cost less than the
				// page they measure, whatever an event carries (main's ~8 KB).
				seq, at, picture, ok := readEvent(line)
				if !ok {
					continue
				}
				s.mu.Lock()
				s.last = max(s.last, seq)
				if at.After(readyAt) {
					s.lat = append(s.lat, now.Sub(at))
					s.events++
					s.bytes += len(line) + 2 // and the blank line after it
					if fetch && picture != "" {
						pics <- want{picture, at}
					}
				}
				s.mu.Unlock()
			}
		}()
	}
	ready.Wait()
	readyAt = time.Now()
	close(start)
	fmt.Println("ready")
	var last uint64
	if _, err := fmt.Fscan(os.Stdin, &last); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	waitStreams(all, last, fetch)
	out, _ := json.Marshal(summarize(all, last))
	fmt.Printf("summary %s\n", out)
}

// readEvent reads a board event's seq, time and picture from its line ("data:
// {...}").
func readEvent(line []byte) (seq uint64, at time.Time, picture string, ok bool) {
	if !bytes.HasPrefix(line, []byte(`data: {"type":"board"`)) {
		return 0, time.Time{}, "", false
	}
	field := func(name string) []byte {
		i := bytes.Index(line, []byte(`"`+name+`":`))
		if i < 0 {
			return nil
		}
		v := line[i+len(name)+3:]
		if j := bytes.IndexAny(v, ",}"); j >= 0 {
			v = v[:j]
		}
		return bytes.Trim(v, `"`)
	}
	seq, err := strconv.ParseUint(string(field("seq")), 10, 64)
	if err != nil {
		return 0, time.Time{}, "", false
	}
	at, err = time.Parse(time.RFC3339Nano, string(field("time")))
	return seq, at, string(field("picture")), err == nil
}

// benchStream is what a viewer of TestViewersChild read of its stream.
type benchStream struct {
	mu                 sync.Mutex
	last               uint64
	lat, picLat        []time.Duration
	events, bytes      int
	pictures, picBytes int
}

// waitStreams waits, a minute at most, until every stream has unit last's event
// (and, fetching, every picture its events named).
func waitStreams(all []*benchStream, last uint64, fetch bool) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		done := 0
		for _, s := range all {
			s.mu.Lock()
			if s.last >= last && (!fetch || s.pictures == s.events) {
				done++
			}
			s.mu.Unlock()
		}
		if done == len(all) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// summarize is the streams' summary: their latencies' p50, p99 and max, their
// events, bytes and pictures, and how many are behind unit last.
func summarize(all []*benchStream, last uint64) viewersSummary {
	var sum viewersSummary
	var lat, picLat []time.Duration
	for _, s := range all {
		s.mu.Lock()
		lat = append(lat, s.lat...)
		picLat = append(picLat, s.picLat...)
		sum.Pictures += s.pictures
		sum.PictureBytes += s.picBytes
		sum.Events += s.events
		sum.Bytes += s.bytes
		if s.last < last {
			sum.Behind++
		}
		s.mu.Unlock()
	}
	slices.Sort(picLat)
	if len(picLat) > 0 {
		sum.PictureP99 = picLat[len(picLat)*99/100]
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		sum.P50, sum.P99, sum.Max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return sum
}
