package bus

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The organiser's credentials: loading a round of pairings puts names on the
// club's TV, so only the club's organiser may (issue 43). The daemon makes a
// password at its first start with a state dir, in OrganiserFile there, mode 0640
// in the 0700 state dir: the daemon's user and root may read it, as they may the
// history (its group too, where the club's admin made the dir 0750).
// `scoreboard pairings load` reads it and logs in as user RoleOrganiser. The
// embedded server takes it from a loopback client only (server.go): the file is
// on this machine, and a password goes in clear on a listener without TLS.

// OrganiserFile is the organiser's password file's name in the daemon's state dir.
const OrganiserFile = "organiser.password"

// organiserFileMax bounds what is read of an organiser file: a password is 43
// characters.
const organiserFileMax = 4096

// Bounds of a password: 43 characters are the 32 random bytes the daemon makes; one
// written by hand (an external server's) is taken from 16 on.
const (
	organiserMinLen = 16
	organiserMaxLen = 256
)

// ErrNoOrganiserFile is an organiser file that is not there.
var ErrNoOrganiserFile = errors.New("no organiser credentials")

// ParseOrganiserPassword takes the password out of an organiser file's contents:
// one line of 16 to 256 letters, digits, '-' and '_' (a trailing newline and
// spaces around it are dropped).
func ParseOrganiserPassword(data []byte) (string, error) {
	pw := strings.TrimSpace(string(data))
	if len(pw) < organiserMinLen || len(pw) > organiserMaxLen {
		return "", fmt.Errorf("want one line of %d to %d letters, digits, '-' and '_', got %d bytes", organiserMinLen, organiserMaxLen, len(pw))
	}
	for i := 0; i < len(pw); i++ {
		c := pw[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return "", fmt.Errorf("byte %d is %q: want only letters, digits, '-' and '_' on one line", i+1, c)
		}
	}
	return pw, nil
}

// ReadOrganiserFile reads the organiser's password from path: a regular file that
// others than its owner and group may not read. A symlink is followed: this is the
// file a user names (--credentials FILE).
func ReadOrganiserFile(path string) (string, error) { return readOrganiserFile(path, false, -1) }

// ReadStateOrganiserFile reads the organiser file of a daemon's state dir, never
// through a symlink: whoever may place one there would otherwise choose the
// password (a link to a file of theirs), or leave the daemon with none and a wrong
// reason (a dangling one). With owner >= 0, the file must be that user's too: the
// daemon's own (os.Geteuid()), as the file it makes is.
func ReadStateOrganiserFile(path string, owner int) (string, error) {
	return readOrganiserFile(path, true, owner)
}

func readOrganiserFile(path string, noFollow bool, owner int) (string, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	switch {
	case noFollow && errors.Is(err, syscall.ELOOP):
		return "", symlinkError(path)
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("organiser credentials %s: %w: the daemon makes it in its state dir at its first start (%v)", path, ErrNoOrganiserFile, err)
	case errors.Is(err, os.ErrPermission):
		// The state dir the daemon makes is 0700: the file's group (0640) is
		// reached only where the club's admin made the dir 0750 itself.
		return "", fmt.Errorf("organiser credentials %s: this user may not read it (%v): the daemon's state dir is its user's alone: "+
			"run as root (sudo scoreboard pairings load ...), or pass --credentials FILE, a copy the club's admin gave you", path, err)
	case err != nil:
		return "", fmt.Errorf("organiser credentials %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("organiser credentials %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("organiser credentials %s is not a regular file (%s): give the daemon's %s, or a plain copy of it", path, fileKind(fi.Mode()), OrganiserFile)
	}
	if fi.Mode().Perm()&0o007 != 0 {
		return "", fmt.Errorf("organiser credentials %s has mode %04o: every user of the machine may read the password that loads the club's pairings; chmod 640 %s", path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && owner >= 0 && int(st.Uid) != owner {
		return "", fmt.Errorf("organiser credentials %s is owned by uid %d, not the daemon's (uid %d): another user may have chosen its password; "+
			"delete it and restart the daemon for a new one", path, st.Uid, owner)
	}
	data, err := io.ReadAll(io.LimitReader(f, organiserFileMax+1))
	if err != nil {
		return "", fmt.Errorf("organiser credentials %s: %w", path, err)
	}
	if len(data) > organiserFileMax {
		return "", fmt.Errorf("organiser credentials %s is larger than %d bytes: no organiser file; give the daemon's %s", path, organiserFileMax, OrganiserFile)
	}
	pw, err := ParseOrganiserPassword(data)
	if err != nil {
		return "", fmt.Errorf("organiser credentials %s: %w; give the daemon's %s (delete it and restart the daemon for a new one)", path, err, OrganiserFile)
	}
	return pw, nil
}

// symlinkError says what the symlink at path is: where it points, and whether that
// exists.
func symlinkError(path string) error {
	target, err := os.Readlink(path)
	if err != nil {
		return fmt.Errorf("organiser credentials %s is a symlink (%v): the daemon reads its own file only, never through a link; delete it and restart the daemon for a new one", path, err)
	}
	what := "a symlink to " + strconv.Quote(target)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		what += ", which does not exist"
	}
	return fmt.Errorf("organiser credentials %s is %s: the daemon reads its own file only, never through a link "+
		"(whoever placed it would choose the password); delete it and restart the daemon for a new one", path, what)
}

// EnsureOrganiserFile returns the organiser's password of the state dir dir,
// making its OrganiserFile first if there is none: mode 0640 whatever the umask,
// written whole before it takes the name, so that a crash leaves no half file.
func EnsureOrganiserFile(dir string) (string, error) {
	path := filepath.Join(dir, OrganiserFile)
	if pw, err := ReadStateOrganiserFile(path, os.Geteuid()); !errors.Is(err, ErrNoOrganiserFile) {
		return pw, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("organiser credentials: %w", err)
	}
	pw := base64.RawURLEncoding.EncodeToString(raw)
	tmp, err := os.CreateTemp(dir, OrganiserFile+".new-*")
	if err != nil {
		return "", fmt.Errorf("organiser credentials in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(pw + "\n")
	if err == nil {
		err = tmp.Chmod(0o640)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("organiser credentials in %s: %w", dir, err)
	}
	// A link takes the name only if it is free: a file made meanwhile wins.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("organiser credentials %s: %w", path, err)
	}
	return ReadStateOrganiserFile(path, os.Geteuid())
}
