package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/serialio"
	"github.com/goclub/scoreboard/worker"
)

// Issue 41, the confused deputy: a tool without credentials sends dumps and solve
// requests (and $SRV requests) whose reply subject is one of the daemon's own, so
// that a worker, answering with its rights, writes there. Against a real `run`
// process with its in-process workers, and against a real remote `work` process
// (the daemon without workers): every subject family of the project as a reply
// subject, and nothing lands: the boards bucket, the history and the port are what
// they were, the workers count each reply refused, and a requester on its own inbox
// still gets its answer.

const (
	replyToken = "reply-w0rker"
	replyPort  = "hall"  // a real port: it reads two units
	replyGhost = "lobby" // no port: it never reads a unit
)

// replyTargets are the reply subjects an attacker names: one of every family of
// subjects the daemon, its history, a league link and the server use. The display's
// own inbox is an inbox: it is answered, and the display refuses what it gets.
func replyTargets(displayInbox string) []string {
	return []string{
		"$KV.SCOREBOARD_BOARDS." + replyGhost,
		"$KV.SCOREBOARD_BOARDS." + replyPort,
		"$JS.API.STREAM.PURGE.SCOREBOARD",
		"$JS.API.STREAM.DELETE.KV_SCOREBOARD_BOARDS",
		"$JS.API.CONSUMER.CREATE.SCOREBOARD",
		"$JS.ACK.SCOREBOARD.c.1.1.1.0.0",
		"$JS.FC.SCOREBOARD.c.1",
		"$JSC.R.x.y",
		"$SRV.PING.scoreboard",
		"$SYS.REQ.SERVER.PING",
		"$LEAGUE." + replyGhost + ".S.x",
		"$O.x.y",
		"scoreboard.repair.result.goscore." + replyGhost,
		"scoreboard.repair.dump.goscore." + replyGhost,
		"scoreboard.result.goscore." + replyGhost,
		"scoreboard.result.goscore." + replyPort,
		"scoreboard.dump.goscore." + replyGhost,
		"scoreboard.solve.goscore",
		"_INBOX", // no inbox under it
		"_INBOX.*",
		"_INBOX.>",
		displayInbox,
	}
}

func TestTrustReplySubjects(t *testing.T) {
	for _, remote := range []bool{false, true} {
		t.Run(map[bool]string{false: "daemon", true: "remote-work"}[remote], func(t *testing.T) {
			replyAttack(t, remote)
		})
	}
}

// replyPTY is the port's scoreboard: it writes units and keeps what comes back.
type replyPTY struct {
	pt *serialio.PTY
	mu sync.Mutex
	b  strings.Builder
}

func (p *replyPTY) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.String()
}

// replyEnv is a daemon under the attack, and what it did before.
type replyEnv struct {
	port             *replyPTY
	run, work        *proctest.Process
	url, web         string
	tool             *forger
	displayInbox, a1 string
	kv               jetstream.KeyValue
	hallRev          uint64
	natsCmd          func(args ...string) (string, error)
	unit, in, want   string
}

func replyAttack(t *testing.T, remote bool) {
	e := startReplyEnv(t, remote)
	targets := replyTargets(e.displayInbox)
	notInbox := e.attack(t, targets)
	if remote {
		e.rogue(t, targets)
	}
	// The workers count each reply refused: 2 a subject that is no inbox (the dump
	// and the solve request), and the CLI's one.
	wantRefused := int64(2*(notInbox-1) + 1)
	var refused int64
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if refused = replyRefused(t, e.tool.nc); refused >= wantRefused {
			break
		}
	}
	if refused != wantRefused {
		t.Errorf("the workers counted %d replies refused, want %d", refused, wantRefused)
	}
	e.legit(t)
	landed := e.landed(t)
	t.Logf("%d subjects a reply, %d of them no inbox; %d messages sent by the tool; replies refused by the workers %d (want %d)",
		len(targets), notInbox-1, e.tool.sent.Load(), refused, wantRefused)
	for _, l := range landed {
		t.Error(l)
	}
	if e.work != nil && strings.Contains(e.work.Output(), "panic") {
		t.Errorf("the worker panicked:\n%s", e.work.Output())
	}
}

// startReplyEnv starts the daemon (and the remote worker), and has its port read
// one unit, its answer shown and its board and history kept.
func startReplyEnv(t *testing.T, remote bool) *replyEnv {
	e := &replyEnv{}
	bin := proctest.Scoreboard(t)
	port := &replyPTY{pt: runPTY(t)}
	e.port = port
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	url := "nats://" + addr
	web := "http://127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	args := []string{"run", "--state-dir", t.TempDir(), "--port", port.pt.Path, "--port-name", replyPort, "--problem", "goscore",
		"--baud", "115200", "--error-line", "--nats-listen", addr, "--nats-listen-token", replyToken,
		"--http", strings.TrimPrefix(web, "http://")}
	if remote {
		args = append(args, "--no-workers")
	}
	run := proctest.Start(t, bin, args...)
	runWaitOpened(t, port.pt, run)
	// Read once the daemon holds the port: before, the terminal has no other end.
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := port.pt.Master.Read(b)
			port.mu.Lock()
			port.b.Write(b[:n])
			port.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	run.WaitOutput("scoreboard running", 60*time.Second)
	if remote {
		e.work = proctest.Start(t, bin, "work", "--nats-url", url, "--nats-token", replyToken, "--http", "off")
		e.work.WaitOutput("scoreboard worker running", 60*time.Second)
	}

	// The port reads one unit; the tool sees its dump, and so the display's inbox.
	tool := newForger(t, url)
	inboxes := make(chan string, 4)
	if _, err := tool.nc.Subscribe("scoreboard.dump.goscore."+replyPort, func(m *nats.Msg) { inboxes <- m.Reply }); err != nil {
		t.Fatal(err)
	}
	if err := tool.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	u1, a1 := faulttest.GoscoreBoard(1)
	if _, err := port.pt.Master.Write([]byte(u1)); err != nil {
		t.Fatal(err)
	}
	var displayInbox string
	select {
	case displayInbox = <-inboxes:
	case <-time.After(60 * time.Second):
		t.Fatalf("no dump of the port within 60s; output:\n%s", run.Output())
	}
	bustest.Wait(t, "the port's first answer", func() (bool, string) { return port.text() == a1, fmt.Sprintf("%q", port.text()) })
	js := historyJetStream(t, url)
	kv, err := js.KeyValue(t.Context(), "SCOREBOARD_BOARDS")
	if err != nil {
		t.Fatal(err)
	}
	var hallRev uint64
	bustest.Wait(t, "the port's board", func() (bool, string) {
		v, err := kv.Get(t.Context(), replyPort)
		if err != nil {
			return false, err.Error()
		}
		hallRev = v.Revision()
		return true, ""
	})
	before := replyHistory(t, url, replyPort)
	if len(before) != 1 || before[0].Answer != a1 {
		t.Fatalf("the port's history before the attack: %+v", before)
	}

	e.run, e.url, e.web, e.tool, e.displayInbox, e.a1, e.kv, e.hallRev = run, url, web, tool, displayInbox, a1, kv, hallRev
	e.in, e.want = busSample(t, "goscore")
	e.unit, _ = faulttest.GoscoreBoard(7)
	cli := proctest.NATSCLI(t)
	home := t.TempDir()
	e.natsCmd = func(args ...string) (string, error) {
		cmd := exec.Command(cli, append([]string{"--server", url, "--timeout", "10s"}, args...)...)
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	return e
}

// attack sends, as the tool, a dump on a port of its own ("manual", which a tool
// may use), a solve request, and the micro service's $SRV requests, each with every
// reply subject; and the headline with the official NATS CLI. It returns how many
// of those that reach a worker are no inbox, the CLI's included.
func (e *replyEnv) attack(t *testing.T, targets []string) int {
	notInbox := 0
	for _, r := range targets {
		// The server itself refuses a client's message whose reply subject is a
		// JetStream ack: none reaches a worker.
		if !bus.ReplyInbox(r) && !strings.HasPrefix(r, "$JS.ACK.") {
			notInbox++
		}
		for _, m := range []*nats.Msg{
			{Subject: "scoreboard.dump.goscore.manual", Reply: r, Data: []byte(e.unit)},
			{Subject: "scoreboard.solve.goscore", Reply: r, Data: []byte(e.in)},
			{Subject: "$SRV.PING.scoreboard", Reply: r},
			{Subject: "$SRV.INFO", Reply: r},
			{Subject: "$SRV.STATS.scoreboard", Reply: r},
		} {
			if err := e.tool.nc.PublishMsg(m); err != nil {
				t.Fatalf("publish %s reply %s: %v", m.Subject, r, err)
			}
			e.tool.sent.Add(1)
		}
	}
	if out, err := e.natsCmd("pub", "scoreboard.dump.goscore.manual", e.unit, "--reply", "$KV.SCOREBOARD_BOARDS."+replyGhost); err != nil {
		t.Fatalf("nats pub --reply: %v: %s", err, out)
	}
	return notInbox + 1
}

// rogue: with worker credentials, a client that answers whatever it takes (a worker
// of an older build, or a rogue one) on the dumps of a problem of its own: the
// server lets it answer an inbox only.
func (e *replyEnv) rogue(t *testing.T, targets []string) {
	var rogueAnswers atomic.Int64
	rogue := newForger(t, e.url, nats.Token(replyToken))
	if _, err := rogue.nc.QueueSubscribe("scoreboard.dump.rogue.*", bus.QueueGroup, func(m *nats.Msg) {
		if m.Respond([]byte(`{"problem":"goscore","port":"`+replyGhost+`","answer":"FORGED\n"}`)) == nil {
			rogueAnswers.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := rogue.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// The replies on subjects beyond its role's own: those it may publish on anyway
	// (results, $SRV, inboxes) prove nothing, and a JetStream ack as a reply subject
	// the server refuses the tool.
	var outside int64
	for _, r := range targets {
		if !strings.HasPrefix(r, bus.InboxPrefix) && !strings.HasPrefix(r, "$JS.ACK.") &&
			!strings.HasPrefix(r, "$SRV.") && !strings.HasPrefix(r, "scoreboard.result.") {
			if err := e.tool.nc.PublishMsg(&nats.Msg{Subject: "scoreboard.dump.rogue.x", Reply: r, Data: []byte(e.unit)}); err != nil {
				t.Fatal(err)
			}
			outside++
		}
	}
	if !replyWait(func() bool { return rogueAnswers.Load() >= outside }) {
		t.Errorf("the rogue answered %d of %d dumps", rogueAnswers.Load(), outside)
	}
	// The server refuses each answer.
	replyWait(func() bool { return rogue.refused.Load() >= outside })
	t.Logf("rogue worker: %d answers sent, %d refused by the server (want %d)", rogueAnswers.Load(), rogue.refused.Load(), outside)
	if rogue.refused.Load() != outside {
		t.Errorf("the server refused %d of the rogue worker's %d answers outside _INBOX.", rogue.refused.Load(), outside)
	}
}

// legit: a requester on its own inbox still gets its answers: a solve request
// (nats.go and the CLI), and a dump as send makes it, answered after what the
// attack's dumps published before it: a barrier for the workers. A tool's dump is
// kept nowhere (docs/history.md): its result is not in the history.
func (e *replyEnv) legit(t *testing.T) {
	if m, err := e.tool.nc.Request("scoreboard.solve.goscore", []byte(e.in), 30*time.Second); err != nil || string(m.Data) != e.want {
		t.Errorf("solve on the requester's own inbox: %v", err)
	}
	if out, err := e.natsCmd("req", "scoreboard.solve.goscore", e.in); err != nil || !strings.Contains(out, strings.TrimSpace(e.want)) {
		t.Errorf("nats req on its own inbox: %v: %s", err, out)
	}
	legit := &nats.Msg{Subject: "scoreboard.dump.goscore.manual", Data: []byte(e.unit),
		Header: nats.Header{bus.HeaderSeq: {"99"}, bus.HeaderOrigin: {"legit"}}}
	if m, err := e.tool.nc.RequestMsg(legit, 30*time.Second); err != nil || !strings.Contains(string(m.Data), `"seq":99`) {
		t.Errorf("a dump on the requester's own inbox: %v", err)
	}
	if recs := replyHistory(t, e.url, "manual"); len(recs) > 0 {
		t.Errorf("a tool's dump is in the history: %+v", recs)
	}
}

// landed says what of the attack landed: in the bucket, the history, the page, on
// the port, whose second unit it reads last.
func (e *replyEnv) landed(t *testing.T) []string {
	ctx := t.Context()
	var landed []string
	// Checked before the port's next unit writes its board again.
	if v, err := e.kv.Get(ctx, replyPort); err != nil || v.Revision() != e.hallRev {
		landed = append(landed, fmt.Sprintf("the port's board was written over (%v)", err))
	}
	// The port reads a second unit: its line is the next to come back, so whatever
	// reached the port in between shows.
	u2, a2 := faulttest.GoscoreBoard(2)
	if _, err := e.port.pt.Master.Write([]byte(u2)); err != nil {
		t.Fatal(err)
	}
	if !replyWait(func() bool { return strings.HasSuffix(e.port.text(), a2) }) {
		t.Errorf("the port's second answer: not in %q", e.port.text())
	}
	if got := e.port.text(); got != e.a1+a2 {
		landed = append(landed, fmt.Sprintf("the port wrote %q, want %q", got, e.a1+a2))
	}
	if _, err := e.kv.Get(ctx, replyGhost); err == nil {
		landed = append(landed, "the boards bucket has a board "+replyGhost)
	}
	if ghost := replyHistory(t, e.url, replyGhost); len(ghost) != 0 {
		landed = append(landed, fmt.Sprintf("the history has %d records of %s, which never read a unit: %+v", len(ghost), replyGhost, ghost[0]))
	}
	replyWait(func() bool { return len(replyHistory(t, e.url, replyPort)) >= 2 })
	if after := replyHistory(t, e.url, replyPort); len(after) != 2 || after[0].Answer != e.a1 || after[1].Answer != a2 {
		landed = append(landed, fmt.Sprintf("the port's history is %+v, want its two units", after))
	}
	if boards := replyBoards(t, e.web); slices.Contains(boards, replyGhost) || !slices.Contains(boards, replyPort) {
		landed = append(landed, fmt.Sprintf("/api/boards has ports %v", boards))
	}
	return landed
}

// replyWait waits for ok, 30s at most, and says whether it came.
func replyWait(ok func() bool) bool {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

// replyRefused sums the workers' refused replies over every instance and endpoint
// of the service's stats.
func replyRefused(t *testing.T, nc *nats.Conn) int64 {
	t.Helper()
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest("$SRV.STATS."+bus.ServiceName, inbox, nil); err != nil {
		t.Fatal(err)
	}
	var n int64
	for {
		m, err := sub.NextMsg(time.Second)
		if err != nil {
			return n
		}
		var s micro.Stats
		if json.Unmarshal(m.Data, &s) != nil {
			continue
		}
		for _, e := range s.Endpoints {
			var d worker.EndpointData
			b, _ := json.Marshal(e.Data)
			if json.Unmarshal(b, &d) == nil {
				n += d.Dumps.RefusedReplies
			}
		}
	}
}

// replyHistory is the history's records of one port.
func replyHistory(t *testing.T, url, port string) []historyRecord {
	t.Helper()
	var out []historyRecord
	for _, r := range historyJSON(t, url) {
		if r.Port == port {
			out = append(out, r)
		}
	}
	return out
}

// replyBoards is the ports of the page's boards.
func replyBoards(t *testing.T, web string) []string {
	t.Helper()
	resp, err := http.Get(web + "/api/boards")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var boards []struct {
		Port string `json:"port"`
	}
	if err := json.Unmarshal(b, &boards); err != nil {
		t.Fatalf("/api/boards: %v: %s", err, b)
	}
	var ports []string
	for _, bd := range boards {
		ports = append(ports, bd.Port)
	}
	return ports
}
