package browsertest

import (
	"fmt"
	"testing"
	"time"
)

// Tile is what a test reads of a port's tile on the scoreboard page.
type Tile struct {
	Seq     uint64 `json:"seq"`
	Applied int64  `json:"applied"`
	Answer  string `json:"answer"`
	Stones  int    `json:"stones"`
	Terr    int    `json:"terr"`
	Pic     string `json:"pic"`
	State   string `json:"state"`
	Problem string `json:"problem"`
}

// ReadTile reads the port's tile; a zero Tile when the page has none.
func (b *Browser) ReadTile(t testing.TB, port string) Tile {
	return Eval[Tile](t, b, fmt.Sprintf(`(() => {
		const t = document.querySelector('[data-port=%q]');
		if (!t) return {};
		return {seq: +(t.dataset.seq || 0), applied: +(t.dataset.applied || 0),
			answer: t.querySelector('.answer').textContent,
			stones: t.querySelectorAll('.pic svg .stone').length,
			terr: t.querySelectorAll('.pic svg .terr').length,
			pic: t.querySelector('.pic').innerHTML,
			state: t.querySelector('.state').textContent,
			problem: t.querySelector('.problem').textContent};
	})()`, port))
}

// WaitTile polls the page until ok holds for the port's tile, failing after timeout
// with what the tile showed last.
func (b *Browser) WaitTile(t testing.TB, port string, timeout time.Duration, what string, ok func(Tile) bool) Tile {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v := b.ReadTile(t, port)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			v.Pic = fmt.Sprintf("(%d bytes)", len(v.Pic))
			t.Fatalf("tile %s: %s not seen within %v; the tile shows %+v", port, what, timeout, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitConn waits until the page's connection indicator says want ("live", or
// "reconnecting…").
func (b *Browser) WaitConn(t testing.TB, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := Eval[string](t, b, `document.getElementById("conn").textContent`)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's connection shows %q, want %q within 30s", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
