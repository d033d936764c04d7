package engine

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// floodGame is a ReplayGame played by floodMove, with the occupied points beside it.
type floodGame struct {
	ReplayGame
	occupied boardRows // Black | White
}

// floodMove is the replay engine's move before the incremental groups (replay.go):
// the bitboards alone, a bit-parallel flood of a group whenever a stone next to the
// new one has no empty neighbour. Kept as the reference the incremental groups must
// match on every placement (TestReplayGroupsMatchFlood, FuzzReplayUnit).
func (g *floodGame) floodMove(ln int, line []byte) error {
	white, r, c, err := replayPoint(ln, line, g.N)
	if err != nil {
		return err
	}
	bit := uint32(1) << uint(c)
	if (g.Black[r]|g.White[r])&bit != 0 {
		return Errorf(replayName, ln, "%s: the point is occupied", boardQuote(textTrim(line)))
	}
	own, opp, captured := &g.Black, &g.White, &g.CapturedByBlack
	if white {
		own, opp, captured = &g.White, &g.Black, &g.CapturedByWhite
	}
	own[r] |= bit
	occupied := &g.occupied
	occupied[r] |= bit
	n := g.N
	took := false
	// The opponent stones next to the new one, in the rows above, at and below it.
	var adj [3]uint32
	if r > 0 {
		adj[0] = opp[r-1] & bit
	}
	adj[1] = opp[r] & (bit<<1 | bit>>1) & boardRowMask(n)
	if r+1 < n {
		adj[2] = opp[r+1] & bit
	}
	var free boardRows // opponent groups already found to have a liberty
	for k, row := range adj {
		rr := r - 1 + k
		for ; row != 0; row &= row - 1 {
			cc := bits.TrailingZeros32(row)
			if (opp[rr]&^free[rr])>>uint(cc)&1 == 0 {
				continue // captured or found alive through another stone
			}
			if replayHasEmptyNeighbour(occupied, n, rr, cc) {
				continue // the group keeps at least this liberty
			}
			grp, alive := boardGroup(opp, occupied, n, rr, cc)
			if alive {
				for i := 0; i < n; i++ {
					free[i] |= grp[i]
				}
				continue
			}
			for i := 0; i < n; i++ {
				opp[i] &^= grp[i]
				occupied[i] &^= grp[i]
			}
			*captured += boardCount(&grp)
			took = true
		}
	}
	if !took && !replayHasEmptyNeighbour(occupied, n, r, c) {
		if _, alive := boardGroup(own, occupied, n, r, c); !alive {
			return Errorf(replayName, ln, "%s is suicide: it captures nothing and leaves its group no liberty",
				boardQuote(textTrim(line)))
		}
	}
	return nil
}

// replayHasEmptyNeighbour is the cheap test that settles most liberty questions
// without a flood.
func replayHasEmptyNeighbour(occupied *boardRows, n, r, c int) bool {
	row := occupied[r]
	if c > 0 && row>>uint(c-1)&1 == 0 || c+1 < n && row>>uint(c+1)&1 == 0 {
		return true
	}
	return r > 0 && occupied[r-1]>>uint(c)&1 == 0 || r+1 < n && occupied[r+1]>>uint(c)&1 == 0
}

// boardGroup returns the group of stones of set s connected to the point (r, c),
// which must be in s, and whether the group has a liberty: a point of the n x n
// board outside occupied next to it. Only the rows the group reaches are swept, so a
// small group costs a few row operations whatever the board size.
func boardGroup(s, occupied *boardRows, n, r, c int) (g boardRows, free bool) {
	g[r] = boardRowFillOnce(s[r], 1<<uint(c))
	lo, hi := r, r
	for changed := true; changed; {
		changed = false
		for i := lo + 1; i <= hi+1 && i < n; i++ {
			if x := g[i-1] & s[i] &^ g[i]; x != 0 {
				g[i] = boardRowFillOnce(s[i], g[i]|x)
				changed = true
				hi = max(hi, i)
			}
		}
		for i := hi - 1; i >= lo-1 && i >= 0; i-- {
			if x := g[i+1] & s[i] &^ g[i]; x != 0 {
				g[i] = boardRowFillOnce(s[i], g[i]|x)
				changed = true
				lo = min(lo, i)
			}
		}
	}
	full := boardRowMask(n)
	for i := max(lo-1, 0); i <= hi+1 && i < n; i++ {
		x := g[i]<<1 | g[i]>>1
		if i > 0 {
			x |= g[i-1]
		}
		if i+1 < n {
			x |= g[i+1]
		}
		if x&full&^occupied[i] != 0 {
			return g, true
		}
	}
	return g, false
}

// replayGroupsDiff plays the placements of line texts on an n x n board with both
// move implementations, and fails at the first difference: an error or its words,
// the stones, the captures.
func replayGroupsDiff(t *testing.T, n int, lines []string) {
	t.Helper()
	header := []byte(strconv.Itoa(n) + " " + strconv.Itoa(len(lines)))
	var (
		g      ReplayGame
		groups replayGroups
		f      floodGame
	)
	if _, err := g.begin(header, &groups); err != nil {
		t.Fatal(err)
	}
	if _, err := f.begin(header, new(replayGroups)); err != nil {
		t.Fatal(err)
	}
	for i, line := range lines {
		err := g.move(i+2, []byte(line), &groups)
		ferr := f.floodMove(i+2, []byte(line))
		if fmt.Sprint(err) != fmt.Sprint(ferr) {
			t.Fatalf("%dx%d, placement %d %q: groups say %v, the flood says %v", n, n, i+1, line, err, ferr)
		}
		if err != nil {
			return // a game ends at its first error
		}
		if g != f.ReplayGame {
			t.Fatalf("%dx%d, placement %d %q: groups leave %+v, the flood %+v", n, n, i+1, line, g, f.ReplayGame)
		}
	}
}

// replayGroupsMoves turns bytes into placements on an n x n board: two bytes a
// placement, the colour from the first one's low bit, the point from the second; one
// point in 16 or so off the board.
func replayGroupsMoves(n int, data []byte) []string {
	h := (n - 1) / 2
	var lines []string
	for i := 0; i+1 < len(data); i += 2 {
		col := "BW"[data[i]&1]
		p := int(data[i+1]) % (n*n + n)
		x, y := p%n-h, p/n-h // p >= n*n: y = h+1, off the board
		lines = append(lines, fmt.Sprintf("%c(%d,%d)", col, x, y))
	}
	return lines
}

// TestReplayGroupsMatchFlood holds the incremental groups to the flood they replaced,
// placement by placement, on random games of every board size: colours at random (so
// suicides and large captures come often), points at random (so occupied and
// off-board points end some games), and long games that fill and empty the board
// many times.
func TestReplayGroupsMatchFlood(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 77))
	games, placements, captures, suicides := 3000, 0, 0, 0
	for i := 0; i < games; i++ {
		n := 3 + 2*rng.IntN(9)
		var lines []string
		var g ReplayGame
		var groups replayGroups
		g.N = n
		groups.reset(n)
		h := (n - 1) / 2
		// Mostly legal games, so they run long: a point is tried until one is
		// legal, and one placement in 50 is any point at all.
		for len(lines) < 4*n*n {
			any := rng.IntN(50) == 0
			var line string
			for try := 0; try < 20; try++ {
				line = fmt.Sprintf("%c(%d,%d)", "BW"[rng.IntN(2)], rng.IntN(n)-h, rng.IntN(n)-h)
				if any {
					break
				}
				probe := g
				probeGroups := groups
				if probe.move(2, []byte(line), &probeGroups) == nil {
					break
				}
			}
			if err := g.move(2, []byte(line), &groups); err != nil {
				if strings.Contains(err.Error(), "suicide") {
					suicides++
				}
				lines = append(lines, line)
				break
			}
			lines = append(lines, line)
		}
		captures += g.CapturedByBlack + g.CapturedByWhite
		placements += len(lines)
		replayGroupsDiff(t, n, lines)
	}
	if captures < 3*games || suicides < games/50 {
		t.Errorf("%d stones captured and %d suicides in %d games of %d placements: too few to test them",
			captures, suicides, games, placements)
	}
	t.Logf("%d games, %d placements, %d stones captured, %d suicides", games, placements, captures, suicides)
}

func FuzzReplayGroups(f *testing.F) {
	f.Add(byte(5), []byte("\x00\x06\x01\x07\x00\x0b\x01\x0c\x00\x08\x01\x02\x00\x0d\x01\x01"))
	f.Add(byte(3), []byte("\x00\x01\x01\x00\x00\x03\x01\x04\x01\x02\x00\x05"))
	f.Fuzz(func(t *testing.T, size byte, data []byte) {
		n := 3 + 2*int(size%9)
		replayGroupsDiff(t, n, replayGroupsMoves(n, data))
	})
}
