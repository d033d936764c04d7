// Package browsertest drives Debian's headless Chromium from tests through chromedp:
// it starts the browser with the flags this machine needs, keeps the list of every
// host the page requested, and checks screenshots.
package browsertest

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/goclub/scoreboard/internal/proctest"
)

// Width and Height are the viewport: a 1080p TV.
const (
	Width  = 1920
	Height = 1080
)

// chromium finds the browser: $CHROMIUM, or Debian's chromium.
func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser is a headless Chromium tab and the hosts it has requested.
type Browser struct {
	Ctx context.Context

	mu    sync.Mutex
	hosts map[string]int
	urls  []string
	// width and height are the viewport's, Width x Height unless Viewport changed it.
	width, height int
}

// New starts Chromium for the test and returns its tab. Without Chromium the test is
// skipped, except in CI (CI=true), where it fails: .ci/run installs the browser.
func New(t testing.TB) *Browser {
	t.Helper()
	proctest.SkipShort(t, "a browser test: it drives Chromium")
	exe := chromium()
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (apt-get install chromium): the browser tests must run in CI")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(Width, Height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	b := &Browser{Ctx: ctx, hosts: map[string]int{}, width: Width, height: Height}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first call starts the browser: no timeout on its context, or the timeout
	// would end the browser with it; a browser that never starts is given up on here.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx, chromedp.EmulateViewport(Width, Height)) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start chromium %s: %v", exe, err)
		}
	case <-time.After(2 * time.Minute):
		cancelTab()
		cancelAlloc()
		t.Fatalf("chromium %s did not start within 2 minutes", exe)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.urls = append(b.urls, e.Request.URL)
			if u, err := url.Parse(e.Request.URL); err == nil {
				b.hosts[u.Scheme+"://"+u.Host]++
			}
		}
	})
	if err != nil {
		t.Fatalf("chromium: listen to the network: %v", err)
	}
	return b
}

// Do runs chromedp actions with a deadline.
func (b *Browser) Do(t testing.TB, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t testing.TB, b *Browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// Hosts returns every scheme://host the page requested, sorted, with the URLs.
func (b *Browser) Hosts() (hosts []string, urls []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for h := range b.hosts {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return hosts, append([]string(nil), b.urls...)
}

// Screenshot takes a PNG of the viewport, writes it to path and checks it is not
// blank: many colours, and most of it not one colour.
func (b *Browser) Screenshot(t testing.TB, path string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("browser: screenshot: %v", err)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	colours, top := Colours(img)
	bounds := img.Bounds()
	total := bounds.Dx() * bounds.Dy()
	if bounds.Dx() != b.width || bounds.Dy() != b.height {
		t.Errorf("screenshot is %dx%d, want %dx%d", bounds.Dx(), bounds.Dy(), b.width, b.height)
	}
	if colours < 16 || top > total*95/100 {
		t.Errorf("screenshot %s looks blank: %d colours, the commonest covers %d of %d pixels", path, colours, top, total)
	}
	return buf
}

// Colours counts an image's distinct colours and the pixels of the commonest.
func Colours(img image.Image) (n, top int) {
	count := map[[4]uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			count[[4]uint32{r, g, bl, a}]++
		}
	}
	for _, c := range count {
		top = max(top, c)
	}
	return len(count), top * 4 // every other pixel each way was sampled
}
