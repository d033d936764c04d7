package browsertest

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Viewport makes the tab's viewport width x height CSS px, as a phone's (390x844)
// or a tablet's (768x1024) is, and a touch screen's when mobile: the page's own
// layout then sees that screen. Screenshots are taken at that size.
func (b *Browser) Viewport(t testing.TB, width, height int, mobile bool) {
	t.Helper()
	opts := []chromedp.EmulateViewportOption{}
	if height > width {
		opts = append(opts, chromedp.EmulatePortrait)
	}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	b.Do(t, 30*time.Second, chromedp.EmulateViewport(int64(width), int64(height), opts...))
	b.width, b.height = width, height
}
