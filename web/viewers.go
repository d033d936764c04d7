package web

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/metrics"
)

// Defaults of the viewer bounds. A stream costs the page 21-23 KB of RSS
// (BENCHMARKS.md, "A thousand viewers"), so 2,000 fit a Pi. 50 from one address leave room
// for a venue's Wi-Fi behind one NAT address, and make an exhaustion of the total
// take 40 addresses.
const (
	DefaultMaxViewers           = 2000
	DefaultMaxViewersPerAddress = 50
	// DefaultTrustedProxies: a proxy on the page's own machine (caddy in front, as
	// docs/page.md sets it up) names the viewer in X-Forwarded-For.
	DefaultTrustedProxies = "127.0.0.0/8 ::1"
)

// refusedRetry is the Retry-After of a refused stream, in seconds.
const refusedRetry = "30"

// refusedLogEvery bounds the refusals' log lines: a crowd at the bound must not
// fill the journal.
const refusedLogEvery = time.Minute

// viewers bounds the live streams, in all and per client address.
type viewers struct {
	table        string
	max, perAddr int
	proxies      []netip.Prefix
	log          zerolog.Logger
	mu           sync.Mutex
	total        int
	by           map[netip.Prefix]int
	refused      [2]uint64    // by bound: total, address
	logged       [2]time.Time // when each bound's refusals were last logged
	refusedUnlog [2]uint64    // refusals since
	boundNames   [2]string
}

const (
	boundTotal = iota
	boundAddress
)

func newViewers(g Guard, proxies []netip.Prefix, log zerolog.Logger) *viewers {
	v := &viewers{table: g.Table, max: g.MaxViewers, perAddr: g.MaxViewersPerAddress, proxies: proxies, log: log,
		by: map[netip.Prefix]int{}, boundNames: [2]string{"total", "address"}}
	g.Metrics.Gauge("scoreboard_page_viewers", "Live event streams the page serves now (/api/events).", func() float64 {
		v.mu.Lock()
		defer v.mu.Unlock()
		return float64(v.total)
	})
	g.Metrics.Counters("scoreboard_page_viewers_refused_total",
		"Event streams refused at a bound: total (max_viewers, answered 503) or address (max_viewers_per_address, answered 429).",
		[]string{"bound"}, func() []metrics.Labeled {
			v.mu.Lock()
			defer v.mu.Unlock()
			return []metrics.Labeled{{Values: []string{"total"}, Value: float64(v.refused[boundTotal])},
				{Values: []string{"address"}, Value: float64(v.refused[boundAddress])}}
		})
	return v
}

// wrap holds a slot for each stream h serves, or refuses the stream when a
// bound is reached. A nil *viewers bounds nothing.
func (v *viewers) wrap(h http.Handler) http.Handler {
	if v == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := v.client(r)
		bound, n := v.take(key)
		switch bound {
		case boundTotal:
			w.Header().Set("Retry-After", refusedRetry)
			http.Error(w, fmt.Sprintf("the page serves its most live viewers, %d (%s.max_viewers): try again later; its owner raises %s.max_viewers",
				n, v.table, v.table), http.StatusServiceUnavailable)
			return
		case boundAddress:
			w.Header().Set("Retry-After", refusedRetry)
			http.Error(w, fmt.Sprintf("too many live streams from your address, at most %d (%s.max_viewers_per_address): close a tab of this page; its owner raises %s.max_viewers_per_address",
				n, v.table, v.table), http.StatusTooManyRequests)
			return
		}
		defer v.give(key)
		h.ServeHTTP(w, r)
	})
}

// take holds a slot for a stream of key; it returns -1, or the bound reached and
// its value.
func (v *viewers) take(key netip.Prefix) (bound, n int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case v.max > 0 && v.total >= v.max:
		bound, n = boundTotal, v.max
	case v.perAddr > 0 && key.IsValid() && v.by[key] >= v.perAddr:
		bound, n = boundAddress, v.perAddr
	default:
		v.total++
		if key.IsValid() {
			v.by[key]++
		}
		return -1, 0
	}
	v.refused[bound]++
	v.refusedUnlog[bound]++
	if now := time.Now(); now.Sub(v.logged[bound]) >= refusedLogEvery {
		setting := v.table + ".max_viewers"
		if bound == boundAddress {
			setting += "_per_address"
		}
		v.log.Warn().Str("bound", v.boundNames[bound]).Int(setting, n).Uint64("refused", v.refusedUnlog[bound]).
			Str("client", key.String()).
			Msgf("live viewers refused at the bound (%d since last said; logged at most once a minute): raise %s if they are welcome", v.refusedUnlog[bound], setting)
		v.logged[bound], v.refusedUnlog[bound] = now, 0
	}
	return bound, n
}

func (v *viewers) give(key netip.Prefix) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.total--
	if !key.IsValid() {
		return
	}
	if v.by[key]--; v.by[key] <= 0 {
		delete(v.by, key)
	}
}

// client is the viewer's address as the bound counts it: the peer's, or behind a
// trusted proxy the last address in X-Forwarded-For that is not a trusted proxy's
// (the one the proxy nearest the page saw; those before it are the client's say).
// An IPv6 address counts as its /64, which one home or phone holds whole.
func (v *viewers) client(r *http.Request) netip.Prefix {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	addr = plain(addr)
	if v.trusted(addr) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // a hop that is no address: trust nothing before it
			}
			addr = plain(a)
			if !v.trusted(addr) {
				break
			}
		}
	}
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, _ := addr.Prefix(bits)
	return p
}

// plain is an address as the bounds count it: without a zone (fe80::1%eth0 is
// fe80::1 to them, whatever zone a client writes or the kernel names; a prefix
// never contains a zoned address, so a proxy on ::1 seen as ::1%lo would not be
// trusted), and an IPv4 address mapped into IPv6 as itself.
func plain(a netip.Addr) netip.Addr { return a.WithZone("").Unmap() }

func (v *viewers) trusted(a netip.Addr) bool {
	for _, p := range v.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseProxies reads a trusted_proxies setting: addresses or networks (CIDR),
// separated by spaces or commas; empty is none.
func ParseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q: want an address or a network, such as 127.0.0.1, ::1 or 10.0.0.0/8", f)
		}
		out = append(out, netip.PrefixFrom(plain(a), plain(a).BitLen()))
	}
	return out, nil
}
