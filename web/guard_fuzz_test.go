package web

import (
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// FuzzGuardInput: what the guard reads from its settings and from a request's
// X-Forwarded-For never panics, and what it takes is what it promises: an origin
// that is written into the policy changes nothing else in it and reads back as
// itself; a viewer's address is an address, counted as one.
func FuzzGuardInput(f *testing.F) {
	f.Add("https://club.example.org http://localhost:8000", "127.0.0.0/8 ::1", "203.0.113.7, 127.0.0.1")
	f.Add("HTTPS://Club.Example.org:443,http://[::1]:8080", "10.0.0.5", "2001:db8::1")
	f.Add("https://a.example/path https://*.example", "", "not an address, 198.51.100.2")
	f.Add("https://a.example;script-src *", "10.0.0.0/8 fe80::/10", ",,")
	f.Add("", "fe80::1%eth0 ::1", "fe80::2%eth0, ::1%lo")
	f.Add("", "fe80::/10", "::ffff:203.0.113.9%x")
	f.Fuzz(func(t *testing.T, origins, proxies, xff string) {
		if got, err := ParseOrigins(origins); err == nil {
			for _, o := range got {
				if strings.ContainsAny(o, "; '\"*,\t\n") {
					t.Fatalf("ParseOrigins(%q) took %q, which would change the policy", origins, o)
				}
				if again, err := ParseOrigins(o); err != nil || !slices.Equal(again, []string{o}) {
					t.Fatalf("ParseOrigins(%q) took %q, which reads back as %q, %v", origins, o, again, err)
				}
			}
		}
		trusted, err := ParseProxies(proxies)
		if err != nil {
			return
		}
		v := newViewers(Guard{}, trusted, zerolog.Nop())
		for _, peer := range []string{"127.0.0.1:5000", "[::1]:5000", "192.0.2.9:5000", "[fe80::1]:5000"} {
			r := &http.Request{RemoteAddr: peer, Header: http.Header{"X-Forwarded-For": {xff}}}
			p := v.client(r)
			if !p.IsValid() || p.Addr() != p.Masked().Addr() || p.Addr().Zone() != "" {
				t.Fatalf("peer %s, proxies %q, X-Forwarded-For %q: the viewer is %v, not an address counted as one", peer, proxies, xff, p)
			}
			// The same peer named with a zone (as the kernel names a link's) is the
			// same viewer.
			if host, port, _ := net.SplitHostPort(peer); strings.Contains(host, ":") {
				zr := &http.Request{RemoteAddr: net.JoinHostPort(host+"%eth0", port), Header: r.Header}
				if zp := v.client(zr); zp != p {
					t.Fatalf("peer %s, proxies %q, X-Forwarded-For %q: counted as %v, but as %v with a zone", peer, proxies, xff, p, zp)
				}
			}
		}
	})
}
