package backup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/goclub/scoreboard/history"
)

// WriteFile writes the file beside path and renames it into place once whole
// and synced: a backup that fails leaves no file that looks like one.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o600); err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	return nil
}

// RestoreDir checks the file whole, then restores it into dir, which must be new; a
// restore that fails takes away what it put there.
func RestoreDir(file, dir string) (Header, []Count, error) {
	_, counts, err := Check(file)
	if err != nil {
		return Header{}, nil, err
	}
	existed := true
	switch ents, err := os.ReadDir(dir); {
	case errors.Is(err, os.ErrNotExist):
		existed = false
	case err != nil:
		return Header{}, nil, fmt.Errorf("restore: state dir %s: %w", dir, err)
	case len(ents) > 0:
		return Header{}, nil, fmt.Errorf("restore: state dir %s is not empty: restore into a new directory (absent or empty), then start the daemon on it; nothing was changed", dir)
	}
	store, err := history.OpenStateDir(dir)
	if err != nil {
		return Header{}, nil, err
	}
	defer store.Close()
	h, counts, err := Restore(file, store.Path, counts)
	if err != nil {
		undo(store.Path, existed)
		return h, nil, fmt.Errorf("%w; the state dir %s is as it was", err, dir)
	}
	return h, counts, nil
}

// undo takes away a failed restore: the dir it made, or what it put in the empty
// one it was given.
func undo(dir string, existed bool) {
	if !existed {
		_ = os.RemoveAll(dir)
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}
