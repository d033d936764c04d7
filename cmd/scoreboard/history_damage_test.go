package main

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/internal/samples"
)

// lastBlock is the stream's last message block file in the state dir.
func lastBlock(t *testing.T, dir string) string {
	t.Helper()
	blocks, _ := filepath.Glob(filepath.Join(dir, "jetstream", "$G", "streams", "SCOREBOARD", "msgs", "*.blk"))
	if len(blocks) == 0 {
		t.Fatalf("no block files under %s", dir)
	}
	sort.Slice(blocks, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(blocks[i]), ".blk"))
		b, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(blocks[j]), ".blk"))
		return a < b
	})
	return blocks[len(blocks)-1]
}

// A store damaged as a power cut can damage it costs no answer: its last block cut
// short, or bytes in its middle overwritten, the daemon starts, answers every unit,
// and the history keeps what is readable, saying in one log line what it dropped.
func TestHistoryDamagedStoreFault(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--nats-listen", "off", "--http", "off", "--port", "-", "--problem", "goscore", "--state-dir", dir}
	in, want := samples.Read(t, "goscore.in"), string(samples.Read(t, "goscore.out"))
	many := strings.Repeat(string(in), 50)
	if code, out, errs := runLocked(t, many, args...); code != 0 || out != strings.Repeat(want, 50) {
		t.Fatalf("first run: exit %d, %d bytes of answers: %s", code, len(out), errs)
	}
	for _, damage := range []struct {
		name string
		do   func(block string) error
	}{
		{"last block cut short", func(block string) error {
			fi, err := os.Stat(block)
			if err != nil {
				return err
			}
			return os.Truncate(block, fi.Size()/2+7)
		}},
		{"bytes overwritten in the middle", func(block string) error {
			f, err := os.OpenFile(block, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			_, err = f.WriteAt([]byte(strings.Repeat("\xde\xad", 64)), fi.Size()/2)
			return err
		}},
	} {
		block := lastBlock(t, dir)
		if err := damage.do(block); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runLocked(t, string(in), args...)
		if code != 0 || out != want {
			t.Errorf("%s (%s): exit %d, answers %q, want %q: %s", damage.name, block, code, out, want, errs)
			continue
		}
		lines := 0
		for line := range strings.Lines(errs) {
			if strings.Contains(line, "the store was damaged: dropped") {
				lines++
				t.Logf("%s: %s", damage.name, strings.TrimSpace(line))
			}
		}
		// Bytes overwritten in a block may go unseen until read (the server checks
		// a record's checksum when it loads it): at most one line then.
		if lines > 1 || lines == 0 && damage.name == "last block cut short" {
			t.Errorf("%s: %d log lines saying what was dropped, want 1; log:\n%s", damage.name, lines, errs)
		}
	}
	// What was dropped is told once: a start after says nothing of it.
	if code, _, errs := runLocked(t, string(in), args...); code != 0 || strings.Contains(errs, "the store was damaged") {
		t.Errorf("a start after: exit %d; log:\n%s", code, errs)
	}
}
