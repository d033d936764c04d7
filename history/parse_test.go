package history

import (
	"strings"
	"testing"
	"time"
)

func TestParseAge(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"90d": 90 * 24 * time.Hour, "36h": 36 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute, "0d": 0,
	} {
		if got, err := ParseAge(s); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "d", "-1d", "1d-2h", "yesterday-ish", "9999999999999d", "1w"} {
		if got, err := ParseAge(s); err == nil {
			t.Errorf("ParseAge(%q) = %v, no error", s, got)
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{
		"1GiB": 1 << 30, "512MiB": 512 << 20, "100MB": 100e6, "1024": 1024, "2K": 2048, "7B": 7, "1 GiB": 1 << 30,
	} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "GiB", "-1MiB", "1.5GiB", "lots", "99999999999TiB"} {
		if got, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %v, no error", s, got)
		}
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)
	for s, want := range map[string]time.Time{
		"90m":                  now.Add(-90 * time.Minute),
		"1d":                   now.Add(-24 * time.Hour),
		"2026-11-22":           time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		"2026-11-22T18:00":     time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC),
		"2026-11-22 18:00:05":  time.Date(2026, 11, 22, 18, 0, 5, 0, time.UTC),
		"2026-11-22T18:00:00Z": time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC),
	} {
		if got, err := ParseTime(s, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	_, err := ParseTime("yesterday-ish", now)
	if err == nil || !strings.Contains(err.Error(), "yesterday-ish") || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("ParseTime(yesterday-ish): %v; want an error naming the value and the accepted forms", err)
	}
}

func FuzzParseAge(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseAge(s); err == nil && d < 0 {
			t.Fatalf("ParseAge(%q) = %v, negative", s, d)
		}
	})
}

func FuzzParseSize(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseSize(s); err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %v, negative", s, n)
		}
	})
}

func FuzzParseTime(f *testing.F) {
	now := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s, now)
		if err != nil {
			if !strings.Contains(err.Error(), "want") {
				t.Fatalf("ParseTime(%q): error without the accepted forms: %v", s, err)
			}
			return
		}
		if _, err := ParseAge(strings.TrimSpace(s)); err == nil && got.After(now) {
			t.Fatalf("ParseTime(%q) = %v, after now for a duration", s, got)
		}
	})
}

func TestParseSync(t *testing.T) {
	for in, want := range map[string]Sync{"always": {Always: true}, "2m": {Interval: 2 * time.Minute}, " 10s ": {Interval: 10 * time.Second}, "1d": {Interval: 24 * time.Hour}} {
		if got, err := ParseSync(in); err != nil || got != want {
			t.Errorf("ParseSync(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1s", "never", "Always", "5"} {
		if _, err := ParseSync(in); err == nil || !strings.Contains(err.Error(), "want") {
			t.Errorf("ParseSync(%q): %v; want an error saying what is accepted", in, err)
		}
	}
}

func FuzzParseSync(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSync(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want") {
				t.Fatalf("ParseSync(%q): error without the accepted forms: %v", s, err)
			}
			return
		}
		if !got.Always && got.Interval <= 0 {
			t.Fatalf("ParseSync(%q) = %v", s, got)
		}
		if again, err := ParseSync(got.String()); err != nil || again != got {
			t.Fatalf("ParseSync(%q) = %v; its String %q reads as %v, %v", s, got, got.String(), again, err)
		}
	})
}
