package config

import (
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
)

// validate checks what can be checked before anything starts: each setting on its
// own (its check), then the settings that go together.
func (l *loader) validate() {
	for i := range l.c.Ports {
		if p := &l.c.Ports[i]; p.Name == "" {
			p.Name = daemon.DefaultName(p.Device)
		}
	}
	for _, s := range l.ss {
		if s.check == nil {
			continue
		}
		if s.port == nil {
			if l.failed[s.key] {
				continue
			}
			if msg := s.check(reflect.ValueOf(s.global(&l.c)).Elem().Interface()); msg != "" {
				l.fail(s.key, "%s", msg)
			}
			continue
		}
		for i := range l.c.Ports {
			if l.failed[portKey(i, s.name())] {
				continue
			}
			if msg := s.check(reflect.ValueOf(s.port(&l.c.Ports[i])).Elem().Interface()); msg != "" {
				l.fail(portKey(i, s.name()), "%s", msg)
			}
		}
	}

	l.validateHub()
	l.validateLeague()
	// /metrics on a listener of its own cannot be the page's.
	for _, m := range []struct{ key, metrics, page string }{{"http.metrics", l.c.HTTP.Metrics, l.c.HTTP.Listen},
		{"league.metrics", l.c.League.Metrics, l.c.League.HTTP}} {
		if l.has(m.key) && !l.failed[m.key] && m.metrics == m.page {
			l.fail(m.key, "%s is the page's listener too: say \"page\" to serve /metrics beside the page, or give it another HOST:PORT", m.metrics)
		}
	}
	l.validateNATS()

	for _, e := range daemon.CheckPorts(l.c.Ports) {
		if key := portKey(e.Index, e.Key); !l.failed[key] {
			l.fail(key, "%s", e.Msg)
		}
	}
}

// validateLeague checks a league hub's settings ([league]) across keys: the
// replicas' cluster, and the TLS files that go together.
func (l *loader) validateLeague() {
	if l.has("league.replicas") && l.c.League.Replicas > 1 && l.c.NATS.URL == "" && !l.failed["league.replicas"] {
		l.fail("league.replicas", "%d copies need a NATS cluster as the hub (nats.url, configs/league-hub-cluster.conf); the hub's embedded server is one", l.c.League.Replicas)
	}
	if lg := l.c.League; l.has("league.leaf_tls_cert") {
		switch {
		case (lg.LeafTLSCert == "") != (lg.LeafTLSKey == ""):
			l.fail("league.leaf_tls_cert", "league.leaf_tls_cert and league.leaf_tls_key go together")
		case lg.LeafTLSClientCA != "" && lg.LeafTLSCert == "":
			l.fail("league.leaf_tls_client_ca", "the clubs' certificates are asked for in TLS: give the hub its own, league.leaf_tls_cert and league.leaf_tls_key")
		case lg.LeafTLSCert != "" && l.c.NATS.URL != "":
			l.fail("league.leaf_tls_cert", "with nats.url the hub is that nats-server: give its leafnodes block a tls {} block (configs/league-hub.conf)")
		}
		for _, f := range []struct{ key, file string }{{"league.leaf_tls_cert", lg.LeafTLSCert}, {"league.leaf_tls_key", lg.LeafTLSKey},
			{"league.leaf_tls_client_ca", lg.LeafTLSClientCA}} {
			if _, err := os.Stat(f.file); f.file != "" && err != nil && !l.failed[f.key] {
				l.fail(f.key, "%v", err)
			}
		}
	}
	if lg := l.c.League; l.has("league.http_tls_cert") {
		if (lg.HTTPTLSCert == "") != (lg.HTTPTLSKey == "") {
			l.fail("league.http_tls_cert", "league.http_tls_cert and league.http_tls_key go together")
		}
		for _, f := range []struct{ key, file string }{{"league.http_tls_cert", lg.HTTPTLSCert}, {"league.http_tls_key", lg.HTTPTLSKey}} {
			if _, err := os.Stat(f.file); f.file != "" && err != nil && !l.failed[f.key] {
				l.fail(f.key, "%v", err)
			}
		}
	}
}

// validateNATS checks the bus's settings ([nats]) across keys: the embedded
// server's listener and its credentials, or the URLs of an existing server, and
// the client's credentials and files.
func (l *loader) validateNATS() {
	n := &l.c.NATS
	if n.URL == "" && l.has("nats.listen") {
		if n.Listen != bus.ListenOff {
			if host, _, err := bus.ParseListen(n.Listen); err == nil && !bus.Loopback(host) && n.ListenToken == "" && n.ListenUser == "" {
				l.fail("nats.listen", "%q is beyond loopback, where anyone could publish dumps and read results: "+
					"set --nats-listen-token ($SCOREBOARD_NATS_LISTEN_TOKEN, nats.listen_token), or "+
					"--nats-listen-user and --nats-listen-password ($SCOREBOARD_NATS_LISTEN_PASSWORD, "+
					"nats.listen_user and nats.listen_password)", n.Listen)
			}
		}
		switch {
		case n.ListenToken != "" && n.ListenUser != "":
			l.fail("nats.listen_token", "give the listener either a token or nats.listen_user and a password, not both")
		case (n.ListenUser == "") != (n.ListenPassword == ""):
			l.fail("nats.listen_user", "nats.listen_user and nats.listen_password go together")
		}
	} else if n.URL != "" {
		// A URL from a layer above the listener's wins over it (--nats-url over the
		// file's listener); from the same layer, or below it, they contradict.
		if l.has("nats.listen") {
			if r := l.rank("nats.listen"); r > 0 && r >= l.rank("nats.url") {
				l.fail("nats.listen", "the embedded server's listener cannot go with nats.url (an existing server)")
			}
		}
		// The URLs may carry a password or a token: errors show them redacted.
		for u := range strings.SplitSeq(n.URL, ",") {
			u = strings.TrimSpace(u)
			pu, err := url.Parse(u)
			switch {
			case u == "":
				l.fail("nats.url", "empty URL in %q", bus.RedactURL(n.URL))
			case err != nil:
				l.fail("nats.url", "%q is not a URL: want nats://HOST:PORT (or tls://, ws://, wss://)", bus.RedactURL(u))
			case pu.Host == "" || !slices.Contains([]string{"nats", "tls", "ws", "wss"}, pu.Scheme):
				l.fail("nats.url", "%q: want nats://HOST:PORT (or tls://, ws://, wss://)", bus.RedactURL(u))
			}
		}
	}
	if n.Password != "" && n.User == "" {
		l.fail("nats.password", "a password without nats.user")
	}
	if n.Token != "" && n.User != "" {
		l.fail("nats.token", "give either a token or nats.user and a password, not both")
	}
	if (n.TLSCert == "") != (n.TLSKey == "") {
		l.fail("nats.tls_cert", "nats.tls_cert and nats.tls_key go together")
	}
	for _, f := range []struct{ key, file string }{{"nats.nkey", n.NKey}, {"nats.creds", n.Creds},
		{"nats.tls_ca", n.TLSCA}, {"nats.tls_cert", n.TLSCert}, {"nats.tls_key", n.TLSKey}} {
		if f.file == "" {
			continue
		}
		if fi, err := os.Stat(f.file); err != nil {
			l.fail(f.key, "%v", err)
		} else if fi.IsDir() {
			l.fail(f.key, "%s is a directory, want a file", f.file)
		}
	}
}

// validateHub checks a club's link to a league hub ([hub]) across settings: each
// key's own check has been done.
func (l *loader) validateHub() {
	h := l.c.Hub
	if !l.has("hub.url") || (h.URL == "" && h.Club == "" && h.Token == "" && h.SeedFile == "" && h.TLSCA == "" && h.TLSCert == "" && h.TLSKey == "") {
		return
	}
	switch {
	case l.failed["hub.url"] || l.failed["hub.club"]:
	case h.URL == "":
		key := "hub.club"
		for _, k := range []struct{ key, v string }{{"hub.tls_key", h.TLSKey}, {"hub.tls_cert", h.TLSCert}, {"hub.tls_ca", h.TLSCA},
			{"hub.seed_file", h.SeedFile}, {"hub.token", h.Token}, {"hub.club", h.Club}} {
			if k.v != "" {
				key = k.key
			}
		}
		l.fail(key, "the club's link needs the hub's URL (--hub-url, $SCOREBOARD_HUB_URL, hub.url)")
	case h.Club == "":
		l.fail("hub.url", "the hub needs the club's name (--hub-club, $SCOREBOARD_HUB_CLUB, hub.club)")
	case h.Token != "" && h.SeedFile != "":
		l.fail("hub.seed_file", "give the hub the club's seed file or a token, not both")
	case h.Token == "" && h.SeedFile == "":
		l.fail("hub.url", "the hub needs the club's credentials: a seed file (--hub-seed-file, $SCOREBOARD_HUB_SEED_FILE, hub.seed_file; scoreboard hub key makes it at the hub) or a token ($SCOREBOARD_HUB_TOKEN, hub.token)")
	case l.c.NATS.URL != "":
		l.fail("hub.url", "a club's link to the hub is its embedded server's: it cannot go with nats.url (an existing server)")
	case l.has("history.enabled") && !l.c.History.Enabled:
		l.fail("hub.url", "the hub reads the club's history: it cannot go with the history off")
	}
	if h.SeedFile != "" && !l.failed["hub.seed_file"] {
		if _, err := bus.ReadSeedFile(h.SeedFile); err != nil {
			l.fail("hub.seed_file", "%s", strings.TrimPrefix(err.Error(), "hub link: "))
		}
	}
	if h.TLSCA != "" || h.TLSCert != "" || h.TLSKey != "" {
		key := "hub.tls_ca"
		if h.TLSCert != "" || h.TLSKey != "" {
			key = "hub.tls_cert"
		}
		if err := (&bus.HubLink{TLSCA: h.TLSCA, TLSCert: h.TLSCert, TLSKey: h.TLSKey}).CheckTLS(); err != nil {
			l.fail(key, "%s", strings.TrimPrefix(err.Error(), "hub link: "))
		}
	}
}
