package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultStateDir is where the daemon keeps its history when daemon.state_dir
// (--daemon-state-dir) is not given: $STATE_DIRECTORY (systemd's StateDirectory=; the first, if it lists several),
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
			return "", fmt.Errorf("state dir: no $STATE_DIRECTORY, $XDG_STATE_HOME or home directory: give --daemon-state-dir (scoreboard hub: --league-state-dir)")
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
			return nil, fmt.Errorf("state dir %s: %w (two daemons cannot share one history: give each its own --daemon-state-dir, or a hub its --league-state-dir)", abs, ErrStateDirInUse)
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
	if err := markFormat(abs, StateFormat); err != nil {
		f.Close()
		return nil, err
	}
	return &StateDir{Path: abs, lock: f}, nil
}

// StateFormat is the state dir's format: what this scoreboard writes and reads.
// A version that changes the store so that an older one would misread it raises
// it, and marks every dir it opens so (an upgraded one too); the older one, finding
// a higher number, refuses to start (markFormat) instead of damaging the history.
// Versions before the marker ignore it, and read format 1 as they wrote it
// (packaging's TestChrootUpgradeDowngrade).
const StateFormat = 1

// formatName is the file that says the state dir's format.
const formatName = "scoreboard.format"

// markFormat checks the state dir's format against format, this version's, and
// marks an unmarked dir as this version's: a dir of a later format is refused, in
// one line that says what to do.
func markFormat(dir string, format int) error {
	p := filepath.Join(dir, formatName)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		// A note that cannot be written is written at the next start.
		_ = os.WriteFile(p, []byte(strconv.Itoa(format)+"\n"), 0o600)
		return nil
	}
	if err != nil {
		return fmt.Errorf("state dir %s: %w", dir, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 1 {
		return fmt.Errorf("state dir %s: %s holds %q, not a format number: write %d in it if the store is this version's, or start on a new state dir", dir, p, b, format)
	}
	if n > format {
		return fmt.Errorf("state dir %s: its store is of format %d, written by a later scoreboard, and this one reads format %d: install the later version again (its history is kept), or start this one on a new state dir (a backup of the later version restores only into a version that reads it)", dir, n, format)
	}
	if n < format {
		// An earlier version's dir, upgraded: marked as this version's before this one
		// writes to it, or the earlier one, after a downgrade, would misread it. Written
		// beside and renamed, so a crash leaves one marker or the other, whole.
		tmp := p + ".new"
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(format)+"\n"), 0o600); err != nil {
			return fmt.Errorf("state dir %s: marking it format %d (was %d): %w", dir, format, n, err)
		}
		if err := os.Rename(tmp, p); err != nil {
			return fmt.Errorf("state dir %s: marking it format %d (was %d): %w", dir, format, n, err)
		}
	}
	return nil
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

// MinBytes is the least history worth keeping: a state dir's filesystem with room
// for less runs the daemon without one.
const MinBytes = 1 << 20

// diskShare is the part of its filesystem's room the history takes at most (1/2):
// the rest is for the bucket, the server's own files, and whatever else shares it.
const diskShare = 2

// Fit is the history's size on the state dir's filesystem: the smaller of want and
// half its room, the free space plus what the store already holds. JetStream
// reserves a stream's whole limit when the stream is created, so a limit beyond the
// room would stop the history, and the daemon with it, at start.
func (d *StateDir) Fit(want int64) (size, room int64, err error) {
	free, err := d.Free()
	if err != nil {
		return 0, 0, err
	}
	var held int64
	_ = filepath.WalkDir(filepath.Join(d.Path, "jetstream"), func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				held += fi.Size()
			}
		}
		return nil
	})
	room = free + held
	return min(want, room/diskShare), room, nil
}

// Free is the space free for this process on the state dir's filesystem.
func (d *StateDir) Free() (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(d.Path, &st); err != nil {
		return 0, fmt.Errorf("state dir %s: statfs: %w", d.Path, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// MoveAside moves the store the server could not open out of the way, to
// <state dir>/damaged-<time>/, so a fresh one can start: the answers matter more
// than the history, and what was there is kept for whoever wants it. It returns
// where it went.
func (d *StateDir) MoveAside(now time.Time) (string, error) {
	to := filepath.Join(d.Path, "damaged-"+now.UTC().Format("20060102T150405Z"))
	if err := os.Rename(filepath.Join(d.Path, "jetstream"), to); err != nil {
		return "", fmt.Errorf("state dir %s: move the damaged store aside: %w", d.Path, err)
	}
	return to, nil
}

// deletedNote keeps the stream's interior deletes already reported by Recovered.
const deletedNote = "history-deleted-seen"

// note reads a number kept in the state dir; 0 when there is none.
func (d *StateDir) note(name string) uint64 {
	b, err := os.ReadFile(filepath.Join(d.Path, name))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// setNote keeps a number in the state dir; a note that cannot be written is told
// again at the next start, nothing worse.
func (d *StateDir) setNote(name string, n uint64) {
	_ = os.WriteFile(filepath.Join(d.Path, name), []byte(strconv.FormatUint(n, 10)+"\n"), 0o600)
}
