package memlimit

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

func TestParseMemTotal(t *testing.T) {
	for in, want := range map[string]int64{
		"MemTotal:        1938472 kB\nMemFree: 1 kB\n": 1938472 << 10,
		"MemFree: 1 kB\nMemTotal: 4 kB\n":              4 << 10,
		"MemTotal: 4 MB\n":                             0, // not the kernel's unit
		"MemTotal: -4 kB\n":                            0,
		"MemTotal: x kB\n":                             0,
		"":                                             0,
		"MemTotal:\n":                                  0,
	} {
		if got := parseMemTotal([]byte(in)); got != want {
			t.Errorf("parseMemTotal(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestParseCgroupBound(t *testing.T) {
	for in, want := range map[string]int64{
		"max\n":                 0,
		"536870912\n":           512 << 20,
		"9223372036854771712\n": 0, // v1's "unlimited"
		"0\n":                   0,
		"-1\n":                  0,
		"":                      0,
		"12 34":                 0,
	} {
		if got := parseCgroupBound([]byte(in)); got != want {
			t.Errorf("parseCgroupBound(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestDefault(t *testing.T) {
	for _, c := range []struct {
		hub     bool
		machine int64
		want    int64
	}{
		{false, 1 << 30, RunMax},     // a Pi with 1 GiB: at most RunMax
		{false, 256 << 20, 64 << 20}, // a Pi with 256 MiB: a quarter
		{false, 24 << 30, RunMax},    // a large machine: at most RunMax
		{false, 64 << 20, Min},       // never under Min
		{false, 0, Min},              // unknown
		{true, 4 << 30, 2 << 30},     // a rented hub of 4 GiB: half
		{true, 0, 1 << 30},
		{true, 32 << 20, Min},
	} {
		if got := Default(c.hub, c.machine); got != c.want {
			t.Errorf("Default(hub %v, machine %d MiB) = %d MiB, want %d MiB", c.hub, c.machine>>20, got>>20, c.want>>20)
		}
	}
}

// Apply sets Go's soft limit to Limit of the budget and this program, and leaves
// $GOMEMLIMIT's alone.
func TestApply(t *testing.T) {
	was := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(was)
	none := func(string) string { return "" }
	a := Apply(64<<20, none)
	if got, want := debug.SetMemoryLimit(-1), Limit(64<<20, ProgramOf(os.Getpid())); got != want || a.Limit != got || a.From != "budget" || a.Program == 0 {
		t.Fatalf("Apply(64 MiB): the runtime's limit %d, Applied %+v; want %d from the budget, the program's size", got, a, want)
	}
	debug.SetMemoryLimit(300 << 20) // as the runtime read $GOMEMLIMIT=300MiB at start
	a = Apply(64<<20, func(k string) string {
		if k == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	})
	if got := debug.SetMemoryLimit(-1); got != 300<<20 || a.Limit != 300<<20 || a.From != "GOMEMLIMIT" {
		t.Fatalf("Apply with $GOMEMLIMIT: the runtime's limit %d, Applied %+v; want $GOMEMLIMIT's 300 MiB kept", got, a)
	}
	debug.SetMemoryLimit(math.MaxInt64)
}

// Limit: 7/8 of the budget, less where the program's mapped file takes more than
// the other 1/8 (issue 44: a Pi's run at 64 MiB held 67-74 MiB of RSS with a limit
// of 56 MiB, 24-25 MiB of it the program's pages), never under half the budget.
func TestLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ budget, program, want int64 }{
		{64 * mib, 0, 56 * mib},            // the program unknown: 7/8
		{64 * mib, 27 * mib, 37 * mib},     // a Pi's run: the program beside the limit
		{64 * mib, 8 * mib, 56 * mib},      // a program within the 1/8
		{32 * mib, 27 * mib, 16 * mib},     // the least budget: half
		{1536 * mib, 27 * mib, 1344 * mib}, // a hub's: 7/8
		{128 * mib, 27 * mib, 101 * mib},   // run's most by default
		{Max, Max, Max / 2},                // never under half
	} {
		if got := Limit(c.budget, c.program); got != c.want {
			t.Errorf("Limit(%d MiB, program %d MiB) = %d MiB, want %d MiB", c.budget/mib, c.program/mib, got/mib, c.want/mib)
		}
		if got := Limit(c.budget, c.program); got+c.program > c.budget && got != c.budget/2 {
			t.Errorf("Limit(%d MiB, program %d MiB) = %d MiB: with the program, over the budget", c.budget/mib, c.program/mib, got/mib)
		}
	}
}

// ProgramOf: this test binary's mappings of its own file, some MiB and no more
// than the file.
func TestProgramOf(t *testing.T) {
	n := ProgramOf(os.Getpid())
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		t.Skip(err)
	}
	if n < 1<<20 || n > fi.Size()+1<<20 {
		t.Fatalf("ProgramOf(this test) = %d bytes, its file %d bytes: want some MiB, at most the file", n, fi.Size())
	}
	t.Logf("this test binary: %d bytes mapped of its %d-byte file", n, fi.Size())
	if got := parseProgram([]byte(`00400000-010de000 r-xp 00000000 08:01 123 /usr/bin/scoreboard
010de000-01e1f000 r--p 00cde000 08:01 123 /usr/bin/scoreboard
01e1f000-01e9e000 rw-p 01a1f000 08:01 123 /usr/bin/scoreboard
01e9e000-01f00000 rw-p 00000000 00:00 0
7f2e3819e000-7f2e382f4000 r-xp 00028000 08:01 77 /usr/lib/x86_64-linux-gnu/libc.so.6
7ffe0000-7ffe1000 r-xp 00000000 00:00 0 [vdso]
`), "/usr/bin/scoreboard"); got != 0x01e9e000-0x00400000 {
		t.Errorf("parseProgram: %d bytes, want %d", got, 0x01e9e000-0x00400000)
	}
}

func TestMachine(t *testing.T) {
	n, from := Machine()
	if n < Min || from == "" {
		t.Fatalf("Machine() = %d bytes from %q: this machine's memory unread", n, from)
	}
	t.Logf("this machine: %d MiB (%s)", n>>20, from)
}

func TestCheck(t *testing.T) {
	for n, ok := range map[int64]bool{Min - 1: false, Min: true, 64 << 20: true, Max: true, Max + 1: false, 0: false, -1: false} {
		if got := Check(n) == ""; got != ok {
			t.Errorf("Check(%d) = %q, want ok %v", n, Check(n), ok)
		}
	}
}

// FuzzParse: neither reader panics, and what they give is 0 or within bounds.
func FuzzParse(f *testing.F) {
	f.Add([]byte("MemTotal:        1938472 kB\n"))
	f.Add([]byte("max\n"))
	f.Add([]byte("9223372036854771712\n"))
	f.Add([]byte("MemTotal: 99999999999999999999 kB\n"))
	f.Add([]byte("00400000-010de000 r-xp 00000000 08:01 123 /usr/bin/scoreboard\nffffffffffffffff-0 r--p 0 0:0 1 /usr/bin/scoreboard\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := parseProgram(b, "/usr/bin/scoreboard"); n < 0 || n > Max {
			t.Fatalf("parseProgram(%q) = %d", b, n)
		}
		if n := parseMemTotal(b); n < 0 || n > Max {
			t.Fatalf("parseMemTotal(%q) = %d", b, n)
		}
		if n := parseCgroupBound(b); n < 0 || n >= Max {
			t.Fatalf("parseCgroupBound(%q) = %d", b, n)
		}
	})
}
