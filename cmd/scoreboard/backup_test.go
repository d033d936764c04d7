package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/backup"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/serialio"
)

// backupDaemon is a `run` process with an othello port on a pty, its page and
// its NATS listener, on the state dir dir.
type backupDaemon struct {
	run       *proctest.Process
	url, page string
	hall      *serialio.PTY
	natsAddr  string
	httpAddr  string
	bin, dir  string
}

func startBackupDaemon(t *testing.T, bin, dir, natsAddr, httpAddr string) *backupDaemon {
	t.Helper()
	d := &backupDaemon{bin: bin, dir: dir, natsAddr: natsAddr, httpAddr: httpAddr, hall: runPTY(t),
		url: "nats://" + natsAddr, page: "http://" + httpAddr}
	d.run = proctest.Start(t, bin, "run", "--nats-listen", natsAddr, "--daemon-state-dir", dir, "--http-listen", httpAddr,
		"--port-device", d.hall.Path, "--port-problem", "othello", "--port-name", "hall", "--port-baud", "115200")
	runWaitOpened(t, d.hall, d.run)
	d.run.WaitOutput("scoreboard running", 60*time.Second)
	return d
}

// feed sends a sample's units through the port and `send`, and waits for their
// answers: othello on the port, goscore and replay by send.
func (d *backupDaemon) feed(t *testing.T) {
	t.Helper()
	in, want := samples.Read(t, "othello.in"), samples.Read(t, "othello.out")
	if _, err := d.hall.Master.Write(in); err != nil {
		t.Fatal(err)
	}
	if got := runReadAnswers(t, d.hall, len(want), d.run); !bytes.Equal(got, want) {
		t.Fatalf("hall's answers\n got %q\nwant %q", got, want)
	}
	for _, p := range []string{"goscore", "replay"} {
		in, want := samples.Read(t, p+".in"), samples.Read(t, p+".out")
		code, out, errs := runLocked(t, string(in), "send", "--nats-url", d.url, "--port-name", "desk-"+p, p)
		if code != 0 || out != string(want) {
			t.Fatalf("send %s: exit %d, %q (want %q): %s", p, code, out, want, errs)
		}
	}
}

// historyText is `history --json`'s output, whole.
func historyText(t *testing.T, url string, args ...string) string {
	t.Helper()
	code, out, errs := runLocked(t, "", append([]string{"history", "--json", "--nats-url", url}, args...)...)
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	return out
}

// pageBody is the page's answer at path.
func pageBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// backupSettled waits until the page's boards show each port's latest unit of
// the history (the bucket caught up), and returns both.
func backupSettled(t *testing.T, d *backupDaemon) (hist, boards string) {
	t.Helper()
	bustest.Wait(t, "the boards at the history's latest", func() (bool, string) {
		hist, boards = historyText(t, d.url), pageBody(t, d.page+"/api/boards")
		latest := map[string]uint64{}
		for line := range strings.Lines(hist) {
			var r historyRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("history line %q: %v", line, err)
			}
			latest[r.Port] = r.Seq
		}
		var shown []historyRecord
		if err := json.Unmarshal([]byte(boards), &shown); err != nil {
			return false, fmt.Sprintf("/api/boards: %v", err)
		}
		for _, b := range shown {
			if latest[b.Port] != b.Seq {
				return false, fmt.Sprintf("%s: board at %d, history at %d", b.Port, b.Seq, latest[b.Port])
			}
		}
		return len(shown) == len(latest) && len(latest) > 0, fmt.Sprintf("%d boards, %d ports in the history", len(shown), len(latest))
	})
	return hist, boards
}

// The done-when test of backup and restore: a backup of a running daemon, restored
// into a new state dir, gives a daemon whose `history --json` is the same byte for
// byte, whose page's boards and history page are the same, and whose stream goes
// on from the backup's last sequence number; what came after the backup is not in
// it. A non-empty target is refused, changing nothing.
func TestBackupRestore(t *testing.T) {
	proctest.SkipShort(t, "a daemon backed up, restored and started again")
	bin := proctest.Scoreboard(t)
	natsAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	httpAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	d := startBackupDaemon(t, bin, t.TempDir(), natsAddr, httpAddr)
	d.feed(t)
	hist, boards := backupSettled(t, d)
	historyPage := pageBody(t, d.page+"/api/history?port=hall")
	if !strings.Contains(historyPage, ".svg") {
		t.Fatalf("the page's history has no picture links to compare: %.300s", historyPage)
	}

	file := filepath.Join(t.TempDir(), "backup.gz")
	code, out, errs := runLocked(t, "", "backup", "--nats-url", d.url, file)
	if code != 0 {
		t.Fatalf("backup: exit %d: %s", code, errs)
	}
	t.Logf("backup: %s", out)
	for _, s := range []string{"SCOREBOARD:", "KV_SCOREBOARD_BOARDS:"} {
		if !strings.Contains(out, s) {
			t.Errorf("backup's report names no %s: %s", s, out)
		}
	}
	d.feed(t) // after the backup: not in it
	if err := d.run.Stop(); err != nil {
		t.Fatalf("run: %v", err)
	}

	// A state dir that is not empty is refused, and left as it was.
	if code, _, errs := runLocked(t, "", "restore", file, "--daemon-state-dir", d.dir); code == 0 || !strings.Contains(errs, "not empty") {
		t.Fatalf("restore into the old, full state dir: exit %d: %s", code, errs)
	}
	dir := filepath.Join(t.TempDir(), "restored")
	code, out, errs = runLocked(t, "", "restore", file, "--daemon-state-dir", dir)
	if code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errs)
	}
	t.Logf("restore: %s", out)

	r := startBackupDaemon(t, bin, dir, natsAddr, httpAddr)
	gotHist, gotBoards := backupSettled(t, r)
	if gotHist != hist {
		t.Errorf("history --json after the restore differs:\n got %d bytes\nwant %d bytes\n%s", len(gotHist), len(hist), firstDiff(gotHist, hist))
	}
	if g, w := withoutPortState(t, gotBoards), withoutPortState(t, boards); g != w {
		t.Errorf("/api/boards after the restore differs:\n%s", firstDiff(g, w))
	}
	if got := pageBody(t, r.page+"/api/history?port=hall"); got != historyPage {
		t.Errorf("the page's history after the restore differs:\n%s", firstDiff(got, historyPage))
	}
	if log := r.run.Output(); strings.Contains(log, "damaged") {
		t.Errorf("the restored store was reported damaged:\n%s", log)
	}
	// The stream goes on: new units follow the restored ones.
	r.feed(t)
	after := historyText(t, r.url)
	if !strings.HasPrefix(after, hist) || len(after) <= len(hist) {
		t.Errorf("after more units, the history does not extend the restored one (%d bytes, restored %d)", len(after), len(hist))
	}
	if err := r.run.Stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
}

// withoutPortState is /api/boards without each board's live port state (open
// since when): the running daemon's, not the history's.
func withoutPortState(t *testing.T, boards string) string {
	t.Helper()
	var bs []map[string]any
	if err := json.Unmarshal([]byte(boards), &bs); err != nil {
		t.Fatalf("/api/boards: %v", err)
	}
	for _, b := range bs {
		delete(b, "state")
	}
	out, _ := json.Marshal(bs)
	return string(out)
}

// firstDiff shows where a and b part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at byte %d:\n got …%s\nwant …%s", i, a[lo:min(len(a), i+80)], b[lo:min(len(b), i+80)])
}

// A bad backup changes nothing: restore checks the whole file before it touches
// the state dir, so an absent dir stays absent and an empty one empty, and the
// error names the file and what to do. The tool's rights are enough to back up.
func TestRestoreBadFile(t *testing.T) {
	b := bustest.Start(t, bustest.Options{JetStream: true})
	js, err := jetstream.New(b.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.Setup(context.Background(), js, history.Config{Prefix: "scoreboard", MaxAge: time.Hour, MaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := b.Daemon().Publish("scoreboard.dump.goscore.hall", fmt.Appendf(nil, "unit %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	b.Daemon().Flush()
	file := filepath.Join(t.TempDir(), "good.gz")
	if code, _, errs := runLocked(t, "", "backup", "--nats-url", b.URL(), file); code != 0 {
		t.Fatalf("backup with a tool's rights: exit %d: %s", code, errs)
	}
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(good)/2] ^= 0x40
	for name, b := range map[string][]byte{"cut.gz": good[:len(good)-8], "flipped.gz": flipped} {
		bad := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(bad, b, 0o600); err != nil {
			t.Fatal(err)
		}
		absent, empty := filepath.Join(t.TempDir(), "new"), t.TempDir()
		for _, dir := range []string{absent, empty} {
			code, _, errs := runLocked(t, "", "restore", bad, "--daemon-state-dir", dir)
			if code == 0 || !strings.Contains(errs, bad) || !strings.Contains(errs, "nothing was restored") {
				t.Errorf("restore %s into %s: exit %d: %s", name, dir, code, errs)
			}
			t.Logf("restore %s: %s", name, strings.TrimSpace(errs))
		}
		if _, err := os.Stat(absent); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the absent state dir was made: %v", name, err)
		}
		if ents, _ := os.ReadDir(empty); len(ents) != 0 {
			t.Errorf("%s: the empty state dir holds %d entries", name, len(ents))
		}
	}
	// The good one goes into the empty dir.
	dir := t.TempDir()
	if code, _, errs := runLocked(t, "", "restore", file, "--daemon-state-dir", dir); code != 0 {
		t.Fatalf("restore the good file: exit %d: %s", code, errs)
	}
}

// A daemon started on the state dir of a later format (a later version's, after a
// downgrade) refuses to start: exit status 1, and one line that says what to do.
func TestRunRefusesLaterStateFormat(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scoreboard.format"), []byte("2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runLocked(t, "", "run", "--daemon-state-dir", dir, "--nats-listen", "off", "--http-listen", "off", "--port-device", "-", "--port-problem", "goscore")
	if code != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "format 2") || !strings.Contains(errs, "install the later version again") {
		t.Fatalf("run on a later format's state dir: exit %d, %q; want 1 and one line", code, errs)
	}
}

// The nightly backup's unit runs what it says: its ExecStart= (a shell's line,
// systemd's $$ and %% undone) writes a whole backup into $STATE_DIRECTORY, named
// by the time, from the daemon its environment names; its ExecStartPost= (no
// shell: the pattern is find's) removes the backups older than 14 days, and keeps
// the others.
func TestBackupUnitCommands(t *testing.T) {
	bin := proctest.Scoreboard(t)
	b := bustest.Start(t, bustest.Options{JetStream: true})
	js, err := jetstream.New(b.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.Setup(context.Background(), js, history.Config{Prefix: "scoreboard", MaxAge: time.Hour, MaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := b.Daemon().Publish("scoreboard.dump.goscore.hall", []byte("a unit")); err != nil {
		t.Fatal(err)
	}
	unit, err := os.ReadFile("../../configs/scoreboard-backup.service")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for line := range strings.Lines(string(unit)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.HasPrefix(k, "ExecStart") {
			lines[k] = strings.NewReplacer("$$", "$", "%%", "%").Replace(v)
		}
	}
	dir := t.TempDir()
	old := filepath.Join(dir, "scoreboard-20260101T033000Z.gz")
	if err := os.WriteFile(old, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(old, time.Now().AddDate(0, 0, -15), time.Now().AddDate(0, 0, -15)); err != nil {
		t.Fatal(err)
	}
	script, ok := strings.CutPrefix(lines["ExecStart"], "/bin/sh -c '")
	if !ok || !strings.HasSuffix(script, "'") {
		t.Fatalf("ExecStart= is not /bin/sh -c '...': %q", lines["ExecStart"])
	}
	sh := exec.Command("/bin/sh", "-c", strings.ReplaceAll(strings.TrimSuffix(script, "'"), "/usr/bin/scoreboard ", bin+" "))
	sh.Env = append(os.Environ(), "STATE_DIRECTORY="+dir, "SCOREBOARD_NATS_URL="+b.URL())
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("ExecStart: %v\n%s", err, out)
	}
	post := strings.Fields(strings.ReplaceAll(lines["ExecStartPost"], "/var/lib/scoreboard-backup/", dir+"/"))
	if out, err := exec.Command(post[0], post[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("ExecStartPost: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "scoreboard-*.gz"))
	if len(files) != 1 || files[0] == old {
		t.Fatalf("after the unit's commands: %v; want one new backup, the old one removed", files)
	}
	if _, counts, err := backup.Check(files[0]); err != nil || len(counts) == 0 {
		t.Fatalf("the unit's backup %s: %v", files[0], err)
	}
}
