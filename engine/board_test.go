package engine

import (
	"math/rand/v2"
	"testing"
)

// boardNaiveRowFill fills runs one column at a time.
func boardNaiveRowFill(m, s uint32) uint32 {
	out := s & m
	for changed := true; changed; {
		changed = false
		for c := 0; c < 32; c++ {
			if out>>c&1 == 0 {
				continue
			}
			for _, d := range []int{c - 1, c + 1} {
				if d >= 0 && d < 32 && m>>d&1 == 1 && out>>d&1 == 0 {
					out |= 1 << d
					changed = true
				}
			}
		}
	}
	return out
}

func TestBoardRowFillExhaustive(t *testing.T) {
	// Every region and seed set of 10 columns, then random ones of the full 19.
	for m := uint32(0); m < 1<<10; m++ {
		for s := m; ; s = (s - 1) & m { // all subsets of m
			if got, want := boardRowFillOnce(m, s), boardNaiveRowFill(m, s); got != want {
				t.Fatalf("boardRowFill(%b, %b) = %b, want %b", m, s, got, want)
			}
			if s == 0 {
				break
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		m := rng.Uint32() & boardRowMask(19)
		if i%2 == 0 {
			m |= rng.Uint32() & boardRowMask(19) // long runs too
		}
		s := m & rng.Uint32() & rng.Uint32() & rng.Uint32()
		if got, want := boardRowFillOnce(m, s), boardNaiveRowFill(m, s); got != want {
			t.Fatalf("boardRowFill(%b, %b) = %b, want %b", m, s, got, want)
		}
	}
}

func TestBoardGroup(t *testing.T) {
	// A snake of black stones through the whole board, with one liberty at its tail.
	var black, occupied boardRows
	for r := 0; r < 19; r++ {
		switch r % 4 {
		case 0, 2:
			black[r] = boardRowMask(19)
		case 1:
			black[r] = 1 << 18
		case 3:
			black[r] = 1
		}
	}
	for r := range occupied {
		occupied[r] = boardRowMask(19)
	}
	occupied[18] &^= 1 // the liberty, at the tail's end
	black[18] &^= 1
	g, free := boardGroup(&black, &occupied, 19, 0, 0)
	if g != black {
		t.Fatalf("group misses stones: got %v want %v", g, black)
	}
	if !free {
		t.Fatal("the group's one liberty was not found")
	}
	occupied[18] |= 1
	if _, free := boardGroup(&black, &occupied, 19, 0, 0); free {
		t.Fatal("a group without liberties was found free")
	}
	// A lone stone in the corner of a 3x3 board with one neighbour empty.
	var s, occ boardRows
	s[2] = 1 << 2
	occ[2], occ[1] = 1<<2|1<<1, 0
	if g, free := boardGroup(&s, &occ, 3, 2, 2); !free || g[2] != 1<<2 || boardCount(&g) != 1 {
		t.Fatalf("corner stone: group %v free %v", g, free)
	}
}

func TestBoardRowFillPaired(t *testing.T) {
	// Two sets filled at once in one uint64 give what each gives alone.
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		m1, m2 := rng.Uint32()&boardRowMask(19), rng.Uint32()&boardRowMask(19)
		if i%3 == 0 {
			m1 = boardRowMask(19)
		}
		s1, s2 := m1&rng.Uint32()&rng.Uint32(), m2&rng.Uint32()&rng.Uint32()&rng.Uint32()
		m := uint64(m1) | uint64(m2)<<boardHi
		p := boardRunMasksOf(m)
		got := boardRowFill(m, uint64(s1)|uint64(s2)<<boardHi, &p)
		want := uint64(boardNaiveRowFill(m1, s1)) | uint64(boardNaiveRowFill(m2, s2))<<boardHi
		if got != want {
			t.Fatalf("paired fill of %b/%b from %b/%b = %x, want %x", m1, m2, s1, s2, got, want)
		}
	}
}

// BenchmarkBoardOwned is the scoring core alone, without parsing: 19x19 positions of
// random stones at the density of a finished game.
func BenchmarkBoardOwned(b *testing.B) {
	rng := rand.New(rand.NewPCG(19, 20))
	type pos struct{ black, white boardRows }
	ps := make([]pos, 64)
	for i := range ps {
		for r := 0; r < 19; r++ {
			for c := 0; c < 19; c++ {
				switch rng.IntN(10) {
				case 0, 1, 2:
					ps[i].black[r] |= 1 << c
				case 3, 4, 5:
					ps[i].white[r] |= 1 << c
				}
			}
		}
	}
	b.ReportAllocs()
	sum := 0
	for i := 0; b.Loop(); i++ {
		p := &ps[i%len(ps)]
		x, y := boardOwned(&p.black, &p.white, 19)
		sum += x + y
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}
