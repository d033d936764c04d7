package web

import (
	"encoding/xml"
	"testing"
)

// FuzzDecodeBoard: whatever a bucket value holds, decoding it never panics, and a
// picture drawn from it is well-formed XML.
func FuzzDecodeBoard(f *testing.F) {
	f.Fuzz(func(t *testing.T, value []byte) {
		b, err := decodeBoard("hall", value)
		if err != nil {
			return
		}
		if b.Port != "hall" {
			t.Fatalf("port %q", b.Port)
		}
		// The picture is drawn when asked for: drawn here, as /pictures would.
		if b.unit != nil && b.Error == "" {
			p := &picture{port: b.Port, problem: b.Problem, seq: b.Seq, revision: 1, unit: b.unit}
			if svg, err := p.SVG(); err == nil {
				if err := xml.Unmarshal(svg, new(struct{})); err != nil {
					t.Fatalf("the picture is not XML: %v", err)
				}
			}
		}
	})
}
