package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/web"
)

// TestFramedOnlyWhereAllowed: in Chromium, a page of another origin frames the
// page's /embed/<port> when embed_origins names that origin, and cannot frame
// the page itself (frame-ancestors 'self'), nor /embed/ for an origin not named.
func TestFramedOnlyWhereAllowed(t *testing.T) {
	b := browsertest.New(t)
	// Two sites of other origins (their ports differ from the page's): one named
	// in embed_origins, one not.
	named, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serveGuarded(t, web.Guard{EmbedOrigins: "http://" + named.Addr().String()}, zerolog.Nop())
	site := func(ln net.Listener) {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><iframe name="embed" src="%s/embed/hall"></iframe><iframe name="page" src="%s/"></iframe>`, base, base)
		})}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
	site(named)
	site(other)

	// frames opens url and returns each frame's committed URL: the page's, or
	// chrome-error://... where the browser refused to frame it.
	frames := func(url string) map[string]string {
		b.Do(t, 30*time.Second, chromedp.Navigate(url))
		got := map[string]string{}
		bustest.Wait(t, "both frames committed", func() (bool, string) {
			ctx, cancel := context.WithTimeout(b.Ctx, 10*time.Second)
			defer cancel()
			tree, err := chromedp.Call(ctx, page.GetFrameTree, struct{}{})
			if err != nil {
				return false, err.Error()
			}
			clear(got)
			for _, c := range tree.FrameTree.ChildFrames {
				if u := c.Frame.URL; u != "" && u != "about:blank" {
					got[c.Frame.Name] = u
				}
			}
			return len(got) == 2, fmt.Sprintf("frames %v", got)
		})
		return got
	}
	refused := func(u string) bool { return strings.HasPrefix(u, "chrome-error:") }
	got := frames("http://" + named.Addr().String() + "/")
	if refused(got["embed"]) || !refused(got["page"]) {
		t.Errorf("a site named in embed_origins: frames %v; want /embed/hall framed and / refused", got)
	}
	got = frames("http://" + other.Addr().String() + "/")
	if !refused(got["embed"]) || !refused(got["page"]) {
		t.Errorf("a site not named: frames %v; want both refused", got)
	}
}
