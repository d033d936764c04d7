package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/render"
)

// The test's own SGF reader, independent of the writer: the FF[4] grammar
// (Collection = GameTree+, GameTree = "(" Sequence GameTree* ")", Node = ";" Property*,
// Property = UcLetter+ ("[" Value "]")+, "\" escaping inside values), and Go's capture
// rule to replay the moves.

type sgfNode map[string][]string

// sgfRead parses a collection into the main line of each game tree.
func sgfRead(s string) ([][]sgfNode, error) {
	var trees [][]sgfNode
	i := 0
	skip := func() {
		for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
			i++
		}
	}
	var tree func(depth int) ([]sgfNode, error)
	tree = func(depth int) ([]sgfNode, error) {
		if i >= len(s) || s[i] != '(' {
			return nil, fmt.Errorf("offset %d: want '('", i)
		}
		i++
		var nodes []sgfNode
		for {
			skip()
			if i >= len(s) {
				return nil, fmt.Errorf("offset %d: tree not closed", i)
			}
			switch s[i] {
			case ';':
				i++
				n := sgfNode{}
				for {
					skip()
					j := i
					for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
						i++
					}
					if j == i {
						break
					}
					id := s[j:i]
					if _, dup := n[id]; dup {
						return nil, fmt.Errorf("offset %d: property %s twice in a node", j, id)
					}
					skip()
					if i >= len(s) || s[i] != '[' {
						return nil, fmt.Errorf("offset %d: property %s without a value", i, id)
					}
					for i < len(s) && s[i] == '[' {
						i++
						var v strings.Builder
						for i < len(s) && s[i] != ']' {
							if s[i] == '\\' {
								i++
							}
							if i < len(s) {
								v.WriteByte(s[i])
								i++
							}
						}
						if i >= len(s) {
							return nil, fmt.Errorf("value of %s not closed", id)
						}
						i++
						n[id] = append(n[id], v.String())
						skip()
					}
				}
				nodes = append(nodes, n)
			case '(':
				sub, err := tree(depth + 1)
				if err != nil {
					return nil, err
				}
				if len(nodes) > 0 && nodes[len(nodes)-1]["_var"] == nil {
					nodes = append(nodes, sub...) // the main line follows the first variation
					nodes[len(nodes)-1]["_var"] = []string{"1"}
				}
			case ')':
				i++
				if len(nodes) == 0 {
					return nil, fmt.Errorf("offset %d: empty sequence", i)
				}
				return nodes, nil
			default:
				return nil, fmt.Errorf("offset %d: unexpected %q", i, s[i])
			}
		}
	}
	for skip(); i < len(s); skip() {
		t, err := tree(0)
		if err != nil {
			return nil, err
		}
		trees = append(trees, t)
	}
	if len(trees) == 0 {
		return nil, fmt.Errorf("no game tree")
	}
	return trees, nil
}

// sgfPoint reads "ab" as column 0, row 1.
func sgfPoint(v string, size int) (row, col int, err error) {
	if len(v) != 2 || v[0] < 'a' || v[1] < 'a' || int(v[0]-'a') >= size || int(v[1]-'a') >= size {
		return 0, 0, fmt.Errorf("point %q off a %dx%d board", v, size, size)
	}
	return int(v[1] - 'a'), int(v[0] - 'a'), nil
}

// sgfBoard is a board the reader plays moves on, removing captured groups.
type sgfBoard struct {
	n   int
	pts []uint8
}

func (b *sgfBoard) group(i int) (stones []int, libs int) {
	seen := map[int]bool{i: true}
	libSeen := map[int]bool{}
	stack := []int{i}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		stones = append(stones, p)
		r, c := p/b.n, p%b.n
		for _, d := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
			rr, cc := r+d[0], c+d[1]
			if rr < 0 || cc < 0 || rr >= b.n || cc >= b.n {
				continue
			}
			q := rr*b.n + cc
			switch {
			case b.pts[q] == engine.PointEmpty && !libSeen[q]:
				libSeen[q] = true
				libs++
			case b.pts[q] == b.pts[p] && !seen[q]:
				seen[q] = true
				stack = append(stack, q)
			}
		}
	}
	return stones, libs
}

func (b *sgfBoard) play(row, col int, c uint8) error {
	i := row*b.n + col
	if b.pts[i] != engine.PointEmpty {
		return fmt.Errorf("(%d,%d) is occupied", row, col)
	}
	b.pts[i] = c
	r0, c0 := row, col
	for _, d := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
		rr, cc := r0+d[0], c0+d[1]
		if rr < 0 || cc < 0 || rr >= b.n || cc >= b.n {
			continue
		}
		if q := rr*b.n + cc; b.pts[q] == 3-c {
			if g, libs := b.group(q); libs == 0 {
				for _, p := range g {
					b.pts[p] = engine.PointEmpty
				}
			}
		}
	}
	if _, libs := b.group(i); libs == 0 {
		return fmt.Errorf("(%d,%d) is suicide", row, col)
	}
	return nil
}

// TestSGFReplayReadBack: every sample game, read back, has the unit's moves in order,
// alternating colours (a pass where a colour plays twice), and the engine's final
// position once the reader has applied the captures itself.
func TestSGFReplayReadBack(t *testing.T) {
	units := samples.Units(t, "replay", "replay.in")
	units = append(units, []byte("5 4\nB(0,0)\nB(1,1)\nW(-2,-2)\nW(2,2)\n")) // two in a row, twice
	for k, unit := range units {
		name := fmt.Sprintf("replay unit %d", k+1)
		doc, err := render.SGF("replay", unit)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		trees, err := sgfRead(string(doc))
		if err != nil || len(trees) != 1 {
			t.Fatalf("%s: %d trees, %v\n%s", name, len(trees), err, doc)
		}
		root := trees[0][0]
		size, want, _ := engine.ReplayMoves(unit)
		if root["FF"][0] != "4" || root["GM"][0] != "1" || root["SZ"][0] != fmt.Sprint(size) {
			t.Fatalf("%s: root %v", name, root)
		}
		b := sgfBoard{n: size, pts: make([]uint8, size*size)}
		var got []engine.ReplayMove
		prev := ""
		for _, n := range trees[0][1:] {
			col := "B"
			if n["W"] != nil {
				col = "W"
			}
			if n[col] == nil || len(n) != 1 {
				t.Fatalf("%s: node %v is not one move", name, n)
			}
			if col == prev {
				t.Fatalf("%s: %s moves twice in a row", name, col)
			}
			prev = col
			if n[col][0] == "" {
				continue // a pass
			}
			r, c, err := sgfPoint(n[col][0], size)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			stone := engine.PointBlack
			if col == "W" {
				stone = engine.PointWhite
			}
			if err := b.play(r, c, stone); err != nil {
				t.Fatalf("%s: move %d: %v", name, len(got)+1, err)
			}
			got = append(got, engine.ReplayMove{White: col == "W", Row: r, Col: c})
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: moves read back %v, unit %v", name, got, want)
		}
		ans, _ := render.Solve("replay", unit)
		a := ans.(engine.ReplayAnswer)
		if fmt.Sprint(b.pts) != fmt.Sprint(a.Position().Stones) {
			t.Errorf("%s: final position read back differs from the engine's", name)
		}
		wantRE := "0"
		if a.Black > a.White {
			wantRE = fmt.Sprintf("B+%d", a.Black-a.White)
		} else if a.White > a.Black {
			wantRE = fmt.Sprintf("W+%d", a.White-a.Black)
		}
		if root["RE"][0] != wantRE {
			t.Errorf("%s: RE %q, want %q", name, root["RE"][0], wantRE)
		}
	}
}

// TestSGFSetupReadBack: goscore and territory boards read back to the same stones and
// the same territory as the engine's position.
func TestSGFSetupReadBack(t *testing.T) {
	for _, c := range []struct{ problem, file string }{{"goscore", "goscore.in"}, {"territory", "territory.in"}} {
		for k, unit := range samples.Units(t, c.problem, c.file) {
			name := fmt.Sprintf("%s unit %d", c.file, k+1)
			doc, err := render.SGF(c.problem, unit)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			trees, err := sgfRead(string(doc))
			if err != nil || len(trees) != 1 || len(trees[0]) != 1 {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			root := trees[0][0]
			var size int
			fmt.Sscan(root["SZ"][0], &size)
			stones, owner := make([]uint8, size*size), make([]uint8, size*size)
			for prop, v := range map[string]uint8{"AB": engine.PointBlack, "AW": engine.PointWhite} {
				for _, p := range root[prop] {
					r, col, err := sgfPoint(p, size)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					stones[r*size+col] = v
				}
			}
			for prop, v := range map[string]uint8{"TB": engine.PointBlack, "TW": engine.PointWhite} {
				for _, p := range root[prop] {
					r, col, _ := sgfPoint(p, size)
					owner[r*size+col] = v
				}
			}
			ans, _ := render.Solve(c.problem, unit)
			pos := ans.(interface{ Position() engine.GoPosition }).Position()
			if size != pos.Size || fmt.Sprint(stones) != fmt.Sprint(pos.Stones) || fmt.Sprint(owner) != fmt.Sprint(pos.Owner) {
				t.Errorf("%s: setup read back differs from the engine's position", name)
			}
			if root["RE"] == nil || root["C"] == nil {
				t.Errorf("%s: no RE or C: %v", name, root)
			}
		}
	}
}

func TestCollection(t *testing.T) {
	recs := []render.Record{
		{Problem: "replay", Unit: []byte("3 1\nB(0,0)\n")},
		{Problem: "othello", Unit: []byte("whatever")},
		{Problem: "territory", Unit: []byte("3 1 0\n2 2\n")},
	}
	doc, n, err := render.Collection(recs)
	if err != nil || n != 2 {
		t.Fatalf("Collection: %d trees, %v", n, err)
	}
	trees, err := sgfRead(string(doc))
	if err != nil || len(trees) != 2 {
		t.Fatalf("read back %d trees: %v\n%s", len(trees), err, doc)
	}
	if _, _, err := render.Collection([]render.Record{{Problem: "replay", Unit: []byte("4 0\n")}}); err == nil ||
		!strings.Contains(err.Error(), "record 1") {
		t.Errorf("a bad record: %v", err)
	}
}

// FuzzRender: whatever a unit holds, the picture is well-formed XML whenever the
// engine accepts the unit, and the game record reads back.
func FuzzRender(f *testing.F) {
	// The seeds are in testdata/fuzz/FuzzRender; which picks the problem from
	// engine.Names(): 0 capture, 1 goscore, 2 othello, 3 replay, 4 territory.
	problems := engine.Names()
	f.Fuzz(func(t *testing.T, which uint8, unit []byte) {
		problem := problems[int(which)%len(problems)]
		doc, err := render.SVG(problem, unit)
		if err != nil {
			return
		}
		svgCounts(t, doc)
		if !render.HasSGF(problem) {
			return
		}
		sgf, err := render.SGF(problem, unit)
		if err != nil {
			t.Fatalf("SVG drew the unit, SGF failed: %v", err)
		}
		if _, err := sgfRead(string(sgf)); err != nil {
			t.Fatalf("SGF does not read back: %v\n%s", err, sgf)
		}
	})
}
