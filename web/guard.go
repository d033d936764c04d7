package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/goclub/scoreboard/metrics"
)

// Guard is what a page that faces the internet alone enforces beyond its headers:
// who may frame its embed pages, and how many live streams it holds. Its zero value
// bounds nothing and lets only the page's own origin frame it.
type Guard struct {
	// Table is the settings' table, "http" (a club's page) or "league" (a hub's):
	// the answers and logs name the setting that changes a bound.
	Table string
	// EmbedOrigins is the embed_origins setting: the origins, besides the page's
	// own, that may frame /embed/<port>, separated by spaces or commas.
	EmbedOrigins string
	// MaxViewers bounds the live streams (/api/events) in all, and
	// MaxViewersPerAddress those of one client address; 0 is no bound.
	MaxViewers, MaxViewersPerAddress int
	// TrustedProxies is the trusted_proxies setting: the proxies' addresses or
	// networks whose X-Forwarded-For names the viewer (viewers.go).
	TrustedProxies string
	// Metrics, when not nil, counts the streams and the refusals.
	Metrics *metrics.Metrics
}

// WithGuard sets the page's guard; call it before Handler, once.
func (s *Server) WithGuard(g Guard) error {
	if g.Table == "" {
		g.Table = "http"
	}
	origins, err := ParseOrigins(g.EmbedOrigins)
	if err != nil {
		return fmt.Errorf("%s.embed_origins: %w", g.Table, err)
	}
	proxies, err := ParseProxies(g.TrustedProxies)
	if err != nil {
		return fmt.Errorf("%s.trusted_proxies: %w", g.Table, err)
	}
	s.viewers = newViewers(g, proxies, s.log)
	s.embedOrigins = origins
	return nil
}

// The page's policy: its own host for everything, no inline script, no plugin, no
// <base>, no form. It is the test of the "no internet" promise as much as a
// defence. frameAncestors follows it: the page alone may frame itself, but on
// /embed/<port>, where the embed origins may too.
const (
	policy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
		"object-src 'none'; base-uri 'none'; form-action 'none'"
	frameAncestors = "; frame-ancestors 'self'"
)

// guard sets the security headers on every answer.
func (s *Server) guard(h http.Handler) http.Handler {
	page := policy + frameAncestors
	embed := page
	if len(s.embedOrigins) > 0 {
		embed += " " + strings.Join(s.embedOrigins, " ")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		csp := page
		if strings.HasPrefix(r.URL.Path, "/embed/") {
			csp = embed
		}
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// The page links nowhere but to itself, and needs no referrer for that.
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// ParseOrigins reads an embed_origins setting: origins, scheme://host[:port],
// separated by spaces or commas; empty is none. Each is returned as the browser
// sends it (lowercase, no default port).
func ParseOrigins(s string) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		o, err := parseOrigin(f)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func parseOrigin(s string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%q is not an origin (%s): want scheme://host[:port], such as https://club.example.org or http://localhost:8000", s, why)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", bad("it does not parse")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", bad("want http or https")
	case u.Opaque != "" || u.Host == "":
		return "", bad("no host")
	case u.User != nil:
		return "", bad("a user is no part of an origin")
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.HasSuffix(s, "#"):
		return "", bad("an origin has no path, query or fragment")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if !validHost(host) {
		return "", bad("the host is no name or IP address")
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", bad("the port is not 1 to 65535")
		}
	}
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return scheme + "://" + host, nil
	}
	return scheme + "://" + host + ":" + port, nil
}

// validHost says whether h is a DNS name or an IP address: nothing that would
// change the policy it is written into (';', quotes, spaces, '*').
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if strings.Contains(h, ":") { // an IPv6 literal, unbracketed by Hostname
		for _, c := range h {
			if !(c == ':' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
				return false
			}
		}
	}
	return true
}
