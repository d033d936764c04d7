package history

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseAge reads a duration as Go writes them ("36h", "90m"), or with whole days in
// front ("90d", "1d12h"): history limits are counted in days.
func ParseAge(s string) (time.Duration, error) {
	days, rest := int64(0), s
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/int64(24*time.Hour) {
			return 0, fmt.Errorf("%q: bad number of days", s)
		}
		days, rest = n, s[i+1:]
	}
	d := time.Duration(days) * 24 * time.Hour
	if rest == "" {
		if days == 0 && s == "" {
			return 0, errors.New("empty duration")
		}
		return d, nil
	}
	r, err := time.ParseDuration(rest)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration such as 90d, 36h or 1d12h", s)
	}
	if r < 0 || (days > 0 && strings.HasPrefix(rest, "-")) || d > math.MaxInt64-r {
		return 0, fmt.Errorf("%q: out of range", s)
	}
	return d + r, nil
}

// sizeUnits are the suffixes ParseSize knows, longest first so "MiB" is not read as "B".
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads a byte count: a whole number with an optional unit, binary (KiB,
// MiB, GiB, TiB, or K, M, G, T) or decimal (KB, MB, GB, TB), or B.
func ParseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a size such as 1GiB, 512MiB or 100MB", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q: out of range", s)
	}
	return n * mult, nil
}

// timeLayouts are the absolute times ParseTime knows, besides RFC 3339; they are in
// the local time zone.
var timeLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// TimeForms says what ParseTime accepts, for error messages.
const TimeForms = "a duration before now (90m, 36h, 7d, 1d12h) or a time (2026-11-22, 2026-11-22T18:00, 2026-11-22 18:00:05, or RFC 3339 such as 2026-11-22T18:00:00Z)"

// ParseTime reads a point in time: a duration back from now, or an absolute time.
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, err := ParseAge(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, now.Location()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want %s", s, TimeForms)
}

// SyncAlways is the --history-sync value that syncs the store on every write.
const SyncAlways = "always"

// DefaultSync is the store's sync interval when none is given: nats-server's own.
const DefaultSync = "2m"

// Sync is how often the embedded server's store is synced to disk: Always on every
// write, else every Interval. It is the server's own setting (nats-server's
// sync_interval, "always" or a duration), applied to the whole JetStream store.
type Sync struct {
	Always   bool
	Interval time.Duration
}

// ParseSync reads --history-sync: "always", or a positive duration ("2m", "10s",
// "500ms", or in days as ParseAge reads them).
func ParseSync(s string) (Sync, error) {
	if strings.TrimSpace(s) == SyncAlways {
		return Sync{Always: true}, nil
	}
	d, err := ParseAge(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return Sync{}, fmt.Errorf("%q: want %q (sync on every write) or an interval such as 2m, 10s or 500ms", s, SyncAlways)
	}
	return Sync{Interval: d}, nil
}

// String is the setting as ParseSync reads it.
func (s Sync) String() string {
	if s.Always {
		return SyncAlways
	}
	return s.Interval.String()
}
