package web_test

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/metrics"
	"github.com/goclub/scoreboard/web"
)

// caddyfiles are the Caddyfiles of docs/page.md, in their order.
func caddyfiles(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "page.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```caddyfile\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		out = append(out, m[1])
	}
	if len(out) != 2 {
		t.Fatalf("docs/page.md has %d Caddyfiles, want 2 (a club's, a hub's)", len(out))
	}
	return out
}

// TestCaddyfiles: docs/page.md's Caddyfiles are valid to caddy, and the club's,
// in front of a real page (its site served on a loopback port in plain HTTP, no
// certificate to get), carries the live feed at once, the page's headers, no
// /metrics, and the bound per address as each viewer's own address (two loopback
// addresses through one proxy).
func TestCaddyfiles(t *testing.T) {
	proctest.SkipShort(t, "runs caddy")
	exe, err := exec.LookPath("caddy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("caddy is not installed (apt-get install caddy): docs/page.md's Caddyfiles must be checked in CI")
		}
		t.Skip("caddy is not installed (apt-get install caddy): docs/page.md's Caddyfiles are not checked")
	}
	// caddy keeps its state (and an autosave of its config) in the test's
	// directory, not the user's.
	dir := t.TempDir()
	for _, v := range []string{"HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"} {
		t.Setenv(v, dir)
	}
	files := caddyfiles(t)
	for i, cf := range files {
		path := filepath.Join(dir, "Caddyfile"+string(rune('1'+i)))
		if err := os.WriteFile(path, []byte(cf), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(exe, "validate", "--adapter", "caddyfile", "--config", path).CombinedOutput(); err != nil {
			t.Errorf("caddy validate of docs/page.md's Caddyfile %d: %v\n%s\n%s", i+1, err, out, cf)
		}
	}

	// The page, with /metrics beside it (the proxy must hide it) and a bound of one
	// stream per address.
	pageURL, _ := serveGuarded(t, web.Guard{MaxViewers: 100, MaxViewersPerAddress: 1, TrustedProxies: web.DefaultTrustedProxies,
		Metrics: metrics.New()}, zerolog.Nop())
	page := strings.TrimPrefix(pageURL, "http://")

	// The club's Caddyfile, its site on a loopback port in plain HTTP, its
	// upstream the page, caddy's admin endpoint off (tests run side by side).
	front := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	cf := strings.Replace(files[0], "scores.club.example.org {", "http://"+front+" {", 1)
	cf = strings.Replace(cf, "reverse_proxy 127.0.0.1:8080", "reverse_proxy "+page, 1)
	if cf == files[0] || !strings.Contains(cf, page) {
		t.Fatalf("the club's Caddyfile is not the one this test knows:\n%s", files[0])
	}
	path := filepath.Join(dir, "Caddyfile.run")
	if err := os.WriteFile(path, []byte("{\n\tadmin off\n}\n\n"+cf), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proctest.Start(t, exe, "run", "--adapter", "caddyfile", "--config", path)
	proctest.WaitTCP(t, front, 30*time.Second)
	base := "http://" + front

	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'self'") ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET / through caddy: %d, headers %v; want 200 with the page's policy and nosniff", resp.StatusCode, resp.Header)
	}
	if resp, err := http.Get(base + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics through caddy: %v %v, want 404", resp, err)
	} else {
		resp.Body.Close()
	}

	// The live feed: its first line comes through at once (not held in a buffer).
	first := openStream(t, base, "127.0.0.1", "")
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream through caddy: %d %s", first.StatusCode, bodyOf(first))
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(first.Body).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if !strings.HasPrefix(l, "retry:") {
			t.Errorf("the feed's first line through caddy: %q, want retry: ...", l)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the feed's first line did not come through caddy within 10s: buffered\n%s", p.Output())
	}
	// Through one proxy, 127.0.0.1 is bounded as itself and 127.0.0.2 is another viewer.
	if resp := openStream(t, base, "127.0.0.1", ""); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second stream from 127.0.0.1 through caddy: %d, want 429", resp.StatusCode)
	}
	if resp := openStream(t, base, "127.0.0.2", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("a stream from 127.0.0.2 through caddy while 127.0.0.1 holds one: %d %s, want 200 (its own address)", resp.StatusCode, bodyOf(resp))
	}
}
