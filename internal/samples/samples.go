// Package samples gives the tests of every package the seed samples restored to their
// real format. They are in the repository (testdata/samples at the module's root), a
// copy of the shared folder's (../shared/samples), so that a clean clone runs the
// quick start and the tests alone; one list here says which file is which problem's.
package samples

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// Case is one sample: its problem, and the name of its .in and .out files.
type Case struct {
	Problem string
	File    string
}

// Cases are every sample, each problem's own and the seed's flattened territory input.
var Cases = []Case{
	{"goscore", "goscore"},
	{"replay", "replay"},
	{"territory", "territory"},
	{"territory", "territory-one-line"},
	{"othello", "othello"},
	{"capture", "capture"},
}

// Dir is the samples folder: testdata/samples under the module's root, found from the
// working directory (a package's folder, when go test runs it).
func Dir() (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "testdata", "samples"), nil
}

// SharedDir is the shared folder's samples beside the repository (../shared/samples),
// the originals the repository's copy must equal; it may be absent.
func SharedDir() (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "..", "shared", "samples"), nil
}

// Root is the module's root: the first folder with a go.mod above the working directory.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("samples: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Read returns the sample file name (such as "goscore.in"), or stops the test.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Pair returns a sample's input and its expected output.
func Pair(t testing.TB, c Case) (in, out []byte) {
	t.Helper()
	return Read(t, c.File+".in"), Read(t, c.File+".out")
}

// Units cuts a sample input of problem into its units, as a port reader would, each a
// copy. It stops the test on a unit the framer rejects.
func Units(t testing.TB, problem, file string) [][]byte {
	t.Helper()
	p, ok := engine.Lookup(problem)
	if !ok {
		t.Fatalf("samples: no problem %q", problem)
	}
	fr := p.NewFramer()
	var units [][]byte
	take := func(frames []engine.Frame) {
		for _, f := range frames {
			if f.Err != nil {
				t.Fatalf("samples: %s: %v", file, f.Err)
			}
			units = append(units, bytes.Clone(f.Unit))
		}
	}
	lr := engine.NewLineReader(bytes.NewReader(Read(t, file)), p.Limits().MaxLine)
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("samples: %s: %v", file, err)
		}
		take(fr.Feed(nil, line))
	}
	take(fr.End(nil))
	return units
}
