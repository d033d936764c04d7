package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// watch --since and history --since start from a duration before the clock they
// are given (this machine's, as the daemon's server stamps the units with its own),
// wherever that clock has jumped, and their help says so; after the start point the
// order is the stream's (the history package's clock tests).
func TestSinceIsBeforeTheClockNow(t *testing.T) {
	for _, until := range []bool{false, true} {
		cmd := &cobra.Command{Use: "watch"}
		q := addQueryFlags(cmd, until)
		if err := cmd.Flags().Parse([]string{"--since", "90m"}); err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
		for _, now := range []time.Time{t0, t0.Add(-365 * 24 * time.Hour), t0.Add(24 * time.Hour)} {
			r, err := q.query(now)
			if err != nil {
				t.Fatal(err)
			}
			if want := now.Add(-90 * time.Minute); !r.Since.Equal(want) {
				t.Errorf("--since 90m at %v: from %v, want %v", now, r.Since, want)
			}
		}
		help := cmd.Flags().Lookup("since").Usage
		for _, s := range []string{"before this machine's clock now", "when the NATS server stored each unit, by its clock"} {
			if !strings.Contains(help, s) {
				t.Errorf("--since's help %q does not say %q", help, s)
			}
		}
	}
}
