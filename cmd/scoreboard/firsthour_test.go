package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/worker"
)

// logLine is one JSON log line, as far as these tests read it.
type logLine struct {
	Level     string `json:"level"`
	Component string `json:"component"`
	Message   string `json:"message"`
	Error     string `json:"error"`
	raw       string
}

// checkLogLine reports a line without a message, or one that says its component
// twice ("web: web: listen ...").
func checkLogLine(t *testing.T, l logLine) {
	t.Helper()
	if strings.TrimSpace(l.Message) == "" {
		t.Errorf("a log line without a message: %s", l.raw)
	}
	if c := l.Component; c != "" && (strings.HasPrefix(l.Message, c+": ") || strings.HasPrefix(l.Error, c+": ")) {
		t.Errorf("a log line repeats its component %q in its text: %s", c, l.raw)
	}
}

// TestRunStartLogIsShort: a real `run` start, through the built binary, at debug
// level in JSON: up to its "ready" line at most 8 lines are at info (version,
// listeners, ports, history, ready; the embedded server's banner is at debug), every
// line of the whole run has a message, and none repeats its component.
func TestRunStartLogIsShort(t *testing.T) {
	bin := proctest.Scoreboard(t)
	cmd := exec.Command(bin, "run", "--port", "-", "--problem", "goscore", "--nats-listen", "127.0.0.1:0",
		"--http", "127.0.0.1:0", "--state-dir", t.TempDir(), "--log-level", "debug", "--log-format", "json")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan logLine, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			l := logLine{raw: sc.Text()}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l.Message = "" // not JSON: reported as a line without a message
			}
			lines <- l
		}
	}()
	var all, info []logLine
	timeout := time.After(60 * time.Second)
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("run exited before its ready line; %d lines", len(all))
			}
			all = append(all, l)
			if l.Level == "info" {
				info = append(info, l)
				ready = l.Message == "ready"
			}
		case <-timeout:
			t.Fatalf("no ready line within 60s; %d lines, %d at info", len(all), len(info))
		}
	}
	if len(info) > 8 {
		t.Errorf("%d info lines up to ready, want at most 8:", len(info))
		for _, l := range info {
			t.Errorf("  %s", l.raw)
		}
	}
	if in, err := os.ReadFile("../../testdata/samples/goscore.in"); err != nil {
		t.Fatal(err)
	} else if _, err := stdin.Write(in); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	for l := range lines {
		all = append(all, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("run: %v", err)
	}
	debug := 0
	for _, l := range all {
		checkLogLine(t, l)
		if l.Level == "debug" {
			debug++
		}
	}
	t.Logf("%d lines in all: %d at info up to ready, %d at debug", len(all), len(info), debug)
}

// TestRunHTTPTaken: a taken --http address fails the start, with the fix, as a taken
// NATS port does; the daemon does not go on without its page.
func TestRunHTTPTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errs := runLocked(t, "", "run", "--port", "-", "--problem", "goscore", "--nats-listen", "127.0.0.1:0",
		"--http", ln.Addr().String(), "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(errs, ln.Addr().String()+" is taken") || !strings.Contains(errs, "--http-listen off") {
		t.Errorf("run with --http on a taken address: exit %d, stderr:\n%s\nwant a failed start naming the address and --http's fix", code, errs)
	}
	if strings.Contains(errs, "web: web:") {
		t.Errorf("the component said twice: %s", errs)
	}
}

// TestRunPortErrorsSayWhatToDo: a --port that is no serial port (/dev/null), or a
// kernel tty name that does not exist, ends the start with one error that says what
// to do (which serial ports there are), without an attempt every few seconds. The
// run is bounded: a daemon that retried would be stopped after 30 s and fail here.
func TestRunPortErrorsSayWhatToDo(t *testing.T) {
	for _, c := range []struct{ port, want string }{
		{"/dev/null", "/dev/null is not a serial port (not a tty)"},
		{"/dev/ttyUSB97", "no device /dev/ttyUSB97; "},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var out, errb proctest.Buffer
		code := runMain(ctx, []string{"run", "--nats-listen", "off", "--http", "off", "--state-dir", t.TempDir(),
			"--port", c.port, "--problem", "goscore", "--log-format", "json"}, stdio{strings.NewReader(""), &out, &errb})
		timedOut := ctx.Err() != nil
		cancel()
		errs := errb.String()
		if code == 0 || timedOut || !strings.Contains(errs, c.want) || !strings.Contains(errs, "scoreboard ports") {
			t.Errorf("--port %s: exit %d (stopped by the test's bound: %v), want an exit saying %q and which ports there are; stderr:\n%s",
				c.port, code, timedOut, c.want, errs)
		}
		// The fact once, with the fix: the device named once on the exit line,
		// without the system's own words for it beside the hint's.
		for _, line := range strings.Split(errs, "\n") {
			if strings.HasPrefix(line, "scoreboard run:") && (strings.Count(line, c.port) != 1 || strings.Contains(line, "no such file")) {
				t.Errorf("--port %s: the exit line says the fact more than once: %q", c.port, line)
			}
		}
		if n, m := strings.Count(errs, `"port cannot be opened"`), strings.Count(errs, "port not available"); n != 1 || m != 0 {
			t.Errorf("--port %s: %d 'port cannot be opened' lines (want 1), %d retries logged (want 0)", c.port, n, m)
		}
	}
}

// TestWorkWithoutRightsExits2: 'scoreboard work' on an embedded server's listener
// without the worker credentials (so as a tool) exits 2 at start, saying which
// credential it needs, rather than running on and serving nothing; with the token it
// serves (it answers a solve request).
func TestWorkWithoutRightsExits2(t *testing.T) {
	addr := strings.TrimPrefix(bustest.Start(t, bustest.Options{Token: "s3cret"}).URL(), "nats://")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb proctest.Buffer
	code := runMain(ctx, []string{"work", "--nats-url", "nats://" + addr, "--log-format", "json"}, stdio{strings.NewReader(""), &out, &errb})
	if code != 2 || ctx.Err() != nil || !strings.Contains(errb.String(), "no worker rights") || !strings.Contains(errb.String(), "SCOREBOARD_NATS_TOKEN") {
		t.Errorf("work without credentials: exit %d (stopped by the test's bound: %v), want 2 naming the credential; stderr:\n%s",
			code, ctx.Err() != nil, errb.String())
	}

	// With the token, the same command serves.
	t.Setenv("SCOREBOARD_NATS_TOKEN", "s3cret")
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var werr proctest.Buffer
	go func() {
		done <- runMain(wctx, []string{"work", "--nats-url", "nats://" + addr, "--log-format", "json"}, stdio{strings.NewReader(""), io.Discard, &werr})
	}()
	in, want := busSample(t, "goscore")
	nc := busConnect(t, "nats://"+addr)
	var got string
	bustest.Wait(t, "an answer of the worker with the token", func() (bool, string) {
		m, err := nc.Request(bus.Subjects{Prefix: bus.DefaultPrefix}.Solve("goscore"), []byte(in), 2*time.Second)
		if err != nil {
			return false, fmt.Sprintf("last request: %v; stderr:\n%s", err, werr.String())
		}
		got = string(m.Data)
		return true, ""
	})
	stop()
	if c := <-done; c != 0 || got != want {
		t.Errorf("work with the token: exit %d, answered %q, want 0 and %q; stderr:\n%s", c, got, want, werr.String())
	}
}

// TestToolsTakeNATSURL: with no --nats-url, a tool connects to $NATS_URL, as the nats
// CLI and every NATS client do: send's units are answered by the workers there.
func TestToolsTakeNATSURL(t *testing.T) {
	srv := bustest.Start(t, bustest.Options{})
	srv.Workers(worker.Options{Prefix: bus.DefaultPrefix, Version: "test"})
	addr := strings.TrimPrefix(srv.URL(), "nats://")
	t.Setenv("NATS_URL", "nats://"+addr)
	in, want := busSample(t, "goscore")
	code, out, errs := runCmd(t, in, "send", "--port-name", "desk", "goscore")
	if code != 0 || out != want {
		t.Errorf("send with $NATS_URL=nats://%s: exit %d, stdout %q, want 0 and %q; stderr:\n%s", addr, code, out, want, errs)
	}
}

// TestRenderSampleFiles: render draws the first unit of a file of several (the
// samples, as the README runs them), and --unit N another.
func TestRenderSampleFiles(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "goscore", "../../testdata/samples/goscore.in"}, "Black 5  White 3"},
		{[]string{"render", "--unit", "2", "goscore", "../../testdata/samples/goscore.in"}, "Black 177  White 175"},
		{[]string{"render", "othello", "../../testdata/samples/othello.in"}, "4 legal moves"},
		{[]string{"render", "--unit", "2", "othello", "../../testdata/samples/othello.in"}, "played"},
		{[]string{"render", "--sgf", "--unit", "2", "goscore", "../../testdata/samples/goscore.in"}, "(;FF[4]"},
	} {
		code, out, errs := runCmd(t, "", c.args...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want a drawing with %q: %.200s", c.args, code, errs, c.want, out)
		}
	}
	code, _, errs := runCmd(t, "", "render", "--unit", "9", "othello", "../../testdata/samples/othello.in")
	if code != 1 || !strings.Contains(errs, "no unit 9: the input has 8 othello units") {
		t.Errorf("--unit 9 of 8: exit %d, stderr %q", code, errs)
	}
}

// TestWatchUnitOrderAndLines: results published in completion order (Othello #6 and
// #7 before #5) are printed by watch per port in unit order, each with a time
// column, and a multi-line answer as its lines (one starting with a blank line
// included); --json still prints the messages as they came.
func TestWatchUnitOrderAndLines(t *testing.T) {
	srv, url := busDaemon(t, false)
	nc := srv.Daemon()
	start := func(args ...string) (*proctest.Buffer, func() int) {
		var out, errs proctest.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() {
			done <- runMain(ctx, append([]string{"watch", "--nats-url", url}, args...), stdio{strings.NewReader(""), &out, &errs})
		}()
		return &out, func() int { cancel(); return <-done }
	}
	text, stopText := start()
	raw, stopRaw := start("--json")
	// Once both print a probe (a result without a sequence, shown at once), they are
	// subscribed.
	probe, _ := json.Marshal(result.Record{Problem: "othello", Port: "probe", Answer: "probe\n"})
	bustest.Wait(t, "probe printed by both watches", func() (bool, string) {
		if err := nc.Publish("scoreboard.result.othello.probe", probe); err != nil {
			t.Fatal(err)
		}
		tx, rx := text.String(), raw.String()
		return strings.Contains(tx, "probe") && strings.Contains(rx, "probe"), fmt.Sprintf("watch printed:\n%s\nwatch --json printed:\n%s", tx, rx)
	})
	answers := map[uint64]string{
		4: "(3,4) (3,6)\n", 5: "\nNo legal move.\n", 6: "Black -  3 White - 12\n", 7: "(3,5)\n--------\n---WB---\n",
	}
	for _, seq := range []uint64{4, 6, 7, 5} {
		r, _ := json.Marshal(result.Record{Problem: "othello", Port: "hall", Seq: seq, Answer: answers[seq]})
		if err := nc.Publish("scoreboard.result.othello.hall", r); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()
	bustest.Wait(t, "hall's four results printed", func() (bool, string) {
		tx := text.String()
		return strings.Count(tx, " hall othello #") == 4, "watch printed:\n" + tx
	})
	if c := stopText(); c != 0 {
		t.Errorf("watch: exit %d", c)
	}
	bustest.Wait(t, "hall's four messages printed by --json", func() (bool, string) {
		rx := raw.String()
		return strings.Count(rx, `"port":"hall"`) == 4, "watch --json printed:\n" + rx
	})
	if c := stopRaw(); c != 0 {
		t.Errorf("watch --json: exit %d", c)
	}
	out := text.String()
	var order []string
	for l := range strings.SplitSeq(out, "\n") {
		if i := strings.Index(l, " hall othello #"); i >= 0 {
			if _, err := time.Parse("15:04:05", l[:i]); err != nil {
				t.Errorf("no time column: %q", l)
			}
			order = append(order, strings.Fields(l[i:])[2])
		}
	}
	if strings.Join(order, " ") != "#4 #5 #6 #7" {
		t.Errorf("hall's results in the order %v, want #4 #5 #6 #7:\n%s", order, out)
	}
	for _, want := range []string{"hall othello #5\n", "\n                         No legal move.\n", "#7 (3,5)\n                         --------\n                         ---WB---\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("watch's output lacks %q:\n%s", want, out)
		}
	}
	// --json: as they came.
	var seqs []string
	for l := range strings.SplitSeq(strings.TrimSpace(raw.String()), "\n") {
		var r result.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("--json line %q: %v", l, err)
		}
		if r.Port == "hall" {
			seqs = append(seqs, strconv.FormatUint(r.Seq, 10))
		}
	}
	if strings.Join(seqs, " ") != "4 6 7 5" {
		t.Errorf("--json printed %v, want the order they came: 4 6 7 5", seqs)
	}
}

// TestDemo: 'scoreboard demo' (the built binary) starts the daemon with two simulated
// scoreboards that play the samples in a loop: the page it prints the address of
// shows both boards past their sample's last unit, and its round of pairings names
// hall's players in the history. It says what to try next, keeps
// its history in a throwaway directory, and removes it when stopped.
func TestDemo(t *testing.T) {
	httpAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	natsAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	p := proctest.Start(t, proctest.Scoreboard(t), "demo", "--http", httpAddr, "--nats-listen", natsAddr, "--baud", "0", "--pause", "100ms")
	p.WaitOutput("removed when the demo stops", 60*time.Second)
	out := p.Output()
	for _, want := range []string{"http://" + httpAddr + "/", "NATS_URL=nats://" + natsAddr + " scoreboard watch"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo does not say %q:\n%s", want, out)
		}
	}
	_, rest, _ := strings.Cut(out, "The history is kept in ")
	dir, _, _ := strings.Cut(rest, ",")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the demo's state dir %q: %v", dir, err)
	}
	// Past the last unit of each sample: the boards play in a loop.
	past := map[string]uint64{"hall": 2, "lobby": 8}
	var boards []struct {
		Port string `json:"port"`
		Seq  uint64 `json:"seq"`
	}
	bustest.Wait(t, "the page's boards of hall past #2 and lobby past #8", func() (bool, string) {
		boards = boards[:0]
		if resp, err := http.Get("http://" + httpAddr + "/api/boards"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&boards)
			resp.Body.Close()
		}
		looped := 0
		for _, b := range boards {
			if b.Seq > past[b.Port] {
				looped++
			}
		}
		return looped == 2, fmt.Sprintf("boards %+v", boards)
	})
	// The demo's round names the players: hall's latest units carry them.
	bustest.Wait(t, "hall's players in its history", func() (bool, string) {
		code, out, errs := runLocked(t, "", "history", "--json", "--nats-url", "nats://"+natsAddr, "--port", "hall", "--last", "1")
		return code == 0 && strings.Contains(out, `"black":"Zoé Lefèvre","black_rank":"2d","white":"王小明"`), out + errs
	})
	if err := p.Stop(); err != nil {
		t.Errorf("demo after SIGTERM: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the demo's throwaway state dir %s is still there (%v)", dir, err)
	}
}

// TestREADMEQuickStartFromRepository: the README's quick start runs from a clone
// alone: every file its `go run` commands read is in the repository (no ../shared),
// its run command is the one TestRunREADMECommand runs, its test command is the one
// .ci/run calls, and it stays a front door (at most about 200 lines).
func TestREADMEQuickStartFromRepository(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	if n := strings.Count(text, "\n"); n > 210 {
		t.Errorf("README.md is %d lines: a front door is about 200; move the reference to docs/", n)
	}
	if strings.Contains(text, "../shared") {
		t.Errorf("README.md needs ../shared, which a clone does not have")
	}
	var runs []string
	for l := range strings.SplitSeq(text, "\n") {
		if cmd, ok := strings.CutPrefix(l, "    go run ./cmd/scoreboard "); ok {
			runs = append(runs, cmd)
			for _, f := range strings.Fields(cmd) {
				if strings.Contains(f, "/") && !strings.HasPrefix(f, "-") && !strings.HasPrefix(f, "/dev/") {
					if _, err := os.Stat("../../" + f); err != nil {
						t.Errorf("the README's command %q reads %s, not in the repository: %v", cmd, f, err)
					}
				}
			}
		}
	}
	want := "run --port-device - --port-problem goscore < testdata/samples/goscore.in"
	if !slices.Contains(runs, want) || !slices.Contains(runs, "demo") {
		t.Errorf("the README's go run commands are %q, want %q (TestRunREADMECommand's) and demo", runs, want)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	const test = "go test -race -count=1 -timeout 20m ./..."
	if !strings.Contains(text, "    "+test+"\n") || !strings.Contains(string(ci), "\n"+test+"\n") {
		t.Errorf("the README's test command and .ci/run's differ: want both to be %q", test)
	}
}
