package bus

import (
	"regexp"
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// linkReport turns the embedded server's errors on its leaf connection to the hub,
// which come again at every attempt (each HubLinkReconnect), into one error line
// per cause: what is wrong and what to change. The same cause is told again every
// linkReportEvery attempts, with their count; the link up starts afresh.
type linkReport struct {
	l    zerolog.Logger
	link *HubLink

	mu       sync.Mutex
	last     string // the cause last told
	attempts int    // attempts failed of that cause
	told     int    // lines written, for tests
}

// linkReportEvery is how many failed attempts of one cause pass before it is told
// again: 150 at one every 2 s is 5 minutes.
const linkReportEvery = 150

// linkCause is a cause of a failed link, recognised in a server's log line.
type linkCause struct {
	kind   string
	match  func(msg string) bool
	advice func(h *HubLink) string
}

func contains(subs ...string) func(string) bool {
	return func(msg string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
}

// tlsHandshake is the start of the server's line for a failed TLS handshake.
const tlsHandshake = "TLS leafnode handshake error"

var linkCauses = []linkCause{
	{"tls_wrong_name", contains("x509: certificate is valid for", "x509: certificate is not valid for any names", "x509: cannot validate certificate for"),
		func(h *HubLink) string {
			return "the hub's certificate is not for the name in the club's hub.url (--hub-url " + RedactURL(h.URL) +
				"): give the name the certificate is for in hub.url, or make the hub a certificate for this name"
		}},
	{"tls_unknown_ca", contains("x509: certificate signed by unknown authority"),
		func(h *HubLink) string {
			if h.TLSCA == "" {
				return "no CA of the system signs the hub's certificate: set hub.tls_ca (--hub-tls-ca) to the CA file that signed it (a self-signed hub: its CA's .crt), or give the hub a certificate of a public CA"
			}
			return "the CA in hub.tls_ca (" + h.TLSCA + ") did not sign the hub's certificate: set hub.tls_ca to the CA that did"
		}},
	{"tls_expired", contains("x509: certificate has expired or is not yet valid"),
		func(*HubLink) string {
			return "the hub's certificate has expired (or is not valid yet): renew it at the hub (certbot renew, or the openssl command again) and restart the hub; check this machine's clock"
		}},
	{"tls_none", func(msg string) bool {
		return strings.Contains(msg, tlsHandshake) && (strings.Contains(msg, "first record does not look like a TLS handshake") ||
			strings.Contains(msg, "EOF") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "timeout"))
	},
		func(h *HubLink) string {
			return "the hub does not answer in TLS, and the club asks for it (a tls:// hub.url, or hub.tls_ca), so it sends no credentials: " +
				"give the hub a certificate (league.leaf_tls_cert and league.leaf_tls_key), or check that hub.url names the hub's leaf port"
		}},
	{"tls_client_cert", contains("tls: certificate required", "tls: bad certificate", "tls: unknown certificate authority"),
		func(h *HubLink) string {
			if h.TLSCert == "" {
				return "the hub wants a client certificate (mutual TLS): set hub.tls_cert and hub.tls_key to one its league.leaf_tls_client_ca signed"
			}
			return "the hub refused the club's certificate (hub.tls_cert " + h.TLSCert + "): it wants one its league.leaf_tls_client_ca signed, not expired"
		}},
	{"tls_other", contains(tlsHandshake),
		func(*HubLink) string {
			return "the TLS handshake with the hub failed: check the hub's certificate and the club's hub.tls_ca"
		}},
	{"refused", func(msg string) bool {
		return strings.Contains(msg, "Leafnode Error") && strings.Contains(msg, "Authorization Violation")
	},
		func(h *HubLink) string {
			what := "its token ($SCOREBOARD_HUB_TOKEN, hub.token)"
			if h.SeedFile != "" {
				what = "its key (the seed file " + h.SeedFile + "; the hub's [[club]] table holds its public key)"
			}
			return "the hub refused the club " + h.Club + ": check hub.club and " + what + " against the hub's [[club]] table"
		}},
	{"unreachable", contains("Error trying to connect as leafnode"),
		func(h *HubLink) string {
			return "the hub is not reachable at " + RedactURL(h.URL) + ": is it running there, is hub.url its leaf port? The club goes on and tries again every " + HubLinkReconnect.String()
		}},
}

// leafLine matches the start of a format the server writes about a leaf connection
// (client.go initClient: "<addr> - lid:<n> - ", "lid_ws" over websocket): the
// address is the peer's, and nothing else comes before the server's own words.
var leafLine = regexp.MustCompile(`^[^ "]+ - lid(_ws)?:[0-9]+ - `)

// solicitLine is the server's own line for a failed attempt to reach the hub
// (leafnode.go connErrFmt).
const solicitLine = "Error trying to connect as leafnode to remote server "

// aboutLink reports whether a line the server formatted with format can be about the
// link to the hub: one about a leaf connection, or a failed attempt to reach the hub.
// A client's line (a refused login, a denied publish) quotes what the client chose,
// a user name or a connection's name of any words: told by its format, which the
// client's text is never the start of, it is never taken for the link's.
func aboutLink(format string) bool {
	return leafLine.MatchString(format) || strings.HasPrefix(format, solicitLine)
}

// saw takes a line of the server's, formatted from format; it reports whether the
// line was about the link, then told in the report's own words (the server's line
// goes to debug).
func (r *linkReport) saw(format, msg string) bool {
	if !aboutLink(format) {
		return false
	}
	var cause *linkCause
	for i := range linkCauses {
		if linkCauses[i].match(msg) {
			cause = &linkCauses[i]
			break
		}
	}
	if cause == nil {
		return false
	}
	r.mu.Lock()
	if cause.kind != r.last {
		r.last, r.attempts = cause.kind, 0
	}
	r.attempts++
	n := r.attempts
	tell := n == 1 || n%linkReportEvery == 0
	if tell {
		r.told++
	}
	r.mu.Unlock()
	r.l.Debug().Msg(msg)
	if tell {
		r.l.Error().Str("cause", cause.kind).Int("attempts", n).Str("nats", clipServerLine(msg)).
			Msg("league hub link failed: " + cause.advice(r.link))
	}
	return true
}

// up starts afresh: the next failure is told at once.
func (r *linkReport) up() {
	r.mu.Lock()
	r.last, r.attempts = "", 0
	r.mu.Unlock()
}
