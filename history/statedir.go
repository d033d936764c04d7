package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DefaultStateDir is where the daemon keeps its history when --state-dir is not
// given: $STATE_DIRECTORY (systemd's StateDirectory=; the first, if it lists several),
// else $XDG_STATE_HOME/scoreboard, else ~/.local/state/scoreboard.
func DefaultStateDir(getenv func(string) string) (string, error) {
	if d := getenv("STATE_DIRECTORY"); d != "" {
		return filepath.SplitList(d)[0], nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "scoreboard"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("state dir: no $STATE_DIRECTORY, $XDG_STATE_HOME or home directory: give --state-dir")
		}
	}
	return filepath.Join(home, ".local", "state", "scoreboard"), nil
}

// StateDir is the daemon's state directory, locked for this process's life.
type StateDir struct {
	Path string
	lock *os.File
}

// lockName is the file held locked while a daemon uses the directory.
const lockName = "scoreboard.lock"

// ErrStateDirInUse is returned when another process holds the state directory.
var ErrStateDirInUse = errors.New("in use by another scoreboard daemon")

// OpenStateDir creates the directory if need be and locks it (flock on a lock file
// inside), so that two daemons never share one store. The lock goes with the
// process, however it ends.
func OpenStateDir(path string) (*StateDir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("state dir %s: %w", path, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("state dir %s: %w", abs, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("state dir %s: %w", abs, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("state dir %s: not a directory", abs)
	}
	f, err := os.OpenFile(filepath.Join(abs, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state dir %s: %w", abs, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("state dir %s: %w (two daemons cannot share one history: give each its own --state-dir)", abs, ErrStateDirInUse)
		}
		return nil, fmt.Errorf("state dir %s: lock: %w", abs, err)
	}
	// Every directory under it must be readable, or the server would skip what it
	// cannot read and start with less history than there is.
	err = filepath.WalkDir(abs, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if _, err := os.ReadDir(p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("state dir %s: unreadable: %w", abs, err)
	}
	return &StateDir{Path: abs, lock: f}, nil
}

// Close releases the lock.
func (d *StateDir) Close() error { return d.lock.Close() }

// streamStore is where nats-server keeps a stream of the global account.
func (d *StateDir) streamStore(stream string) string {
	return filepath.Join(d.Path, "jetstream", "$G", "streams", stream)
}

// HasStream reports whether the directory holds a store of stream, from an earlier
// run: the server must then recover it, not start an empty one.
func (d *StateDir) HasStream(stream string) bool {
	_, err := os.Stat(d.streamStore(stream))
	return err == nil
}
