package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
)

// positioned is what the Go problems' answers have beside their score.
type positioned interface{ Position() engine.GoPosition }

// TestPositionAgreesWithScore: the ownership a picture shades adds up to the score the
// contest answer gives, for every sample board, and the JSON stays the score alone.
func TestPositionAgreesWithScore(t *testing.T) {
	for _, c := range []struct{ problem, file string }{
		{"goscore", "goscore.in"}, {"replay", "replay.in"}, {"territory", "territory.in"},
	} {
		p := mustProblem(t, c.problem)
		units := samples.Units(t, c.problem, c.file)
		if len(units) == 0 {
			t.Fatalf("%s: no units", c.file)
		}
		for i, u := range units {
			ans, err := p.Solve(u)
			if err != nil {
				t.Fatalf("%s unit %d: %v", c.file, i+1, err)
			}
			pos := ans.(positioned).Position()
			b, w, ob, ow := pos.Count()
			var gotB, gotW int
			var js []byte
			switch a := ans.(type) {
			case engine.GoscoreAnswer:
				gotB, gotW = b+ob, w+ow
				js, _ = json.Marshal(a.BoardScore)
			case engine.ReplayAnswer:
				cb, cw := a.Captures()
				gotB, gotW = ob+cb, ow+cw
				js, _ = json.Marshal(a.BoardScore)
			case engine.TerritoryAnswer:
				gotB, gotW = ob, ow
				js, _ = json.Marshal(a.TerritoryScore)
			}
			var score struct{ Black, White int }
			full, _ := json.Marshal(ans)
			if string(full) != string(js) {
				t.Errorf("%s unit %d: JSON %s, want the score's alone %s", c.file, i+1, full, js)
			}
			_ = json.Unmarshal(full, &score)
			if gotB != score.Black || gotW != score.White {
				t.Errorf("%s unit %d: position gives %d %d (stones %d %d, owned %d %d), score %d %d",
					c.file, i+1, gotB, gotW, b, w, ob, ow, score.Black, score.White)
			}
		}
	}
}

func TestReplayMoves(t *testing.T) {
	n, moves, err := engine.ReplayMoves([]byte("5 3\nB(-2,-2)\nW( 2 , 1 )\n  B(0,0)\n"))
	if err != nil || n != 5 || len(moves) != 3 {
		t.Fatalf("ReplayMoves: n=%d moves=%v err=%v", n, moves, err)
	}
	want := []engine.ReplayMove{{Row: 0, Col: 0}, {White: true, Row: 3, Col: 4}, {Row: 2, Col: 2}}
	for i := range want {
		if moves[i] != want[i] {
			t.Errorf("move %d: %+v, want %+v", i+1, moves[i], want[i])
		}
	}
	if _, _, err := engine.ReplayMoves([]byte("5 1\nB(9,9)\n")); err == nil {
		t.Error("ReplayMoves accepted a move off the board")
	}
}

// TestCaptureWindow: a huge board gives a small window around the last moves, with
// the stones that are still there after the captures.
func TestCaptureWindow(t *testing.T) {
	// Black surrounds a white stone at (1000000000,1000000000) and takes it.
	const c = 1000000000
	g, err := engine.CaptureParse([]byte("2147483647 8\n" +
		"999999999 1000000000\n1000000000 1000000000\n" + // B left, W centre
		"1000000001 1000000000\n5 5\n" + // B right, W far away
		"1000000000 999999999\n7 7\n" + // B above, W far away
		"1000000000 1000000001\n9 9\n")) // B below: captures; W far away
	if err != nil {
		t.Fatal(err)
	}
	w, err := g.Window()
	if err != nil {
		t.Fatal(err)
	}
	if w.W > engine.CaptureWindowMax || w.H > engine.CaptureWindowMax || w.W < 1 || w.H < 1 {
		t.Fatalf("window %dx%d", w.W, w.H)
	}
	if last := w.Last[len(w.Last)-1]; last.X < w.X || last.X >= w.X+w.W || last.Y < w.Y || last.Y >= w.Y+w.H {
		t.Fatalf("the last move %+v is outside the window %+v", last, w)
	}
	at := func(x, y int) uint8 {
		if x < w.X || x >= w.X+w.W || y < w.Y || y >= w.Y+w.H {
			return 255
		}
		return w.Stones[(y-w.Y)*w.W+x-w.X]
	}
	// The last move is White's (9,9): the window is around it, far from the capture.
	if at(9, 9) != engine.PointWhite || at(7, 7) != engine.PointWhite || at(5, 5) != engine.PointWhite {
		t.Errorf("window %+v misses the last white stones", w)
	}
	g2, _ := engine.CaptureParse([]byte("2147483647 7\n" +
		"999999999 1000000000\n1000000000 1000000000\n1000000001 1000000000\n5 5\n" +
		"1000000000 999999999\n7 7\n1000000000 1000000001\n"))
	w2, err := g2.Window()
	if err != nil {
		t.Fatal(err)
	}
	x0, y0 := w2.X, w2.Y
	get := func(x, y int) uint8 { return w2.Stones[(y-y0)*w2.W+x-x0] }
	if w2.W != engine.CaptureWindowMin || get(c, c) != engine.PointEmpty || get(c-1, c) != engine.PointBlack || get(c, c+1) != engine.PointBlack {
		t.Errorf("window %+v: the captured stone should be gone and Black's four there", w2)
	}
}
