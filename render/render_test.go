package render_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/render"
)

// svgCounts parses an SVG document with encoding/xml and counts its elements by class.
func svgCounts(t testing.TB, doc []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	d := xml.NewDecoder(bytes.NewReader(doc))
	root := true
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("SVG does not parse: %v\n%s", err, doc)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root {
			if se.Name.Local != "svg" || se.Name.Space != "http://www.w3.org/2000/svg" {
				t.Fatalf("root element %v, want svg", se.Name)
			}
			root = false
		}
		for _, a := range se.Attr {
			if a.Name.Local == "class" {
				counts[a.Value]++
			}
		}
	}
	return counts
}

// TestSVGGoBoards: every sample board of goscore, territory and replay draws as many
// stones as the position holds, and as many territory marks as the score's territory.
func TestSVGGoBoards(t *testing.T) {
	for _, c := range []struct{ problem, file string }{
		{"goscore", "goscore.in"}, {"territory", "territory.in"}, {"replay", "replay.in"},
	} {
		for i, unit := range samples.Units(t, c.problem, c.file) {
			name := fmt.Sprintf("%s unit %d", c.file, i+1)
			ans, err := render.Solve(c.problem, unit)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			doc, err := render.Draw(ans, unit)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			n := svgCounts(t, doc)
			var score struct{ Black, White int }
			js, _ := json.Marshal(ans)
			_ = json.Unmarshal(js, &score)
			// The territory part of the score: what is left once the stones (goscore)
			// or the prisoners (replay) are taken out.
			terrB, terrW := score.Black, score.White
			stones := 0
			switch a := ans.(type) {
			case engine.GoscoreAnswer:
				b, w, _, _ := a.Position().Count()
				terrB, terrW, stones = terrB-b, terrW-w, b+w
			case engine.ReplayAnswer:
				cb, cw := a.Captures()
				b, w, _, _ := a.Position().Count()
				terrB, terrW, stones = terrB-cb, terrW-cw, b+w
				if n["last"] != 1 {
					t.Errorf("%s: %d last-move marks, want 1", name, n["last"])
				}
			case engine.TerritoryAnswer:
				b, w, _, _ := a.Position().Count()
				stones = b + w
			}
			if got := n["stone black"] + n["stone white"]; got != stones {
				t.Errorf("%s: %d stones drawn, the position has %d", name, got, stones)
			}
			if n["terr black"] != terrB || n["terr white"] != terrW {
				t.Errorf("%s: territory marks %d black %d white, the score's territory is %d %d",
					name, n["terr black"], n["terr white"], terrB, terrW)
			}
			if c.problem == "goscore" && n["hoshi"] != 9 {
				t.Errorf("%s: %d hoshi points on 19x19, want 9", name, n["hoshi"])
			}
			if !bytes.Contains(doc, []byte(fmt.Sprint(score.Black))) {
				t.Errorf("%s: the picture does not show the score %d", name, score.Black)
			}
		}
	}
}

// TestSVGGoscoreKnown: a hand-made board whose counts are known.
func TestSVGGoscoreKnown(t *testing.T) {
	rows := make([]string, 19)
	for r := range rows {
		rows[r] = strings.Repeat(" +", 19)
	}
	// A black wall on column 3 (index 2), a white one on column 5 (index 4).
	for r := range rows {
		b := []byte(rows[r])
		b[2*2+1], b[2*4+1] = '@', 'O'
		rows[r] = string(b)
	}
	unit := []byte("\n" + strings.Join(rows, "\n") + "\n")
	doc, err := render.SVG("goscore", unit)
	if err != nil {
		t.Fatal(err)
	}
	n := svgCounts(t, doc)
	// Black owns columns 1-2 (38 points), White columns 6-19 (266); column 4 is dame.
	if n["stone black"] != 19 || n["stone white"] != 19 || n["terr black"] != 38 || n["terr white"] != 266 {
		t.Errorf("counts %v", n)
	}
	if !bytes.Contains(doc, []byte("Black 57  White 285")) {
		t.Errorf("score caption missing:\n%s", doc)
	}
}

func TestSVGOthello(t *testing.T) {
	units := samples.Units(t, "othello", "othello.in")
	seen := map[byte]bool{}
	for i, unit := range units {
		ans, err := render.Solve("othello", unit)
		if err != nil {
			t.Fatal(err)
		}
		a := ans.(engine.OthelloAnswer)
		doc, err := render.Draw(ans, unit)
		if err != nil {
			t.Fatal(err)
		}
		n := svgCounts(t, doc)
		pos := a.Position()
		b, w := pos.Count()
		if n["stone black"] != b || n["stone white"] != w {
			t.Errorf("unit %d: disks %d %d drawn, position has %d %d", i+1, n["stone black"], n["stone white"], b, w)
		}
		switch a.Command() {
		case 'L':
			if want := len(engine.OthelloSquares(a.Legal())); n["legal"] != want {
				t.Errorf("unit %d: %d legal marks, want %d", i+1, n["legal"], want)
			}
		case 'M':
			if n["last"] != 1 {
				t.Errorf("unit %d: %d last-move marks", i+1, n["last"])
			}
		}
		if !bytes.Contains(doc, []byte("to move")) {
			t.Errorf("unit %d: no side to move", i+1)
		}
		seen[a.Command()] = true
	}
	if !seen['L'] || !seen['M'] || !seen['Q'] {
		t.Errorf("the sample has commands %v, want L, M and Q", seen)
	}
}

// TestSVGCaptureHuge: a board of side 2^31-1 draws a window of at most 19x19 points.
func TestSVGCaptureHuge(t *testing.T) {
	for i, unit := range append(samples.Units(t, "capture", "capture.in"),
		[]byte("2147483647 5\n0 1\n0 0\n1 0\n2147483646 2147483646\n2147483645 2147483646\n")) {
		doc, err := render.SVG("capture", unit)
		if err != nil {
			t.Fatal(err)
		}
		n := svgCounts(t, doc)
		g, _ := engine.CaptureParse(unit)
		w, _ := g.Window()
		if w.W > 19 || w.H > 19 || len(doc) > 64<<10 {
			t.Errorf("unit %d: window %dx%d, %d bytes", i+1, w.W, w.H, len(doc))
		}
		stones := 0
		for _, s := range w.Stones {
			if s != engine.PointEmpty {
				stones++
			}
		}
		if n["stone black"]+n["stone white"] != stones || n["last moveno"] != 1 {
			t.Errorf("unit %d: counts %v, window stones %d", i+1, n, stones)
		}
		if !bytes.Contains(doc, []byte("captured")) {
			t.Errorf("unit %d: no captured count", i+1)
		}
	}
}

// TestSVGCaptureNumbersReadable: the capture sample replays a point three times and
// captures five stones. Each point carries at most one number (the newest move's), in
// a colour that reads on what the point shows now, and every numbered move whose stone
// is gone is marked captured.
func TestSVGCaptureNumbersReadable(t *testing.T) {
	unit := samples.Units(t, "capture", "capture.in")[0]
	doc, err := render.SVG("capture", unit)
	if err != nil {
		t.Fatal(err)
	}
	type mark struct {
		class, fill string
		x, y        string
	}
	var marks []mark
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		var m mark
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "class":
				m.class = a.Value
			case "fill":
				m.fill = a.Value
			case "x", "cx":
				m.x = a.Value
			case "y", "cy":
				m.y = a.Value
			}
		}
		marks = append(marks, m)
	}
	at := map[string][]mark{} // point (x) -> what is drawn there, by class
	numbers := map[string]int{}
	for _, m := range marks {
		if strings.Contains(m.class, "moveno") || strings.HasPrefix(m.class, "stone") || m.class == "captured" {
			at[m.x] = append(at[m.x], m)
		}
		if strings.Contains(m.class, "moveno") {
			numbers[m.x+","+m.y]++
		}
	}
	n := svgCounts(t, doc)
	if n["moveno"]+n["last moveno"] != 4 || n["captured"] != 3 {
		t.Errorf("numbers %d, captured marks %d; want 4 numbers (one per point played, moves 1, 3, 5, 6) and 3 captured (1, 3, 5): %v",
			n["moveno"]+n["last moveno"], n["captured"], n)
	}
	for p, k := range numbers {
		if k > 1 {
			t.Errorf("%d numbers drawn over each other at %s", k, p)
		}
	}
	for _, m := range marks {
		if strings.Contains(m.class, "moveno") && m.fill != "#111" && m.fill != "#f8f8f8" {
			t.Errorf("number at %s,%s drawn in %s: want black or white on what it stands on", m.x, m.y, m.fill)
		}
	}
	if !bytes.Contains(doc, []byte(`data-board="`)) {
		t.Errorf("no data-board box for the page to show the board alone")
	}
}
