package history_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/history"
)

// A state dir says its format: a new one is marked as this version's; one of a
// later format (a later scoreboard's, after a downgrade) is refused in one line
// that says what to do, and so is a marker that is not a number; this version's
// opens.
func TestStateDirFormat(t *testing.T) {
	dir := t.TempDir()
	d, err := history.OpenStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if b, err := os.ReadFile(filepath.Join(dir, "scoreboard.format")); err != nil || string(b) != "1\n" {
		t.Fatalf("a new state dir's marker: %q, %v; want 1", b, err)
	}
	for marker, want := range map[string][]string{
		"2\n": {dir, "format 2", "reads format 1", "install the later version again"},
		"x\n": {dir, "not a format number"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "scoreboard.format"), []byte(marker), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := history.OpenStateDir(dir)
		if err == nil {
			t.Fatalf("marker %q: opened", marker)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
				t.Errorf("marker %q: %q does not say %q on one line", marker, err, w)
			}
		}
		// Refused, and not locked: the next try (after the fix) opens it.
	}
	if err := os.WriteFile(filepath.Join(dir, "scoreboard.format"), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err = history.OpenStateDir(dir)
	if err != nil {
		t.Fatalf("this version's format: %v", err)
	}
	d.Close()
}

// A dir an earlier version marked, opened by a later one, is marked as the later
// one's: the earlier one, after a downgrade, then refuses it in one line rather
// than misreading what the later one wrote (packaging's TestChrootUpgradeDowngrade
// downgrades an upgraded root so).
func TestStateDirFormatRaised(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "scoreboard.format")
	if err := os.WriteFile(marker, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := history.MarkFormat(dir, 2); err != nil {
		t.Fatalf("format 2 opening a dir of format 1: %v", err)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "2\n" {
		t.Fatalf("format 2 opened a dir of format 1; its marker: %q, %v; want 2", b, err)
	}
	err := history.MarkFormat(dir, 1)
	if err == nil || !strings.Contains(err.Error(), "install the later version again") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("format 1 opening it again: %v; want the one line that says to install the later version again", err)
	}
	if err := history.MarkFormat(dir, 2); err != nil {
		t.Fatalf("format 2 opening its own dir again: %v", err)
	}
}
