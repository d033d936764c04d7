package bus

import (
	"errors"
	"testing"
)

// A reply answers a dump only with its origin, its seq, its unit's digest, and an
// answer within the problem's bound: a result without an origin or a digest (a
// forger's, or an old worker's) is refused.
func TestDumpedCheck(t *testing.T) {
	d := Dumped{Seq: 7, Origin: "mine", Digest: UnitDigest([]byte("unit")), MaxAnswer: 8}
	if err := d.Check(7, "mine", d.Digest, 8); err != nil {
		t.Errorf("the right reply: %v", err)
	}
	for _, c := range []struct {
		seq            uint64
		origin, digest string
		n              int
		want           error
	}{
		{7, "", d.Digest, 4, ErrNotMine},
		{7, "theirs", d.Digest, 4, ErrNotMine},
		{8, "mine", d.Digest, 4, ErrOtherSeq},
		{7, "mine", "", 4, ErrOtherUnit},
		{7, "mine", UnitDigest([]byte("unit2")), 4, ErrOtherUnit},
		{7, "mine", d.Digest, 9, ErrTooLong},
	} {
		if err := d.Check(c.seq, c.origin, c.digest, c.n); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c, err, c.want)
		}
	}
	if err := (Dumped{Seq: 1}).Check(1, "", "", 0); err == nil {
		t.Error("a publisher without an answer bound accepted a reply")
	}
}
