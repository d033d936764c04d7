package engine

// The capture board is sparse: only the points a game plays on get an id (0..n-1,
// n <= M), found through an open-addressing hash of their coordinates. A point that is
// never played is empty for the whole game, so for a played point each of its four
// neighbours is either off the board, never played (a liberty for good), or another id.
//
// Groups are kept incrementally, so no move walks the board:
//   - each group has a root; a stone's group field is its root, and the members form a
//     circular list through next, so merging is a splice and removing walks only the
//     stones removed;
//   - merging relabels the smaller group, so a stone is relabelled O(log M) times;
//   - the root's libs counts pseudo-liberties: pairs (stone, empty neighbour), the same
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
	slots []captureSlot // the hash of played points
	shift uint          // 64 - log2(len(slots))
	pts   []capturePoint
	moves []int32 // per move: the id of its point
}

// captureSlot is one hash slot: a point's key + 1 (0 when free) and its id. Key and id
// side by side cost one cache line per probe.
type captureSlot struct {
	key uint64
	id  int32
}

// capturePoint is the state of one played point, kept together because a move reads
// all of it for the point and its neighbours.
type capturePoint struct {
	nbr   [4]int32 // a neighbour's id, captureOff or captureNever
	group int32    // root of its group
	next  int32    // next member of its group, circularly
	size  int32    // if a root: stones in the group
	libs  int32    // if a root: pseudo-liberties
	color int8     // 0 empty, 1 black, 2 white
}

// captureKey packs a point; x, y < 2^31 so key+1 never wraps.
func captureKey(x, y int32) uint64 { return uint64(x)<<32 | uint64(uint32(y)) }

// lookup returns the id of a point, or captureNever.
func (b *captureBoard) lookup(key uint64) int32 {
	mask := uint64(len(b.slots) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> b.shift; ; i = (i + 1) & mask {
		switch s := &b.slots[i]; s.key {
		case key + 1:
			return s.id
		case 0:
			return captureNever
		}
	}
}

// insert returns the id of a point, giving it the next id n if it has none.
func (b *captureBoard) insert(key uint64, n int32) (id int32, added bool) {
	mask := uint64(len(b.slots) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> b.shift; ; i = (i + 1) & mask {
		switch s := &b.slots[i]; s.key {
		case key + 1:
			return s.id, false
		case 0:
			s.key, s.id = key+1, n
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
	b.slots = captureGrow(b.slots, slots)
	clear(b.slots)
	b.shift = shift
	b.moves = captureGrow(b.moves, len(moves))
	b.pts = captureGrow(b.pts, len(moves))
	n := int32(0)
	last := int32(size - 1)
	for i, m := range moves {
		id, added := b.insert(captureKey(m.x, m.y), n)
		b.moves[i] = id
		if !added {
			continue
		}
		n++
		pt := &b.pts[id]
		*pt = capturePoint{nbr: [4]int32{captureOff, captureOff, captureOff, captureOff}}
		// Neighbours in the order left, right, up, down: d^1 is the opposite of d.
		link := func(d int, x, y int32) {
			q := b.lookup(captureKey(x, y))
			pt.nbr[d] = q
			if q >= 0 {
				b.pts[q].nbr[d^1] = id
			}
		}
		if m.x > 0 {
			link(0, m.x-1, m.y)
		}
		if m.x < last {
			link(1, m.x+1, m.y)
		}
		if m.y > 0 {
			link(2, m.x, m.y-1)
		}
		if m.y < last {
			link(3, m.x, m.y+1)
		}
	}
	captured := 0
	for i, p := range b.moves {
		if b.pts[p].color != 0 {
			m := moves[i]
			return 0, Errorf(captureName, int(m.line), "move %d: %d %d is already occupied", i+1, m.x, m.y)
		}
		captured += b.place(p, int8(1+i%2))
	}
	return captured, nil
}

// place puts a stone of colour c on the empty point p and returns the stones it
// captures: the opponent's groups left without liberties first, then its own group if
// it still has none.
func (b *captureBoard) place(p int32, c int8) int {
	pts := b.pts
	pt := &pts[p]
	pt.color, pt.group, pt.next, pt.size, pt.libs = c, p, p, 1, 0
	for _, q := range pt.nbr {
		switch {
		case q == captureOff:
		case q == captureNever || pts[q].color == 0:
			pt.libs++
		default:
			pts[pts[q].group].libs-- // p was an empty neighbour of q
		}
	}
	for _, q := range pt.nbr {
		if q >= 0 && pts[q].color == c && pts[q].group != pt.group {
			b.merge(pt.group, pts[q].group)
		}
	}
	captured := 0
	for _, q := range pt.nbr {
		if q >= 0 && pts[q].color == 3-c && pts[pts[q].group].libs == 0 {
			captured += b.remove(pts[q].group)
		}
	}
	if g := pt.group; pts[g].libs == 0 {
		captured += b.remove(g)
	}
	return captured
}

// merge joins the groups with roots r1 and r2, relabelling the smaller.
func (b *captureBoard) merge(r1, r2 int32) {
	pts := b.pts
	if pts[r1].size < pts[r2].size {
		r1, r2 = r2, r1
	}
	for s := r2; ; {
		pts[s].group = r1
		if s = pts[s].next; s == r2 {
			break
		}
	}
	pts[r1].next, pts[r2].next = pts[r2].next, pts[r1].next
	pts[r1].size += pts[r2].size
	pts[r1].libs += pts[r2].libs
}

// remove takes the group with root g off the board, gives its points back as
// liberties to the groups beside them, and returns its size.
func (b *captureBoard) remove(g int32) int {
	pts := b.pts
	for s := g; ; {
		pts[s].color = 0
		for _, q := range pts[s].nbr {
			// Stones of g not yet removed are skipped by their root; removed ones by
			// their colour.
			if q >= 0 && pts[q].color != 0 && pts[q].group != g {
				pts[pts[q].group].libs++
			}
		}
		if s = pts[s].next; s == g {
			break
		}
	}
	return int(pts[g].size)
}
