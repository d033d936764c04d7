package memlimit

import (
	"math"
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

// Apply sets Go's soft limit to 7/8 of the budget, and leaves $GOMEMLIMIT's alone.
func TestApply(t *testing.T) {
	was := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(was)
	none := func(string) string { return "" }
	a := Apply(64<<20, none)
	if got := debug.SetMemoryLimit(-1); got != 56<<20 || a.Limit != got || a.From != "budget" {
		t.Fatalf("Apply(64 MiB): the runtime's limit %d, Applied %+v; want 56 MiB from the budget", got, a)
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
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := parseMemTotal(b); n < 0 || n > Max {
			t.Fatalf("parseMemTotal(%q) = %d", b, n)
		}
		if n := parseCgroupBound(b); n < 0 || n >= Max {
			t.Fatalf("parseCgroupBound(%q) = %d", b, n)
		}
	})
}
