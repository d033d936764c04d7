package samples

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The repository's copy is the shared folder's samples, file for file, when the shared
// folder is beside the clone (as in CI); a clean clone without it still has every case.
func TestCopyEqualsShared(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases {
		for _, ext := range []string{".in", ".out"} {
			if _, err := os.Stat(filepath.Join(dir, c.File+ext)); err != nil {
				t.Errorf("the repository has no %s%s: %v", c.File, ext, err)
			}
		}
	}
	shared, err := SharedDir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(shared, "*.*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		ext := filepath.Ext(f)
		if ext != ".in" && ext != ".out" {
			continue
		}
		n++
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.Base(f)))
		if err != nil {
			t.Errorf("%s is in ../shared/samples but not in testdata/samples: %v", filepath.Base(f), err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/samples/%s differs from ../shared/samples/%s", filepath.Base(f), filepath.Base(f))
		}
	}
	if n == 0 {
		t.Skipf("no ../shared/samples beside the repository (%s): only the copy's presence checked", shared)
	}
	t.Logf("%d files equal to ../shared/samples", n)
}
