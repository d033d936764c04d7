package engine_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// captureDiff plays g with the engine and with the reference and fails on any
// difference: the count, or which move is on an occupied point.
func captureDiff(t *testing.T, g *captureGame) {
	t.Helper()
	captureDiffAt(t, g, g.size, 0, 0)
}

// captureDiffAt plays g with the reference on its own board, and with the engine
// translated by (dx,dy) onto a board of side size.
func captureDiffAt(t *testing.T, g *captureGame, size, dx, dy int) {
	t.Helper()
	want, bad := g.want, g.bad
	if !g.byRef {
		want, bad = captureSimpleCount(g.size, g.moves)
	}
	moved := &captureGame{size: size, moves: make([]capturePt, len(g.moves))}
	for i, p := range g.moves {
		moved.moves[i] = capturePt{p.X + dx, p.Y + dy}
	}
	out, err := mustProblem(t, "capture").Append(nil, moved.text())
	if bad >= 0 {
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.Line != bad+2 {
			t.Fatalf("%s: the reference finds move %d on an occupied point, the engine says %q, %v",
				captureShort(g), bad+1, out, err)
		}
		return
	}
	if err != nil || string(out) != fmt.Sprintf("%d\n", want) {
		t.Fatalf("%s: engine %q, %v; reference %d", captureShort(g), out, err, want)
	}
	if g.want >= 0 && want != g.want {
		t.Fatalf("%s: the generator meant %d captures, the reference counts %d", captureShort(g), g.want, want)
	}
}

// captureShort names a game in a failure, with its text when it is small enough.
func captureShort(g *captureGame) string {
	if len(g.moves) <= 60 {
		return fmt.Sprintf("game %q", g.text())
	}
	return fmt.Sprintf("%dx%d game of %d moves", g.size, g.size, len(g.moves))
}

func TestCaptureDiffRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 4))
	n := diffSize(600, 12000)
	for i := range n {
		size := 1 + r.IntN(9)
		moves := 1 + r.IntN(300)
		occupied := 0.0
		if i%4 == 0 {
			occupied = 0.01 // some games end on an occupied point
		}
		captureDiff(t, captureRandomGame(r, size, moves, occupied))
	}
}

func TestCaptureDiffLong(t *testing.T) {
	t.Parallel()
	// Long games on mid-sized boards: many captures, big groups, many merges.
	r := rand.New(rand.NewPCG(5, 5))
	for range diffSize(2, 40) {
		captureDiff(t, captureRandomGame(r, 5+r.IntN(20), 3000+r.IntN(3000), 0))
	}
}

// TestCaptureDiffTranslated plays random games that stay off two sides of their board
// at the matching corner of much bigger boards, up to 2^31-1: the sides they avoid
// are then open on both boards, and the sides they touch are the same edges.
func TestCaptureDiffTranslated(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(6, 6))
	for i := range diffSize(250, 5000) {
		size := 3 + r.IntN(8)
		g := captureRandomGame(r, size, 1+r.IntN(300), 0)
		big := []int{size + 1 + r.IntN(100), 100000, 1<<31 - 1}[i%3]
		// Corner 0: keep x, y >= 1 and put the game at the big board's far corner.
		// Corner 1: keep x, y <= size-2 and leave it at the origin.
		corner := i % 2
		var kept []capturePt
		for _, p := range g.moves {
			if corner == 0 && p.X >= 1 && p.Y >= 1 || corner == 1 && p.X <= size-2 && p.Y <= size-2 {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			continue
		}
		// Dropping moves may put a later move on an occupied point: compare that too.
		g = &captureGame{size: size, moves: kept, want: -1}
		if corner == 0 {
			captureDiffAt(t, g, big, big-size, big-size)
		} else {
			captureDiffAt(t, g, big, 0, 0)
		}
	}
}

func TestCaptureDiffShapes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	for range 60 {
		// A snake with suicides into its eye.
		w, h := 2+r.IntN(12), 2*(1+r.IntN(10))
		g := newCaptureGen(w + 2 + 2*(6+w+h) + r.IntN(5))
		g.fillRegion(w+4, 0, g.size-1, g.size-1)
		eye := g.snake(w, h)
		g.suicides(eye, 1+r.IntN(20))
		captureDiff(t, &g.captureGame)

		// A block captured at once, then refilled by black.
		b := 1 + r.IntN(12)
		g = newCaptureGen(5*b + 6 + r.IntN(5))
		g.fillRegion(b+2, 0, g.size-1, g.size-1-b-1)
		g.block(b)
		for y := g.size - b; y < g.size; y++ {
			for x := range b {
				g.play(0, capturePt{x, y})
			}
		}
		g.want += b * b // the last stone fills the block's last liberty: suicide
		captureDiff(t, &g.captureGame)

		// A ladder to the edge.
		ox := 1 + r.IntN(5)
		oy := 1 + r.IntN(ox)
		g = newCaptureGen(ox + 8 + r.IntN(40))
		g.fillRegion(0, g.size-3, 4, g.size-1)
		g.ladder(ox, oy)
		captureDiff(t, &g.captureGame)
	}
}

func TestCaptureDiffAdversarial(t *testing.T) {
	t.Parallel()
	// The benchmark games: the engine against what the generator meant (the reference
	// takes seconds on them; BenchmarkCaptureSimpleBig times it).
	games := map[string]*captureGame{
		"snake": captureSnakeGame(), "block": captureBlockGame(),
		"ladder": captureLadderGame(), "mixed": captureMixedGame(),
	}
	for name, g := range games {
		t.Run(name, func(t *testing.T) {
			out, err := mustProblem(t, "capture").Append(nil, g.text())
			if err != nil || string(out) != fmt.Sprintf("%d\n", g.want) {
				t.Fatalf("engine %q, %v; want %d", out, err, g.want)
			}
			if len(g.moves) > 25000 {
				t.Errorf("%d moves, over the limit", len(g.moves))
			}
			t.Logf("%dx%d, %d moves, %d captured", g.size, g.size, len(g.moves), g.want)
		})
	}
	// Scaled down, the reference agrees with the generators too.
	g := newCaptureGen(120)
	g.fillRegion(40, 0, 118, 118)
	g.suicides(g.snake(19, 40), 300)
	captureDiff(t, &g.captureGame)
	g = newCaptureGen(200)
	g.fillRegion(30, 0, 198, 160)
	g.block(25)
	captureDiff(t, &g.captureGame)
	g = newCaptureGen(400)
	g.fillRegion(0, 380, 30, 398)
	g.ladder(3, 1)
	captureDiff(t, &g.captureGame)
}
