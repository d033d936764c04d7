package daemon

import "testing"

// A port's last recentUnits units are found by origin and seq; older ones, another
// origin's, and those of a port started again are not.
func TestRecent(t *testing.T) {
	r := NewRecent()
	unit := func(seq uint64) []byte { return []byte{byte(seq), byte(seq >> 8)} }
	for seq := uint64(1); seq <= recentUnits+10; seq++ {
		r.add("hall", "o1", seq, unit(seq))
	}
	for _, c := range []struct {
		port, origin string
		seq          uint64
		found        bool
	}{
		{"hall", "o1", recentUnits + 10, true},
		{"hall", "o1", 11, true},
		{"hall", "o1", 10, false}, // overwritten by recentUnits+10
		{"hall", "o2", recentUnits + 10, false},
		{"lobby", "o1", 11, false},
		{"hall", "o1", recentUnits + 11, false},
	} {
		got := r.Unit(c.port, c.origin, c.seq)
		if found := got != nil; found != c.found || found && string(got) != string(unit(c.seq)) {
			t.Errorf("Unit(%s, %s, %d) = %v, want found %v", c.port, c.origin, c.seq, got, c.found)
		}
	}
	r.add("hall", "o2", 1, unit(1)) // the port started again
	if r.Unit("hall", "o1", recentUnits+10) != nil || r.Unit("hall", "o2", 1) == nil {
		t.Error("a port started again keeps the old origin's units")
	}
	var none *Recent
	none.add("hall", "o1", 1, unit(1)) // no history: nothing kept, no panic
}

// Review F10: a port of large units (capture games of 1.6 MB) keeps at most
// recentBytes of them, the newest, and any unit larger than that alone; not 1,024
// units by count alone (1.6 GB).
func TestRecentBytes(t *testing.T) {
	r := NewRecent()
	const size = 1 << 20
	for seq := uint64(1); seq <= 100; seq++ {
		r.add("hall", "o1", seq, make([]byte, size))
	}
	kept, oldest := 0, uint64(0)
	for seq := uint64(100); seq >= 1; seq-- {
		if u := r.Unit("hall", "o1", seq); u != nil {
			kept += len(u)
			oldest = seq
		}
	}
	t.Logf("100 units of %d bytes: %d bytes kept, from seq %d", size, kept, oldest)
	if kept > recentBytes || kept < recentBytes-size {
		t.Errorf("%d bytes kept, want at most %d and the newest that fit", kept, recentBytes)
	}
	if r.Unit("hall", "o1", 100) == nil || oldest != 100-uint64(kept/size)+1 {
		t.Errorf("the units kept are not the newest: from seq %d, %d bytes", oldest, kept)
	}
	r.add("hall", "o1", 101, make([]byte, 2*recentBytes)) // larger than the bound: kept alone
	if r.Unit("hall", "o1", 101) == nil || r.Unit("hall", "o1", 100) != nil {
		t.Error("a unit over the bound: want it kept alone")
	}
}
