// Package render draws the scoreboard's units as pictures (SVG) and writes Go games as
// game records (SGF, FF[4]). Everything here is a pure function of a unit and the
// engine's answer to it: no I/O, no state, so the web page, the render command and
// the history export draw the same thing.
//
// The SVG marks what a test (or a script) may count with classes: every stone is a
// circle of class "stone black" or "stone white", every point a side owns is a rect of
// class "terr black" or "terr white", the last move has class "last", a legal Othello
// move "legal" and a hoshi point "hoshi". Colours are attributes, not a style sheet,
// so the file looks the same wherever it is opened.
package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/goclub/scoreboard/engine"
)

// Solve answers a unit of problem with the engine, for the functions that draw it.
func Solve(problem string, unit []byte) (engine.Answer, error) {
	p, err := engine.Find(problem)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	return p.Solve(unit)
}

// SVG solves a unit of problem and draws it.
func SVG(problem string, unit []byte) ([]byte, error) {
	ans, err := Solve(problem, unit)
	if err != nil {
		return nil, err
	}
	return Draw(ans, unit)
}

// Draw draws the engine's answer to unit as an SVG document.
func Draw(ans engine.Answer, unit []byte) ([]byte, error) {
	var c canvas
	switch a := ans.(type) {
	case engine.GoscoreAnswer:
		c.goBoard(a.Position(), -1)
		c.caption(fmt.Sprintf("Black %d  White %d", a.Black, a.White), "area: stones + territory")
	case engine.TerritoryAnswer:
		c.goBoard(a.Position(), -1)
		c.caption(strings.TrimSpace(string(a.AppendText(nil))),
			fmt.Sprintf("territory: Black %d  White %d", a.Black, a.White))
	case engine.ReplayAnswer:
		_, moves, err := engine.ReplayMoves(unit)
		if err != nil {
			return nil, err
		}
		pos := a.Position()
		last := -1
		if len(moves) > 0 {
			m := moves[len(moves)-1]
			last = m.Row*pos.Size + m.Col
		}
		c.goBoard(pos, last)
		cb, cw := a.Captures()
		c.caption(fmt.Sprintf("Black %d  White %d", a.Black, a.White),
			fmt.Sprintf("%d moves · captures: Black %d  White %d", len(moves), cb, cw))
	case engine.OthelloAnswer:
		c.othello(a)
	case engine.CaptureAnswer:
		g, err := engine.CaptureParse(unit)
		if err != nil {
			return nil, err
		}
		w, err := g.Window()
		if err != nil {
			return nil, err
		}
		c.captureWindow(w, g.Size)
		detail := fmt.Sprintf("%d moves · board %d", a.Moves, a.Size)
		if w.W < g.Size || w.H < g.Size {
			detail = fmt.Sprintf("%d moves · x %d-%d, y %d-%d of %d", a.Moves, w.X, w.X+w.W-1, w.Y, w.Y+w.H-1, a.Size)
		}
		c.caption(fmt.Sprintf("captured %d", a.Captured), detail)
	default:
		return nil, fmt.Errorf("render: no picture for a %T", ans)
	}
	return c.finish(), nil
}

// The geometry, in SVG user units: the page scales the picture to its tile.
const (
	cell   = 40
	margin = 30
)

// canvas collects the elements of one picture: the board, whose size sets width and
// height, and the caption's two lines under it.
type canvas struct {
	body          bytes.Buffer
	width, height int
	lines         [2]string
}

// minWidth keeps the caption readable under a small board (a 3x3 replay, a capture
// game on a 2x2 board): the board is centred on a wider picture.
const minWidth = 560

func (c *canvas) printf(format string, args ...any) { fmt.Fprintf(&c.body, format, args...) }

// Colours: a wood board, and territory shades that read across a room.
const (
	woodColour  = "#dcb35c"
	lineColour  = "#3b2a14"
	blackColour = "#111"
	whiteColour = "#f8f8f8"
	lastColour  = "#e0262b"
)

func pointXY(i, n int) (x, y int) { return margin + (i%n)*cell, margin + (i/n)*cell }

// goBoard draws a Go position; last is the point of the last move, or -1.
func (c *canvas) goBoard(p engine.GoPosition, last int) {
	n := p.Size
	side := 2*margin + (n-1)*cell
	c.width, c.height = side, side
	c.printf(`<rect class="board" x="0" y="0" width="%d" height="%d" fill="%s"/>`, side, side, woodColour)
	for i := 0; i < n; i++ {
		o := margin + i*cell
		c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`, margin, o, side-margin, o, lineColour)
		c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`, o, margin, o, side-margin, lineColour)
	}
	for _, i := range hoshiPoints(n) {
		x, y := pointXY(i, n)
		c.printf(`<circle class="hoshi" cx="%d" cy="%d" r="6" fill="%s"/>`, x, y, lineColour)
	}
	for i, s := range p.Stones {
		x, y := pointXY(i, n)
		switch {
		case s != engine.PointEmpty:
			c.stone(x, y, s == engine.PointWhite)
		case p.Owner[i] == engine.PointBlack:
			c.printf(`<rect class="terr black" x="%d" y="%d" width="16" height="16" fill="%s"/>`, x-8, y-8, blackColour)
		case p.Owner[i] == engine.PointWhite:
			c.printf(`<rect class="terr white" x="%d" y="%d" width="16" height="16" fill="%s" stroke="%s" stroke-width="2"/>`,
				x-8, y-8, whiteColour, blackColour)
		}
	}
	if last >= 0 && last < len(p.Stones) {
		x, y := pointXY(last, n)
		c.printf(`<circle class="last" cx="%d" cy="%d" r="9" fill="none" stroke="%s" stroke-width="5"/>`, x, y, lastColour)
	}
}

func (c *canvas) stone(x, y int, white bool) {
	if white {
		c.printf(`<circle class="stone white" cx="%d" cy="%d" r="19" fill="%s" stroke="%s" stroke-width="2"/>`, x, y, whiteColour, blackColour)
	} else {
		c.printf(`<circle class="stone black" cx="%d" cy="%d" r="19" fill="%s"/>`, x, y, blackColour)
	}
}

// hoshiPoints are the star points of an n x n board: the 4-4 points (3-3 below 13)
// and, on an odd board, the sides' middles and the centre.
func hoshiPoints(n int) []int {
	if n < 7 {
		if n%2 == 1 {
			return []int{n/2*n + n/2}
		}
		return nil
	}
	lo := 3
	if n < 13 {
		lo = 2
	}
	hi := n - 1 - lo
	rows := []int{lo, hi}
	if n%2 == 1 {
		rows = []int{lo, n / 2, hi}
	}
	var pts []int
	for _, r := range rows {
		for _, col := range rows {
			if n < 13 && (r == n/2) != (col == n/2) {
				continue // a small board has its corners and centre only
			}
			pts = append(pts, r*n+col)
		}
	}
	return pts
}

// othello draws the 8x8 board after the command, with the side to move, the legal
// moves after L, the last move after M, and the counts.
func (c *canvas) othello(a engine.OthelloAnswer) {
	const sq = 60
	side := 2*margin + 8*sq
	c.width, c.height = side, side
	c.printf(`<rect class="board" x="0" y="0" width="%d" height="%d" fill="#0b6e3a"/>`, side, side)
	for i := 0; i <= 8; i++ {
		o := margin + i*sq
		c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#063" stroke-width="2"/>`, margin, o, side-margin, o)
		c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#063" stroke-width="2"/>`, o, margin, o, side-margin)
	}
	centre := func(s int) (int, int) { return margin + (s%8)*sq + sq/2, margin + (s/8)*sq + sq/2 }
	pos := a.Position()
	for s := range 64 {
		x, y := centre(s)
		switch {
		case pos.Black>>s&1 != 0:
			c.printf(`<circle class="stone black" cx="%d" cy="%d" r="25" fill="%s"/>`, x, y, blackColour)
		case pos.White>>s&1 != 0:
			c.printf(`<circle class="stone white" cx="%d" cy="%d" r="25" fill="%s" stroke="%s" stroke-width="2"/>`, x, y, whiteColour, blackColour)
		}
	}
	switch a.Command() {
	case 'L':
		for _, s := range engine.OthelloSquares(a.Legal()) {
			x, y := centre(s)
			c.printf(`<circle class="legal" cx="%d" cy="%d" r="9" fill="#ffd23f" stroke="#000" stroke-width="2"/>`, x, y)
		}
	case 'M':
		x, y := centre(a.Move())
		c.printf(`<circle class="last" cx="%d" cy="%d" r="9" fill="%s"/>`, x, y, lastColour)
	}
	b, w := pos.Count()
	first := fmt.Sprintf("Black %d  White %d", b, w)
	second := pos.Side.String() + " to move"
	switch a.Command() {
	case 'L':
		n := len(engine.OthelloSquares(a.Legal()))
		second = fmt.Sprintf("%s to move · %d legal moves", a.Player(), n)
	case 'M':
		second = fmt.Sprintf("%s played (%d,%d) · %s to move", a.Player(), a.Move()/8+1, a.Move()%8+1, pos.Side)
	}
	c.caption(first, second)
}

// captureWindow draws the part of a capture board around its last moves, never the
// whole of a large board.
func (c *canvas) captureWindow(w engine.CaptureWindow, size int) {
	cols, rows := w.W, w.H
	width, height := 2*margin+(cols-1)*cell, 2*margin+(rows-1)*cell
	c.width, c.height = width, height
	c.printf(`<rect class="board" x="0" y="0" width="%d" height="%d" fill="%s"/>`, width, height, woodColour)
	// Lines run to the picture's edge where the board goes on beyond the window.
	edge := func(atEdge bool, v, out int) int {
		if atEdge {
			return v
		}
		return out
	}
	x0 := edge(w.X == 0, margin, 0)
	x1 := edge(w.X+cols == size, width-margin, width)
	y0 := edge(w.Y == 0, margin, 0)
	y1 := edge(w.Y+rows == size, height-margin, height)
	for i := 0; i < rows; i++ {
		o := margin + i*cell
		c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`, x0, o, x1, o, lineColour)
	}
	for i := 0; i < cols; i++ {
		o := margin + i*cell
		c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`, o, y0, o, y1, lineColour)
	}
	for i, s := range w.Stones {
		if s != engine.PointEmpty {
			c.stone(margin+(i%cols)*cell, margin+(i/cols)*cell, s == engine.PointWhite)
		}
	}
	// One number per point: the newest move played there. Numbers of earlier moves on
	// the same point (a capture game replays points) would be drawn over each other.
	newest := map[int]int{}
	for k, m := range w.Last {
		x, y := m.X-w.X, m.Y-w.Y
		if x < 0 || x >= cols || y < 0 || y >= rows {
			continue
		}
		newest[y*cols+x] = k
	}
	for k, m := range w.Last {
		x, y := m.X-w.X, m.Y-w.Y
		i := y*cols + x
		if at, ok := newest[i]; !ok || at != k {
			continue
		}
		cx, cy := margin+x*cell, margin+y*cell
		// The number takes the colour that reads on what the point shows now: white on a
		// black stone, black on a white stone, and black on the wood where the move's
		// stone was captured, which a dashed ring marks.
		fill := blackColour
		switch w.Stones[i] {
		case engine.PointBlack:
			fill = whiteColour
		case engine.PointEmpty:
			c.printf(`<circle class="captured" cx="%d" cy="%d" r="17" fill="none" stroke="%s" stroke-width="3" stroke-dasharray="6 4"/>`,
				cx, cy, blackColour)
		}
		cls := "moveno"
		if k == len(w.Last)-1 {
			cls = "last moveno"
			c.printf(`<circle class="lastring" cx="%d" cy="%d" r="20" fill="none" stroke="%s" stroke-width="4"/>`, cx, cy, lastColour)
		}
		c.printf(`<text class="%s" x="%d" y="%d" font-size="22" font-family="sans-serif" font-weight="bold" text-anchor="middle" fill="%s">%d</text>`,
			cls, cx, cy+8, fill, w.First+k)
	}
}

// caption sets the two lines of text under the board: the score, large, and details.
func (c *canvas) caption(first, second string) { c.lines = [2]string{first, second} }

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// finish wraps the elements in the document, on a dark ground so the captions show.
func (c *canvas) finish() []byte {
	var b bytes.Buffer
	width := max(c.width, minWidth)
	// The caption grows with the picture, so that it reads as well as the board when
	// the page scales a 19x19 board down to a tile.
	big, small := max(34, width/14), max(24, width/24)
	height := c.height + big + small + 30
	// data-board is the board's own box (a viewBox): the page shows the board alone and
	// writes the caption's lines as text of its own size, which a scaled picture's
	// caption is not (8 px on a tile of twelve).
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" data-board="%d 0 %d %d">`,
		width, height, width, height, (width-c.width)/2, c.width, c.height)
	fmt.Fprintf(&b, `<rect class="ground" x="0" y="0" width="%d" height="%d" fill="#222"/>`, width, height)
	fmt.Fprintf(&b, `<g transform="translate(%d,0)">`, (width-c.width)/2)
	b.Write(c.body.Bytes())
	b.WriteString(`</g>`)
	fmt.Fprintf(&b, `<text class="score" x="%d" y="%d" font-size="%d" font-family="sans-serif" font-weight="bold" text-anchor="middle" fill="#fff">%s</text>`,
		width/2, c.height+big+6, big, escape(c.lines[0]))
	fmt.Fprintf(&b, `<text class="detail" x="%d" y="%d" font-size="%d" font-family="sans-serif" text-anchor="middle" fill="#ddd">%s</text>`,
		width/2, c.height+big+small+18, small, escape(c.lines[1]))
	b.WriteString("</svg>\n")
	return b.Bytes()
}
