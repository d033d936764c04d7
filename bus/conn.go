package bus

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/internal/backoff"
	"github.com/goclub/scoreboard/logging"
)

// ConnOptions says how to reach NATS: the embedded server in-process, or a URL with
// credentials. Empty fields are unused.
type ConnOptions struct {
	// Server, when set, connects in-process to this embedded server; URL and the
	// credentials are then ignored.
	Server *Server
	// URL lists one or more servers of a cluster, comma-separated.
	URL string

	User, Password string
	Token          string
	NKeySeedFile   string // a file holding an nkey seed ("SU...")
	CredsFile      string // a .creds file (user JWT and nkey seed)
	TLSCA          string // a PEM file of CAs to trust, beside the system's
	TLSCert        string // a client certificate, PEM; with TLSKey
	TLSKey         string

	// Name is the connection's name, as servers show it (monitoring, logs).
	Name string
	// Role, with Server, is the role the in-process connection takes (RoleWorker);
	// the daemon's, every right, when empty. Ignored with a URL: the credentials
	// say who connects.
	Role string
}

// Reconnect tuning: forever, with exponential back-off capped so a server that comes
// back is found within a couple of seconds.
var reconnect = backoff.Policy{Min: 50 * time.Millisecond, Max: 2 * time.Second, Jitter: true}

const reconnectBufSize = 8 << 20 // what a disconnected client keeps publishing meanwhile

// Connect connects to NATS. A connection to a URL reconnects forever with back-off,
// keeps up to 8 MB of what is published while it is disconnected (nats.go's reconnect
// buffer), and logs each disconnect, reconnect and asynchronous error on log with
// component=bus. The first connection attempt is not retried: a wrong URL or missing
// credentials fail at once with the server's reason.
func Connect(o ConnOptions, log zerolog.Logger) (*nats.Conn, error) {
	lc := log.With().Str("component", "bus")
	if o.Name != "" {
		// A process has several connections: each line says which one.
		lc = lc.Str("connection", o.Name)
	}
	log = lc.Logger()
	// The server last connected to, for the disconnect line: by then the
	// connection no longer has one.
	var server atomic.Pointer[string]
	// lost: the last disconnect was a warning, so the reconnect that ends it is one
	// too, and shows wherever the disconnect did (the tools log warnings only).
	var lost atomic.Bool
	errSampler := logging.NewSampler(10, time.Second, 100)
	opts := []nats.Option{
		nats.Name(o.Name),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(reconnect.Wait),
		nats.ReconnectBufSize(reconnectBufSize),
		// An auth error while reconnecting (a server restarting with its accounts
		// not loaded yet) must not end the connection for good.
		nats.IgnoreAuthErrorAbort(),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			ev := log.Warn()
			switch {
			case err == nil && o.Server != nil:
				ev = log.Debug() // the daemon's own connection, closed as it stops
			case err == nil:
				ev = log.Info() // a clean close, or a server going away on purpose
			}
			lost.Store(err != nil)
			srv := ""
			if p := server.Load(); p != nil {
				srv = *p
			}
			ev.Err(err).Str("server", srv).Msg("nats disconnected")
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			url := nc.ConnectedUrlRedacted()
			server.Store(&url)
			ev := log.Info()
			if lost.Swap(false) {
				ev = log.Warn()
			}
			ev.Str("server", url).Uint64("reconnects", nc.Stats().Reconnects).Msg("nats reconnected")
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Debug().Err(err).Msg("nats reconnect attempt failed")
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			if err := nc.LastError(); err != nil {
				log.Error().Err(err).Msg("nats connection closed")
				return
			}
			log.Debug().Msg("nats connection closed")
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			// A flood makes a slow consumer report again and again: sampled, per
			// subscription.
			key := ""
			if sub != nil {
				key = sub.Subject
			}
			ev := errSampler.Event(&log, zerolog.ErrorLevel, key).Err(err)
			if sub != nil {
				ev = ev.Str("subject", sub.Subject)
			}
			ev.Msg("nats error")
		}),
	}
	serverURL, authOpts, err := o.serverOptions()
	if err != nil {
		return nil, err
	}
	opts = append(opts, authOpts...)
	nc, err := nats.Connect(serverURL, opts...)
	if err != nil {
		if o.Server != nil {
			return nil, fmt.Errorf("nats in-process: %w", err)
		}
		// nats.go's own errors may quote the URL (a malformed one), secrets and all.
		msg := fmt.Sprintf("nats %s: %v%s", RedactURL(serverURL), err, hint(err))
		return nil, &redactedError{msg: scrub(msg, append(urlSecrets(serverURL), o.Password, o.Token)...), err: err}
	}
	url := "in-process"
	if o.Server == nil {
		url = nc.ConnectedUrlRedacted()
	}
	server.Store(&url)
	// A daemon's own in-process connections (four of them) are no news at info; a
	// connection to a server elsewhere is.
	ev := log.Info()
	if o.Server != nil {
		ev = log.Debug()
	}
	ev.Str("server", url).Msg("nats connected")
	return nc, nil
}

// serverOptions are the connection's server and credentials: the embedded server
// in-process, in its role, or a server's URL with the user's credentials and TLS.
func (o ConnOptions) serverOptions() (serverURL string, opts []nats.Option, err error) {
	serverURL = o.URL
	if o.Server != nil {
		opts = append(opts, nats.InProcessServer(o.Server.NATS()))
		if o.Role != "" {
			opts = append(opts, nats.UserInfo(o.Role, ""))
		}
		serverURL = ""
	} else {
		if serverURL == "" {
			return "", nil, errors.New("nats: no URL and no embedded server")
		}
		if o.User != "" || o.Password != "" {
			opts = append(opts, nats.UserInfo(o.User, o.Password))
		}
		if o.Token != "" {
			opts = append(opts, nats.Token(o.Token))
		}
		if o.NKeySeedFile != "" {
			opt, err := nats.NkeyOptionFromSeed(o.NKeySeedFile)
			if err != nil {
				return "", nil, fmt.Errorf("nats nkey seed %s: %w", o.NKeySeedFile, err)
			}
			opts = append(opts, opt)
		}
		if o.CredsFile != "" {
			opts = append(opts, nats.UserCredentials(o.CredsFile))
		}
		if o.TLSCA != "" {
			opts = append(opts, nats.RootCAs(o.TLSCA))
		}
		if o.TLSCert != "" || o.TLSKey != "" {
			if o.TLSCert == "" || o.TLSKey == "" {
				return "", nil, errors.New("nats TLS: a client certificate needs both its cert and its key file")
			}
			opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
		}
	}
	return serverURL, opts, nil
}

// hint tells the user what to do about the common connection errors.
func hint(err error) string {
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		return " (the server wants credentials: --nats-user and --nats-password, --nats-token, --nats-nkey or --nats-creds)"
	case errors.Is(err, nats.ErrNoServers):
		return " (is `scoreboard run`, or the nats-server it uses, running there? --nats-url says where to look)"
	}
	return ""
}

// redacted stands where a secret was.
const redacted = "xxxxx"

// RedactURL hides the passwords and tokens in a comma-separated list of URLs before
// it is logged or printed. A URL that does not parse, or has an '@' elsewhere than
// after its user info, loses everything between its scheme and its last '@'.
func RedactURL(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		switch {
		case err != nil || u.User == nil && strings.Contains(p, "@"):
			// Not a URL, or one whose '@' is not after user info (opaque).
			if at := strings.LastIndex(p, "@"); at >= 0 {
				start := strings.Index(p, "://") + len("://")
				if start < len("://") || start > at {
					start = 0
				}
				parts[i] = p[:start] + redacted + p[at:]
			}
		case u.User == nil:
		default:
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), redacted)
			} else {
				u.User = url.User(redacted)
			}
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

// urlSecrets are the passwords and tokens in the user info of a list of URLs, as
// written and as url.Parse decodes them.
func urlSecrets(urls string) []string {
	var s []string
	for p := range strings.SplitSeq(urls, ",") {
		at := strings.LastIndex(p, "@")
		if at < 0 {
			continue
		}
		info := p[:at]
		if i := strings.Index(info, "://"); i >= 0 {
			info = info[i+len("://"):]
		}
		secret := info
		if _, pw, ok := strings.Cut(info, ":"); ok {
			secret = pw // user:password; else the whole user info is a token
		}
		s = append(s, secret)
		if dec, err := url.PathUnescape(secret); err == nil {
			s = append(s, dec)
		}
	}
	return s
}

// scrub replaces each non-empty secret in msg.
func scrub(msg string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, redacted)
		}
	}
	return msg
}

// redactedError is an error whose text had its secrets removed; errors.Is and As
// still see the error it came from.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// AllConnected says whether every one of conns is connected (not reconnecting).
func AllConnected(conns ...*nats.Conn) bool {
	for _, nc := range conns {
		if !nc.IsConnected() {
			return false
		}
	}
	return true
}
