package engine

// The capture board is sparse: only the points a game plays on get an id (0..n-1,
// n <= M), found through an open-addressing hash of their coordinates. A point that is
// never played is empty for the whole game, so for a played point each of its four
// neighbours is either off the board, never played (a liberty for good), or another id.
//
// Groups are kept incrementally, so no move walks the board:
//   - each group has a root; group[p] is the root of p's group, and the members form a
//     circular list through next[], so merging is a splice and removing walks only the
//     stones removed;
//   - merging relabels the smaller group, so a stone is relabelled O(log M) times;
//   - libs[root] counts pseudo-liberties: pairs (stone, empty neighbour), the same
//     empty point counted once per stone beside it. It is zero exactly when the group
//     has no liberty, and updating it is O(1) per neighbour.
//
// Every stone is removed at most once per placement, so a game is O(M log M) at worst
// and O(M) in practice, whatever S is.

const (
	captureOff   = -2 // neighbour off the board
	captureNever = -1 // neighbour on the board but never played: always empty
)

// captureBoard holds one game's state; its slices are reused from game to game.
type captureBoard struct {
	keys  []uint64 // hash slots: point key + 1, 0 when free
	ids   []int32  // hash slots: the point's id
	shift uint     // 64 - log2(len(keys))

	nbr   []int32 // 4 per id: a neighbour's id, captureOff or captureNever
	color []int8  // per id: 0 empty, 1 black, 2 white
	group []int32 // per id: root of its group
	next  []int32 // per id: next member of its group, circularly
	size  []int32 // per root: stones in the group
	libs  []int32 // per root: pseudo-liberties
	moves []int32 // per move: the id of its point
}

// captureKey packs a point; x, y < 2^31 so key+1 never wraps.
func captureKey(x, y int32) uint64 { return uint64(x)<<32 | uint64(uint32(y)) }

// lookup returns the id of a point, or captureNever.
func (b *captureBoard) lookup(key uint64) int32 {
	mask := uint64(len(b.keys) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> b.shift; ; i = (i + 1) & mask {
		switch b.keys[i] {
		case key + 1:
			return b.ids[i]
		case 0:
			return captureNever
		}
	}
}

// insert returns the id of a point, giving it the next id n if it has none.
func (b *captureBoard) insert(key uint64, n int32) (id int32, added bool) {
	mask := uint64(len(b.keys) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> b.shift; ; i = (i + 1) & mask {
		switch b.keys[i] {
		case key + 1:
			return b.ids[i], false
		case 0:
			b.keys[i], b.ids[i] = key+1, n
			return n, true
		}
	}
}

// captureGrow returns s resized to n, reusing its array when it is big enough.
func captureGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// play plays moves on a size x size board and returns the stones captured. Moves must
// be on the board; a move on an occupied point is an *InputError naming its line.
func (b *captureBoard) play(size int, moves []captureMove) (int, error) {
	// Index the points: a table at most half full, sized by M only.
	slots, shift := 2, uint(63)
	for slots < 2*len(moves) {
		slots <<= 1
		shift--
	}
	b.keys = captureGrow(b.keys, slots)
	clear(b.keys)
	b.ids = captureGrow(b.ids, slots)
	b.shift = shift
	b.moves = captureGrow(b.moves, len(moves))
	b.nbr = b.nbr[:0]
	n := int32(0)
	for i, m := range moves {
		id, added := b.insert(captureKey(m.x, m.y), n)
		b.moves[i] = id
		if !added {
			continue
		}
		n++
		// Neighbours in the order left, right, up, down.
		var nb [4]int32
		for d, p := range [4][2]int32{{m.x - 1, m.y}, {m.x + 1, m.y}, {m.x, m.y - 1}, {m.x, m.y + 1}} {
			nb[d] = captureOff
			if p[0] >= 0 && int(p[0]) < size && p[1] >= 0 && int(p[1]) < size {
				nb[d] = b.lookup(captureKey(p[0], p[1]))
				if nb[d] >= 0 {
					b.nbr[4*nb[d]+int32(d^1)] = id // the opposite direction
				}
			}
		}
		b.nbr = append(b.nbr, nb[:]...)
	}
	b.color = captureGrow(b.color, int(n))
	clear(b.color)
	b.group = captureGrow(b.group, int(n))
	b.next = captureGrow(b.next, int(n))
	b.size = captureGrow(b.size, int(n))
	b.libs = captureGrow(b.libs, int(n))

	captured := 0
	for i, p := range b.moves {
		c := int8(1 + i%2)
		if b.color[p] != 0 {
			m := moves[i]
			return 0, Errorf(captureName, int(m.line), "move %d: %d %d is already occupied", i+1, m.x, m.y)
		}
		captured += b.place(p, c)
	}
	return captured, nil
}

// place puts a stone of colour c on the empty point p and returns the stones it
// captures: the opponent's groups left without liberties first, then its own group if
// it still has none.
func (b *captureBoard) place(p int32, c int8) int {
	b.color[p], b.group[p], b.next[p], b.size[p], b.libs[p] = c, p, p, 1, 0
	nb := b.nbr[4*p : 4*p+4]
	for _, q := range nb {
		switch {
		case q == captureOff:
		case q == captureNever || b.color[q] == 0:
			b.libs[p]++
		default:
			b.libs[b.group[q]]-- // p was an empty neighbour of q
		}
	}
	for _, q := range nb {
		if q >= 0 && b.color[q] == c && b.group[q] != b.group[p] {
			b.merge(b.group[p], b.group[q])
		}
	}
	captured := 0
	for _, q := range nb {
		if q >= 0 && b.color[q] == 3-c && b.libs[b.group[q]] == 0 {
			captured += b.remove(b.group[q])
		}
	}
	if g := b.group[p]; b.libs[g] == 0 {
		captured += b.remove(g)
	}
	return captured
}

// merge joins the groups with roots a and b, relabelling the smaller.
func (b *captureBoard) merge(r1, r2 int32) {
	if b.size[r1] < b.size[r2] {
		r1, r2 = r2, r1
	}
	for s := r2; ; {
		b.group[s] = r1
		if s = b.next[s]; s == r2 {
			break
		}
	}
	b.next[r1], b.next[r2] = b.next[r2], b.next[r1]
	b.size[r1] += b.size[r2]
	b.libs[r1] += b.libs[r2]
}

// remove takes the group with root g off the board, gives its points back as
// liberties to the groups beside them, and returns its size.
func (b *captureBoard) remove(g int32) int {
	for s := g; ; {
		b.color[s] = 0
		for _, q := range b.nbr[4*s : 4*s+4] {
			// Stones of g not yet removed are skipped by their root; removed ones by
			// their colour.
			if q >= 0 && b.color[q] != 0 && b.group[q] != g {
				b.libs[b.group[q]]++
			}
		}
		if s = b.next[s]; s == g {
			break
		}
	}
	return int(b.size[g])
}
