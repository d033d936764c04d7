package web_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/promtest"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

// lockedBuffer is a log the test reads while the page writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveGuarded serves a page with guard g on 127.0.0.1 until the test ends, with
// g.Metrics' /metrics beside it when set, as run serves it; it returns its base
// URL and its bus.
func serveGuarded(t *testing.T, g web.Guard, log zerolog.Logger) (string, *bustest.Bus) {
	t.Helper()
	ns := bustest.Start(t, bustest.Options{JetStream: true})
	base, _ := serveTestPage(t, ns.Tool(), pageOpts{guard: &g, log: &log})
	return base, ns
}

// openStream opens /api/events from the local address from (127.0.0.x), with
// X-Forwarded-For xff when not empty. A 200's body is left open: the stream
// holds its slot until the test closes it.
func openStream(t *testing.T, base, from, xff string) *http.Response {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	// The headers are waited for within a bound; the stream's body, as long as
	// the test holds it.
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true,
		ResponseHeaderTimeout: 20 * time.Second}}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/events", nil)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET /api/events from %s: %v", from, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
	} else {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp
}

func bodyOf(resp *http.Response) string {
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestViewerBounds: over HTTP, from two loopback addresses, the stream past the
// bound per address is answered 429 while another address is still served; past
// the bound in all, 503; each with Retry-After and a line naming the setting.
// Closing a stream frees its slot. The refusals are counted in the metrics, and
// logged once, not once each.
func TestViewerBounds(t *testing.T) {
	logs := &lockedBuffer{}
	met := metrics.New()
	base, _ := serveGuarded(t, web.Guard{MaxViewers: 5, MaxViewersPerAddress: 3, Metrics: met},
		zerolog.New(logs))

	var held []*http.Response
	for i := range 3 {
		resp := openStream(t, base, "127.0.0.1", "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d from 127.0.0.1: %d %s, want 200 (bound per address 3)", i+1, resp.StatusCode, bodyOf(resp))
		}
		held = append(held, resp)
	}
	for i := range 2 {
		resp := openStream(t, base, "127.0.0.1", "")
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("refusal %d: stream 4 from 127.0.0.1: %d, want 429", i+1, resp.StatusCode)
		}
		body := bodyOf(resp)
		if resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "at most 3 (http.max_viewers_per_address)") ||
			strings.Count(strings.TrimSpace(body), "\n") != 0 {
			t.Errorf("429: Retry-After %q, body %q: want a Retry-After and one line naming the bound and http.max_viewers_per_address",
				resp.Header.Get("Retry-After"), body)
		}
	}
	// Another address is still served, up to the bound in all.
	for i := range 2 {
		resp := openStream(t, base, "127.0.0.2", "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d from 127.0.0.2 with 3 from 127.0.0.1: %d %s, want 200", i+1, resp.StatusCode, bodyOf(resp))
		}
		held = append(held, resp)
	}
	resp := openStream(t, base, "127.0.0.2", "")
	body := bodyOf(resp)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, "5 (http.max_viewers)") {
		t.Fatalf("the 6th stream in all: %d, Retry-After %q, %q; want 503 with Retry-After, naming 5 and http.max_viewers",
			resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	// The counts: 5 streams held, 2 refused per address, 1 in all.
	h := httptest.NewServer(met.Handler())
	defer h.Close()
	fams, scrape := promtest.Scrape(t, h.URL)
	for _, c := range []struct {
		name, bound string
		want        float64
	}{{"scoreboard_page_viewers", "", 5}, {"scoreboard_page_viewers_refused_total", "total", 1},
		{"scoreboard_page_viewers_refused_total", "address", 2}} {
		labels := map[string]string{}
		if c.bound != "" {
			labels["bound"] = c.bound
		}
		if n, _ := promtest.Value(fams, c.name, labels); n != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, labels, n, c.want)
		}
	}

	// A stream closed frees its slot: 127.0.0.1 is served again.
	held[0].Body.Close()
	bustest.Wait(t, "a slot freed by a closed stream", func() (bool, string) {
		resp := openStream(t, base, "127.0.0.1", "")
		if resp.StatusCode == http.StatusOK {
			return true, ""
		}
		return false, fmt.Sprintf("last answer %d %s", resp.StatusCode, bodyOf(resp))
	})

	promtest.Promtool(t, scrape, "check", "metrics")
	// Logged once a minute per bound, not per refusal.
	if n := strings.Count(logs.String(), "live viewers refused"); n != 2 {
		t.Errorf("%d log lines of refusals, want 2 (one per bound, at most once a minute):\n%s", n, logs.String())
	}
}

// TestViewerBoundsBehindProxy: behind a trusted proxy the viewer is the last
// address of X-Forwarded-For that is no proxy's, so two viewers behind one proxy
// are two addresses, and one cannot pass for another by a header of its own;
// from a peer that is no trusted proxy the header is not read.
func TestViewerBoundsBehindProxy(t *testing.T) {
	base, _ := serveGuarded(t, web.Guard{MaxViewers: 100, MaxViewersPerAddress: 1, TrustedProxies: "127.0.0.1"}, zerolog.Nop())
	for _, c := range []struct {
		from, xff string
		want      int
	}{
		{"127.0.0.1", "203.0.113.7", http.StatusOK},
		{"127.0.0.1", "203.0.113.7", http.StatusTooManyRequests},
		{"127.0.0.1", "203.0.113.8", http.StatusOK},
		// The viewer wrote 203.0.113.8 itself; the proxy appended what it saw.
		{"127.0.0.1", "203.0.113.8, 203.0.113.9", http.StatusOK},
		// A proxy in front of the proxy: trusted hops are skipped.
		{"127.0.0.1", "203.0.113.7, 127.0.0.1", http.StatusTooManyRequests},
		// IPv6: one /64 is one viewer.
		{"127.0.0.1", "2001:db8:1:2::a", http.StatusOK},
		{"127.0.0.1", "2001:db8:1:2::b", http.StatusTooManyRequests},
		// 127.0.0.2 is no trusted proxy: it is the viewer, whatever it says.
		{"127.0.0.2", "203.0.113.10", http.StatusOK},
		{"127.0.0.2", "203.0.113.11", http.StatusTooManyRequests},
	} {
		resp := openStream(t, base, c.from, c.xff)
		if resp.StatusCode != c.want {
			t.Errorf("from %s, X-Forwarded-For %q: %d %s, want %d", c.from, c.xff, resp.StatusCode, bodyOf(resp), c.want)
		}
	}
}

// TestSecurityHeaders: every answer has the policy, nosniff and the referrer
// policy; only /embed/ may be framed by the embed origins.
func TestSecurityHeaders(t *testing.T) {
	base, _ := serveGuarded(t, web.Guard{EmbedOrigins: "https://club.example.org, http://localhost:8000"}, zerolog.Nop())
	want := []string{"default-src 'self'", "script-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'none'"}
	for _, path := range []string{"/", "/static/app.js", "/api/boards", "/boards/hall", "/embed/hall"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		for _, w := range want {
			if !strings.Contains(csp, w) {
				t.Errorf("%s: policy %q lacks %q", path, csp, w)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: policy %q allows inline script", path, csp)
		}
		ancestors := "frame-ancestors 'self'"
		if strings.HasPrefix(path, "/embed/") {
			ancestors = "frame-ancestors 'self' https://club.example.org http://localhost:8000"
		}
		if !strings.HasSuffix(csp, ancestors) || strings.Count(csp, "frame-ancestors") != 1 {
			t.Errorf("%s: policy %q, want it to end with %q", path, csp, ancestors)
		}
		if v := resp.Header.Get("X-Content-Type-Options"); v != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", path, v)
		}
		if v := resp.Header.Get("Referrer-Policy"); v != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q", path, v)
		}
	}
}

// TestParseOrigins: origins are taken as the browser sends them; anything else,
// which could change the policy it is written into, is refused with the form
// wanted.
func TestParseOrigins(t *testing.T) {
	got, err := web.ParseOrigins(" HTTPS://Club.Example.org:443,http://localhost:8000 https://[2001:db8::1]:8443\thttp://10.0.0.2")
	want := "https://club.example.org http://localhost:8000 https://[2001:db8::1]:8443 http://10.0.0.2"
	if err != nil || strings.Join(got, " ") != want {
		t.Errorf("ParseOrigins: %q, %v; want %q", got, err, want)
	}
	if got, err := web.ParseOrigins(""); err != nil || len(got) != 0 {
		t.Errorf("ParseOrigins(\"\"): %q, %v; want none", got, err)
	}
	for _, bad := range []string{"club.example.org", "https://club.example.org/", "https://club.example.org/embed",
		"ftp://club.example.org", "https://*.example.org", "https://a;script-src", "https://user@club.example.org",
		"https://club.example.org?x", "https://club.example.org:0", "https://club.example.org:99999", "'self'", "*"} {
		_, err := web.ParseOrigins(bad)
		if err == nil || !strings.Contains(err.Error(), "scheme://host[:port]") {
			t.Errorf("ParseOrigins(%q): %v, want an error naming the form scheme://host[:port]", bad, err)
		}
	}
}
