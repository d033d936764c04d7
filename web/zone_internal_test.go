package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"
)

// TestZonedAddressCounted: an IPv6 address with a zone (fe80::1%eth0, ::1%lo), as
// a peer or in X-Forwarded-For, counts as the address without it: the bound per
// address holds whatever zone a client writes, and a trusted proxy that the kernel
// names with a zone (a proxy on ::1 seen as ::1%lo) is still trusted, so its
// viewers are told apart and not all refused as one.
func TestZonedAddressCounted(t *testing.T) {
	proxies, err := ParseProxies(DefaultTrustedProxies + " fe80::/10")
	if err != nil {
		t.Fatal(err)
	}
	v := newViewers(Guard{MaxViewersPerAddress: 3}, proxies, zerolog.Nop())
	req := func(peer, xff string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/api/events", nil)
		r.RemoteAddr = peer
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		return r
	}
	for _, c := range []struct{ peer, xff, want string }{
		{"[fe80::1%eth0]:4000", "2001:db8::7%x", "2001:db8::/64"},
		{"[::1%lo]:4000", "203.0.113.1", "203.0.113.1/32"},
		{"[fe80::9%wlan0]:4000", "", "fe80::/64"},
		{"127.0.0.1:4000", "::ffff:203.0.113.2%x", "203.0.113.2/32"},
		{"[::1]:4000", "fe80::1%eth0, fe80::1%eth1", "fe80::/64"},
	} {
		if got := v.client(req(c.peer, c.xff)); got.String() != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: counted as %v, want %s", c.peer, c.xff, got, c.want)
		}
	}
	// Past the bound, whatever the zone: 3 served, the other 5 refused.
	served := 0
	for i := range 8 {
		if bound, _ := v.take(v.client(req(fmt.Sprintf("[fe80::1%%if%d]:4000", i), ""))); bound < 0 {
			served++
		}
	}
	if served != 3 {
		t.Errorf("8 streams from fe80::1 under 8 zones: %d served, want 3 (max_viewers_per_address)", served)
	}
}
