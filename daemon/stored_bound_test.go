package daemon

import "testing"

// Review, "suspected, not confirmed": anyone who can get a result stored under a
// port's origin (its origin is in every dump; review F1) can have the history note
// seqs the port never read, 2^40 and on. The display writer keeps only the notices
// of units it has read and not written yet; the others it never needs, and would
// never delete.
func TestStoredNoticesBounded(t *testing.T) {
	cfg := &Config{}
	cfg.setDefaults()
	s := NewStored(nil)
	d := &display{cfg: cfg, next: 5, last: 9, storedSeqs: map[uint64]struct{}{}, stored: s.open("o1")}
	const forged = 100000
	for i := range uint64(forged) {
		s.Note("o1", 1<<40+i)
	}
	for _, seq := range []uint64{3, 5, 9, 10} { // written already, two read, one not read yet
		s.Note("o1", seq)
	}
	d.noteStored()
	if _, ok := d.storedSeqs[5]; !ok || len(d.storedSeqs) != 2 {
		t.Fatalf("after %d notices of seqs never read and 4 of seqs 3, 5, 9, 10 (units 5 to 9 read, not written): %d kept, want 2 (5 and 9)",
			forged, len(d.storedSeqs))
	}
}
