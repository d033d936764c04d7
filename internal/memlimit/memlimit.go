// Package memlimit is the daemons' memory budget (memory.budget): the machine's
// memory as the process may use it (the cgroup's bound or MemTotal), the default
// budget a command takes from it, and the Go runtime's soft memory limit set from a
// budget unless $GOMEMLIMIT says otherwise.
//
// Go's soft limit is the one that counts: the embedded nats-server runs in the
// daemon's process, and the file store's block buffers (up to 8 MiB a stream, kept
// in sync.Pools and behind weak pointers once written) are Go memory the collector
// gives back under the limit, and holds on to without one.
package memlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Bounds of a budget.
const (
	// Min is the least budget: the daemon with its embedded server, history on,
	// settles at about 23 MiB (BENCHMARKS.md, start-up).
	Min = 32 << 20
	// Max is the largest: beyond any machine a club or a league rents.
	Max = 1 << 40
	// RunMax caps run's default: a club's daemon lives in tens of MiB, and under
	// GOGC 400 (tuneGC) a flood's garbage piles up to the limit before a
	// collection; 128 MiB was run's soft limit before the budget, and the history's
	// soak bounds what the runtime holds by it (TestSoakStdioHistory).
	RunMax = 128 << 20
)

// Share is the part of the budget given to Go's soft limit, in 1/16ths: the rest is
// for what the limit does not count (the binary's text, the kernel's view of pages
// the runtime has released but not returned yet); less on a small budget (Limit).
const share = 14

// Machine is the memory this process may use: the cgroup's bound
// (memory.max, or v1's memory.limit_in_bytes) when it has one below MemTotal, else
// /proc/meminfo's MemTotal; from says which. 0 when none can be read.
func Machine() (bytes int64, from string) {
	total := memTotal("/proc/meminfo")
	from = "MemTotal"
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if n := cgroupBound(f); n > 0 && (total == 0 || n < total) {
			return n, "cgroup " + f
		}
	}
	return total, from
}

// memTotal is MemTotal of a /proc/meminfo, in bytes; 0 when unreadable.
func memTotal(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return parseMemTotal(b)
}

func parseMemTotal(b []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || n <= 0 || n > Max>>10 {
				return 0
			}
			if len(f) == 3 && f[2] != "kB" {
				return 0
			}
			return n << 10
		}
	}
	return 0
}

// cgroupBound is a cgroup's memory bound, in bytes; 0 for none ("max", a v1
// "unlimited" near 2^63) or unreadable.
func cgroupBound(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return parseCgroupBound(b)
}

func parseCgroupBound(b []byte) int64 {
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= Max {
		return 0
	}
	return n
}

// Default is the budget a command takes when none is set: for the hub half the
// machine's memory (its store holds a stream a club), for run a quarter, at most
// RunMax; never under Min. With the machine's memory unknown, Min for run and 1 GiB
// for the hub.
func Default(hub bool, machine int64) int64 {
	var b int64
	switch {
	case machine <= 0 && hub:
		b = 1 << 30
	case machine <= 0:
		b = Min
	case hub:
		b = machine / 2
	default:
		b = min(machine/4, RunMax)
	}
	return max(b, Min)
}

// Applied is what Apply did: the soft limit in force, and where it came from.
type Applied struct {
	Budget, Limit int64
	From          string // "budget", or "GOMEMLIMIT" when the environment's was kept
	Program       int64  // the program's mapped file (ProgramOf), outside the limit
}

// Apply sets Go's soft memory limit to Limit(budget, the program's mapped file),
// unless $GOMEMLIMIT (getenv's) is set: that one stays, as the runtime read it at start.
func Apply(budget int64, getenv func(string) string) Applied {
	prog := ProgramOf(os.Getpid())
	if getenv("GOMEMLIMIT") != "" {
		return Applied{Budget: budget, Limit: debug.SetMemoryLimit(-1), From: "GOMEMLIMIT", Program: prog}
	}
	limit := Limit(budget, prog)
	debug.SetMemoryLimit(limit)
	return Applied{Budget: budget, Limit: limit, From: "budget", Program: prog}
}

// Limit is Go's soft limit for a budget, given the size of the program's own file
// as mapped (ProgramOf): 14/16 of the budget, or less where the program takes more
// than the other 2/16, so that the two fit in it; never under half the budget.
//
// The budget is the process's RSS, and the program's pages are in it once used:
// scoreboard's binary maps 26.6 MiB, of which `run` had 24.5-24.9 MiB resident
// once it had stored some thousand units. At 64 MiB the limit was 56 MiB, and a
// Pi's `run` whose heap grew towards it held 67-74 MiB (issue 44: its live heap
// grows with the history's last block, whose cache nats-server holds, up to
// 8 MiB, and the bucket's, loaded whole at each write, up to 4; RELIABILITY.md,
// "Long runs"). Above 16 times the program (some 430 MiB) nothing changes.
func Limit(budget, program int64) int64 {
	limit := budget / 16 * share
	if rest := budget - program; rest < limit {
		limit = rest
	}
	return max(limit, budget/2)
}

// ProgramOf is the size of process pid's program file as it is mapped into its
// memory (its code, read-only data and data: /proc/pid/maps' mappings of
// /proc/pid/exe). The kernel counts those pages in the RSS once they are used, and
// Go's limit does not count them. 0 when unreadable.
func ProgramOf(pid int) int64 {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0
	}
	return parseProgram(b, exe)
}

// parseProgram sums the sizes of a /proc/pid/maps's mappings of the file exe.
func parseProgram(maps []byte, exe string) int64 {
	var n int64
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// start-end perms offset dev inode path: the path is the rest of the line.
		f := strings.Fields(sc.Text())
		if len(f) < 6 || strings.Join(f[5:], " ") != exe {
			continue
		}
		from, to, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(from, 16, 64)
		z, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || z < a || z-a > Max {
			continue
		}
		n += int64(z - a)
		if n > Max {
			return Max
		}
	}
	return n
}

// Check says what is wrong with a budget, or "".
func Check(n int64) string {
	if n < Min || n > Max {
		return fmt.Sprintf("%d bytes: want %d MiB to %d TiB (or leave it out for a share of the machine's memory)", n, Min>>20, Max>>40)
	}
	return ""
}
