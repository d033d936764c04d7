package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// hubHolds waits until the hub's stream of each club holds want units, each
// dump and result once, in the club's order, and returns them.
func hubHolds(t *testing.T, hubURL string, want map[string]int) (dumps, results map[string][]string) {
	t.Helper()
	nc, err := nats.Connect(hubURL, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	bustest.Wait(t, "the hub's streams of the clubs", func() (bool, string) {
		dumps, results = leagueUnits(t, nc)
		var says []string
		ok := true
		for club, n := range want {
			says = append(says, fmt.Sprintf("%s: %d dumps, %d results of %d", club, len(dumps[club]), len(results[club]), n))
			ok = ok && len(dumps[club]) >= n && len(results[club]) >= n
		}
		return ok, strings.Join(says, "; ")
	})
	for club, n := range want {
		for what, got := range map[string][]string{"dumps": dumps[club], "results": results[club]} {
			distinct := slices.Compact(slices.Sorted(slices.Values(got)))
			if len(got) != n || len(distinct) != n {
				t.Errorf("%s: the hub holds %d %s, %d distinct, want %d once each: %v", club, len(got), what, len(distinct), n, got)
			}
		}
	}
	return dumps, results
}

// The same at a hub: `backup --hub` of a running hub, restored into its state
// dir, gives a hub whose clubs' sources resume where the backup left them: the
// units the clubs stored after the backup come, and none comes twice, counted per
// club, and the units after the restore too.
func TestBackupRestoreHub(t *testing.T) {
	proctest.SkipShort(t, "a hub and two clubs, the hub backed up, restored and started again")
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hub := startHubProcess(t, bin, root, "north", "south")
	hubURL := fmt.Sprintf("nats://127.0.0.1:%d", hub.hubPort)
	leaf := fmt.Sprintf("nats-leaf://127.0.0.1:%d", hub.leafPort)
	clubs := map[string]*leagueClub{}
	for i, name := range []string{"north", "south"} {
		clubs[name] = startLeagueClub(t, bin, name, leaf, filepath.Join(root, name), (i+1)*1000)
		clubs[name].feed(10)
	}
	for _, c := range clubs {
		c.answered(60 * time.Second)
	}
	hubHolds(t, hubURL, map[string]int{"north": 10, "south": 10})
	file := filepath.Join(root, "hub.gz")
	code, out, errs := runLocked(t, "", "backup", "--hub", "--nats-url", hubURL, file)
	if code != 0 {
		t.Fatalf("backup --hub: exit %d: %s", code, errs)
	}
	t.Logf("backup --hub: %s", out)
	for _, s := range []string{"LEAGUE_NORTH: 20 messages", "LEAGUE_SOUTH: 20 messages"} {
		if !strings.Contains(out, s) {
			t.Errorf("backup --hub's report does not say %q", s)
		}
	}
	// Units after the backup: in the clubs' streams, not in the backup.
	for _, c := range clubs {
		c.feed(5)
		c.answered(60 * time.Second)
	}
	hubHolds(t, hubURL, map[string]int{"north": 15, "south": 15})
	if err := hub.Stop(); err != nil {
		t.Fatalf("hub: %v", err)
	}
	state := filepath.Join(root, "hub")
	if err := os.Rename(state, state+"-lost"); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runLocked(t, "", "restore", file, "--league-state-dir", state); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errs)
	} else {
		t.Logf("restore: %s", out)
	}
	hub.Process = proctest.Start(t, bin, "hub", "--config", filepath.Join(root, "hub.toml"), "--log-format", "json")
	hub.WaitOutput("league hub running", 30*time.Second)
	for _, c := range clubs {
		c.feed(5)
		c.answered(60 * time.Second)
	}
	hubHolds(t, hubURL, map[string]int{"north": 20, "south": 20})
}

// A club whose SD card died gets its history back from the hub's copy: `backup
// --club north` at the hub, `restore` as the club's state dir. The club's
// history shows every unit and result as before, its stream goes on from the
// numbers it had (the hub's source of it resumes there: nothing twice at the hub,
// nothing lost), and its new units reach the hub.
func TestClubFromHub(t *testing.T) {
	proctest.SkipShort(t, "a hub and a club, the club's store lost and restored from the hub's copy")
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	hub := startHubProcess(t, bin, root, "north")
	hubURL := fmt.Sprintf("nats://127.0.0.1:%d", hub.hubPort)
	leaf := fmt.Sprintf("nats-leaf://127.0.0.1:%d", hub.leafPort)
	clubAddr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	clubURL := "nats://" + clubAddr
	dir := filepath.Join(root, "north")
	north := startLeagueClub(t, bin, "north", leaf, dir, 0, "--nats-listen", clubAddr)
	north.feed(12)
	north.answered(60 * time.Second)
	hubHolds(t, hubURL, map[string]int{"north": 12})
	before := withoutTimes(t, historyText(t, clubURL))
	north.stop()
	if err := os.RemoveAll(dir); err != nil { // the SD card died
		t.Fatal(err)
	}

	file := filepath.Join(root, "north.gz")
	code, out, errs := runLocked(t, "", "backup", "--club", "north", "--nats-url", hubURL, file)
	if code != 0 {
		t.Fatalf("backup --club north: exit %d: %s", code, errs)
	}
	t.Logf("backup --club: %s", out)
	if code, out, errs := runLocked(t, "", "restore", file, "--daemon-state-dir", dir); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errs)
	} else {
		t.Logf("restore: %s", out)
	}
	north = startLeagueClub(t, bin, "north", leaf, dir, 12, "--nats-listen", clubAddr)
	bustest.Wait(t, "the club's daemon up again", func() (bool, string) {
		code, _, errs := runLocked(t, "", "history", "--nats-url", clubURL, "--last", "1")
		return code == 0, errs
	})
	// Its history as before: every unit and result (their times are the results'
	// own, as published, where the club's stream had when it stored them).
	if got := withoutTimes(t, historyText(t, clubURL)); got != before {
		t.Errorf("the club's history from the hub's copy differs:\n%s", firstDiff(got, before))
	}
	// The bucket, not in the hub's copy, is filled again from the history.
	js := historyJetStream(t, clubURL)
	bustest.Wait(t, "the club's board in its bucket again", func() (bool, string) {
		kv, err := js.KeyValue(context.Background(), "SCOREBOARD_BOARDS")
		if err != nil {
			return false, err.Error()
		}
		keys, err := kv.Keys(context.Background())
		return err == nil && len(keys) == 1, fmt.Sprintf("keys %v, %v", keys, err)
	})
	north.feed(6)
	north.answered(60 * time.Second)
	hubHolds(t, hubURL, map[string]int{"north": 18})
	if !strings.HasPrefix(withoutTimes(t, historyText(t, clubURL)), before) {
		t.Errorf("the club's history after new units does not begin with the restored one")
	}
}

// withoutTimes is `history --json`'s lines without their "time".
func withoutTimes(t *testing.T, hist string) string {
	t.Helper()
	var b strings.Builder
	for line := range strings.Lines(hist) {
		i := strings.Index(line, `"time":"`)
		if i < 0 {
			t.Fatalf("history line without a time: %s", line)
		}
		j := strings.IndexByte(line[i+8:], '"')
		b.WriteString(line[:i] + line[i+8+j+1:])
	}
	return b.String()
}
