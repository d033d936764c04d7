package league

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrReadableTokens is the error of a hub's file that holds a club's token while
// others may read it.
var ErrReadableTokens = errors.New("others may read the clubs' tokens in it")

// ReadConfig reads and parses the hub's file at path. A file that holds a token
// and that others may read is refused, as a club's seed file is: a token there is
// a club's secret given to every local user, and a warning is seen too late.
func ReadConfig(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("hub config: %w (--config names a TOML file; configs/league-hub.toml in the source is an example)", err)
	}
	defer f.Close()
	// The mode of the file read (fstat: a symlink's target), not of a path
	// looked at before or after.
	fi, err := f.Stat()
	if err != nil {
		return Config{}, fmt.Errorf("hub config: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return Config{}, fmt.Errorf("hub config: %s: %w", path, err)
	}
	cfg, err := ParseConfig(path, data)
	if err != nil {
		return cfg, err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && hasToken(cfg.Clubs) {
		return Config{}, fmt.Errorf("hub config %s: mode %04o: %w: chmod 600 %s (or give the clubs keys: scoreboard hub key)", path, perm, ErrReadableTokens, path)
	}
	return cfg, nil
}

func hasToken(clubs []Club) bool {
	for _, c := range clubs {
		if c.Token != "" {
			return true
		}
	}
	return false
}

// Names are the clubs' names: the page's clubs, where a port, a state or an
// address of any other club (another spelling of one, a_b for a-b) is none.
func Names(clubs []Club) []string {
	names := make([]string, len(clubs))
	for i, c := range clubs {
		names[i] = c.Name
	}
	return names
}
