package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/certtest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// The league page with a certificate (league.http_tls_cert, league.http_tls_key):
// a real hub process serves the page and /metrics in HTTPS only. A browser that
// trusts the CA gets them; one that does not is refused by its own check; a
// request in clear gets neither.
func TestLeaguePageTLS(t *testing.T) {
	bin := proctest.Scoreboard(t)
	dir := t.TempDir()
	ca := certtest.NewCA(t, dir, "league-ca")
	pair := ca.Server("page", "127.0.0.1")
	httpPort := proctest.FreePort(t)
	conf := filepath.Join(dir, "hub.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(
		"[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"127.0.0.1:%d\"\nstate_dir = %q\n"+
			"http_tls_cert = %q\nhttp_tls_key = %q\n[[club]]\nname = \"north\"\ntoken = \"token-north\"\n",
		proctest.FreePort(t), proctest.FreePort(t), httpPort, filepath.Join(dir, "state"), pair.Cert, pair.Key)), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := proctest.Start(t, bin, "hub", "--config", conf, "--log-format", "json")
	hub.WaitOutput(fmt.Sprintf(`"url":"https://127.0.0.1:%d/"`, httpPort), 30*time.Second)

	caPEM, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	trusting := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	for path, want := range map[string]string{"/": "<html", "/metrics": "scoreboard_league_clubs_linked"} {
		url := fmt.Sprintf("https://127.0.0.1:%d%s", httpPort, path)
		resp, err := trusting.Get(url)
		if err != nil {
			t.Fatalf("GET %s, trusting the league's CA: %v", url, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %s, %d bytes; want 200 with %q", url, resp.Status, len(body), want)
		}
	}

	// The system's roots do not know the test's CA: the client refuses the page.
	url := fmt.Sprintf("https://127.0.0.1:%d/", httpPort)
	_, err = (&http.Client{Timeout: 30 * time.Second}).Get(url)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("GET %s with the system's roots: %v; want an unknown authority", url, err)
	}
	// In clear: no page.
	url = fmt.Sprintf("http://127.0.0.1:%d/", httpPort)
	if resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(body), "<html") {
			t.Errorf("GET %s in clear: %s, %q; want no page", url, resp.Status, body)
		}
	}
}
