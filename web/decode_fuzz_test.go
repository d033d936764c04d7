package web

import (
	"encoding/xml"
	"testing"
)

// FuzzDecodeBoard: whatever a bucket value holds, decoding it never panics, and a
// picture it draws is well-formed XML.
func FuzzDecodeBoard(f *testing.F) {
	f.Fuzz(func(t *testing.T, value []byte) {
		b, err := decodeBoard("hall", value)
		if err != nil {
			return
		}
		if b.Port != "hall" {
			t.Fatalf("port %q", b.Port)
		}
		if b.SVG != "" {
			if err := xml.Unmarshal([]byte(b.SVG), new(struct{})); err != nil {
				t.Fatalf("the picture is not XML: %v", err)
			}
		}
	})
}
