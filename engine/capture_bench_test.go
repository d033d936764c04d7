package engine_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
)

// captureSimpleAppend answers a unit with the reference: plain parsing, then the dense
// board. Benchmarks only; it trusts its input.
func captureSimpleAppend(dst, unit []byte) []byte {
	f := strings.Fields(string(unit))
	size, _ := strconv.Atoi(f[0])
	moves := make([]capturePt, 0, len(f)/2)
	for i := 2; i+1 < len(f); i += 2 {
		x, _ := strconv.Atoi(f[i])
		y, _ := strconv.Atoi(f[i+1])
		moves = append(moves, capturePt{x, y})
	}
	n, _ := captureSimpleCount(size, moves)
	return append(strconv.AppendInt(dst, int64(n), 10), '\n')
}

// captureBench times one unit per op with the engine or the reference.
func captureBench(b *testing.B, g *captureGame, simple bool) {
	p := mustProblem(b, "capture")
	unit := g.text()
	want, err := p.Append(nil, unit)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 16)
	b.ReportAllocs()
	b.SetBytes(int64(len(unit)))
	b.ResetTimer()
	for b.Loop() {
		if simple {
			dst = captureSimpleAppend(dst[:0], unit)
		} else {
			dst, _ = p.Append(dst[:0], unit)
		}
	}
	b.StopTimer()
	if !bytes.Equal(dst, want) {
		b.Fatalf("answer %q, want %q", dst, want)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(g.moves)), "ns/move")
}

// captureSmallGames are the games both implementations are timed on.
func captureSmallGames() []struct {
	name string
	g    *captureGame
} {
	r := rand.New(rand.NewPCG(1, 2))
	snake := newCaptureGen(120)
	snake.fillRegion(40, 0, 118, 118)
	snake.suicides(snake.snake(19, 40), 300)
	block := newCaptureGen(200)
	block.fillRegion(30, 0, 198, 160)
	block.block(25)
	ladder := newCaptureGen(400)
	ladder.fillRegion(0, 380, 30, 398)
	ladder.ladder(3, 1)
	return []struct {
		name string
		g    *captureGame
	}{
		{"random-9x9-300", captureRandomGame(r, 9, 300, 0)},
		{"random-19x19-2000", captureRandomGame(r, 19, 2000, 0)},
		{"snake-400+300suicides", &snake.captureGame},
		{"block-25x25", &block.captureGame},
		{"ladder-1600", &ladder.captureGame},
	}
}

// BenchmarkCapture times the engine beside the reference on games the reference
// finishes quickly.
func BenchmarkCapture(b *testing.B) {
	for _, c := range captureSmallGames() {
		b.Run(c.name+"/fast", func(b *testing.B) { captureBench(b, c.g, false) })
		b.Run(c.name+"/simple", func(b *testing.B) { captureBench(b, c.g, true) })
	}
}

// captureBigGames are the adversarial games at full size.
func captureBigGames() []struct {
	name string
	g    *captureGame
} {
	return []struct {
		name string
		g    *captureGame
	}{
		{"snake-6000+suicides-25000moves", captureSnakeGame()},
		{"block-100x100", captureBlockGame()},
		{"ladder-12000", captureLadderGame()},
		{"mixed-25000moves", captureMixedGame()},
	}
}

// BenchmarkCaptureBig times the engine on the adversarial games at full size.
func BenchmarkCaptureBig(b *testing.B) {
	for _, c := range captureBigGames() {
		b.Run(c.name+"/fast", func(b *testing.B) { captureBench(b, c.g, false) })
	}
}

// BenchmarkCaptureSimpleBig times the reference on the full-size games: seconds per
// game, so only on demand, as a one-off:
//
//	CAPTURE_SIMPLE_BIG=1 go test -run='^$' -bench=CaptureSimpleBig -benchtime=1x ./engine/
func BenchmarkCaptureSimpleBig(b *testing.B) {
	if os.Getenv("CAPTURE_SIMPLE_BIG") == "" {
		b.Skip("set CAPTURE_SIMPLE_BIG=1 to time the reference on the big games")
	}
	for _, c := range captureBigGames() {
		b.Run(c.name+"/simple", func(b *testing.B) { captureBench(b, c.g, true) })
	}
}

// BenchmarkCaptureHostileHeader times a 25,000-move game on a 2^31-1 board.
func BenchmarkCaptureHostileHeader(b *testing.B) {
	g := &captureGame{size: 1<<31 - 1}
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[capturePt]bool{}
	for len(g.moves) < 25000 {
		p := capturePt{1<<31 - 2 - r.IntN(200), r.IntN(200)}
		if !seen[p] {
			seen[p] = true
			g.moves = append(g.moves, p)
		}
	}
	captureBench(b, g, false)
}

// BenchmarkCaptureContest times the whole stream path: framing, then answering, for
// the mixed game repeated with stray blank lines.
func BenchmarkCaptureContest(b *testing.B) {
	p := mustProblem(b, "capture")
	unit := captureMixedGame().text()
	in := bytes.Join([][]byte{unit, unit, unit, unit}, []byte("\r\n"))
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		bad, err := engine.Contest(p, bytes.NewReader(in), io.Discard, func(err error) { b.Fatal(err) })
		if bad != 0 || err != nil {
			b.Fatal(bad, err)
		}
	}
}

// BenchmarkCaptureFramer times framing alone, per line.
func BenchmarkCaptureFramer(b *testing.B) {
	p := mustProblem(b, "capture")
	lines := bytes.Split(bytes.TrimSuffix(captureMixedGame().text(), []byte("\n")), []byte("\n"))
	f := p.NewFramer()
	var frames []engine.Frame
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lines {
			frames = f.Feed(frames[:0], l)
		}
		if len(frames) != 1 || frames[0].Err != nil {
			b.Fatal(fmt.Sprint(frames))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lines)), "ns/line")
}
