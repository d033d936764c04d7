package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goclub/scoreboard/config"
)

var update = flag.Bool("update", false, "write the generated references instead of checking them")

// TestGenerated keeps the references made from the command tree and the settings
// true: docs/cli.md, docs/man/*.1, configs/scoreboard.toml and configs/league-hub.toml are what the binary's
// generators make now. After a change: go generate ./cmd/scoreboard (this test with
// -update), and commit the files.
func TestGenerated(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	root := newRoot(stdio{})
	md, err := markdown(root)
	if err != nil {
		t.Fatal(err)
	}
	man := t.TempDir()
	if err := writeManPages(root, man); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{
		"../../docs/cli.md":             md,
		"../../configs/scoreboard.toml": config.Example(),
		"../../configs/league-hub.toml": config.ExampleHub(),
	}
	pages, _ := filepath.Glob(filepath.Join(man, "*.1"))
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want["../../docs/man/"+filepath.Base(p)] = data
	}
	if *update {
		old, _ := filepath.Glob("../../docs/man/*.1")
		for _, p := range old {
			os.Remove(p)
		}
		for path, data := range want {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	committed, _ := filepath.Glob("../../docs/man/*.1")
	for _, p := range committed {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is no command's man page any more: go generate ./cmd/scoreboard removes it", p)
		}
	}
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range want {
			if !yield(p) {
				return
			}
		}
	}) {
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want[path]) {
			t.Errorf("%s is not what cmd/scoreboard generates (%v): run go generate ./cmd/scoreboard and commit it", path, err)
		}
	}
}
