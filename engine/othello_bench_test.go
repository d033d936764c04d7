package engine_test

import (
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// othelloBenchCase is a position reached by random play, with a legal move in it.
type othelloBenchCase struct {
	board othelloRefBoard
	side  byte
	pos   engine.OthelloPosition
	r, c  int // a legal move of side, 0-based
}

// othelloBenchCases plays random games from the opening and keeps positions from
// every stage of the game.
func othelloBenchCases() []othelloBenchCase {
	rng := rand.New(rand.NewPCG(1, 2))
	var cases []othelloBenchCase
	for len(cases) < 256 {
		var b othelloRefBoard
		for r := range b {
			b[r] = [8]byte([]byte("--------"))
		}
		b[3][3], b[3][4], b[4][3], b[4][4] = 'W', 'B', 'B', 'W'
		side := byte('B')
		for ply := rng.IntN(58); ply >= 0; ply-- {
			moves := othelloRefMoves(nil, &b, side)
			if len(moves) == 0 {
				break
			}
			m := moves[rng.IntN(len(moves))]
			if ply == 0 {
				cases = append(cases, othelloBenchCase{b, side, othelloRefToPosition(&b, side), m[0], m[1]})
				break
			}
			othelloRefPlay(&b, side, m[0], m[1])
			side = othelloRefOther(side)
		}
	}
	return cases
}

// BenchmarkOthelloMoves is move generation alone.
func BenchmarkOthelloMoves(b *testing.B) {
	cases := othelloBenchCases()
	b.Run("bitboard", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for i := 0; b.Loop(); i++ {
			n += bits.OnesCount64(cases[i%len(cases)].pos.Moves())
		}
	})
	b.Run("array", func(b *testing.B) {
		b.ReportAllocs()
		var moves [64][2]int
		var n int
		for i := 0; b.Loop(); i++ {
			c := &cases[i%len(cases)]
			n += len(othelloRefMoves(moves[:0], &c.board, c.side))
		}
	})
}

// BenchmarkOthelloL answers an L: list the moves and format them.
func BenchmarkOthelloL(b *testing.B) {
	cases := othelloBenchCases()
	dst := make([]byte, 0, 256)
	b.Run("bitboard", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c := &cases[i%len(cases)]
			dst = engine.OthelloAppendMoves(dst[:0], c.pos.Moves())
		}
	})
	b.Run("array", func(b *testing.B) {
		b.ReportAllocs()
		var moves [64][2]int
		for i := 0; b.Loop(); i++ {
			c := &cases[i%len(cases)]
			dst = othelloRefAppendMoves(dst[:0], othelloRefMoves(moves[:0], &c.board, c.side))
		}
	})
}

// BenchmarkOthelloM answers an M: the pass rule, the move, the count.
func BenchmarkOthelloM(b *testing.B) {
	cases := othelloBenchCases()
	dst := make([]byte, 0, 256)
	b.Run("bitboard", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c := &cases[i%len(cases)]
			p := c.pos
			if _, ok := p.Play(engine.OthelloSquare(c.r+1, c.c+1)); !ok {
				b.Fatal("illegal move")
			}
			bl, wh := p.Count()
			dst = engine.OthelloAppendCount(dst[:0], bl, wh)
		}
	})
	b.Run("array", func(b *testing.B) {
		b.ReportAllocs()
		var moves [64][2]int
		for i := 0; b.Loop(); i++ {
			c := &cases[i%len(cases)]
			board, mover := c.board, c.side
			if len(othelloRefMoves(moves[:0], &board, mover)) == 0 {
				mover = othelloRefOther(mover)
			}
			if !othelloRefPlay(&board, mover, c.r, c.c) {
				b.Fatal("illegal move")
			}
			bl, wh := othelloRefCount(&board)
			dst = engine.OthelloAppendCount(dst[:0], bl, wh)
		}
	})
}

// BenchmarkOthelloAppend answers whole units as the framer emits them: parse the
// board, run the command, format the answer.
func BenchmarkOthelloAppend(b *testing.B) {
	p, ok := engine.Lookup("othello")
	if !ok {
		b.Fatal("othello is not registered")
	}
	cases := othelloBenchCases()
	units := map[string][][]byte{}
	for _, c := range cases {
		var rows []string
		for r := range c.board {
			rows = append(rows, string(c.board[r][:]))
		}
		head := strings.Join(rows, "\n") + "\n" + string(c.side) + "\n"
		units["L"] = append(units["L"], []byte(head+"L\n"))
		units["M"] = append(units["M"], []byte("\n"+head+"M"+string(rune('1'+c.r))+string(rune('1'+c.c))+"\n"))
		units["Q"] = append(units["Q"], []byte(head+"Q\n"))
	}
	for _, cmd := range []string{"L", "M", "Q"} {
		b.Run(cmd, func(b *testing.B) {
			us := units[cmd]
			dst := make([]byte, 0, 256)
			b.ReportAllocs()
			var err error
			for i := 0; b.Loop(); i++ {
				if dst, err = p.Append(dst[:0], us[i%len(us)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOthelloContest runs a long contest input through the framer and Append,
// as the daemon's reader and workers would; per command line.
func BenchmarkOthelloContest(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	in := string(othelloGenContest(rng, 50, false))
	cmds := 0
	for _, l := range strings.Split(in, "\n") {
		if l == "L" || l == "Q" || strings.HasPrefix(l, "M") {
			cmds++
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		runContest(b, "othello", in)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cmds), "ns/command")
}
