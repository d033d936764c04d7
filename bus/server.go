package bus

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"
)

// ListenOff turns the embedded server's TCP listener off: only in-process clients.
const ListenOff = "off"

// DefaultListen is where the embedded server listens by default: loopback only, so
// local tools can reach it and nothing else can.
const DefaultListen = "127.0.0.1:4222"

// maxPayload is the largest message the embedded server accepts. A whole contest
// input sent to a solve endpoint can exceed NATS's default 1 MB.
const maxPayload = 8 << 20

// Server is an embedded nats-server.
type Server struct {
	ns *server.Server
}

// StartServer starts an embedded nats-server listening on listen, without
// authentication: StartServerWith(ServerOptions{Listen: listen}, log).
func StartServer(listen string, log zerolog.Logger) (*Server, error) {
	return StartServerWith(ServerOptions{Listen: listen}, log)
}

// ServerOptions configure the embedded server.
type ServerOptions struct {
	// Listen is "HOST:PORT" (port 0 for a free one), or ListenOff for in-process
	// clients only.
	Listen string
	// Token, or User and Password, are what clients of the TCP listener must present.
	// In-process clients (the daemon's own parts) need none.
	Token          string
	User, Password string
	// StoreDir, when set, turns JetStream on, with its file store in this directory
	// (the history). The caller owns the directory: one server at a time.
	StoreDir string
}

// ErrListenNeedsAuth is returned for a listener beyond loopback without
// authentication: anyone on the network could then publish dumps and read results.
var ErrListenNeedsAuth = errors.New("listening beyond loopback needs authentication")

// Where the embedded listener's credentials are set, for the error that asks for them.
const listenAuthHint = "set a token (--nats-listen-token, $SCOREBOARD_NATS_LISTEN_TOKEN, nats.listen_token) " +
	"or a user and password (--nats-listen-user and --nats-listen-password, $SCOREBOARD_NATS_LISTEN_PASSWORD, " +
	"nats.listen_user and nats.listen_password), or listen on 127.0.0.1"

// StartServerWith starts an embedded nats-server as o says, logging into log with
// component=nats. It refuses a listener beyond loopback without authentication
// (ErrListenNeedsAuth). It does not install signal handlers. It returns once the
// server accepts connections.
func StartServerWith(o ServerOptions, log zerolog.Logger) (*Server, error) {
	opts := &server.Options{
		ServerName: "scoreboard",
		NoSigs:     true,
		MaxPayload: maxPayload,
	}
	switch {
	case o.Token != "" && (o.User != "" || o.Password != ""):
		return nil, errors.New("embedded nats-server: give either a token or a user and a password, not both")
	case (o.User == "") != (o.Password == ""):
		return nil, errors.New("embedded nats-server: a user and a password go together")
	}
	auth := o.Token != "" || o.User != ""
	if o.Listen == ListenOff {
		opts.DontListen = true
	} else {
		host, port, err := ParseListen(o.Listen)
		if err != nil {
			return nil, err
		}
		if !auth && !Loopback(host) {
			return nil, fmt.Errorf("embedded nats-server: listen address %q: %w: %s", o.Listen, ErrListenNeedsAuth, listenAuthHint)
		}
		opts.Host, opts.Port = host, port
		if port == 0 {
			opts.Port = server.RANDOM_PORT
		}
	}
	if o.StoreDir != "" {
		opts.JetStream = true
		opts.StoreDir = o.StoreDir
	}
	if auth {
		opts.CustomClientAuthentication = &listenAuth{token: o.Token, user: o.User, password: o.Password}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded nats-server: %w", err)
	}
	sl := &serverLogger{l: log.With().Str("component", "nats").Logger()}
	ns.SetLoggerV2(sl, sl.l.GetLevel() <= zerolog.DebugLevel, sl.l.GetLevel() <= zerolog.TraceLevel, false)
	go ns.Start()
	for deadline := time.Now().Add(10 * time.Second); !ns.ReadyForConnections(20 * time.Millisecond); {
		// The server reports a listener it cannot open as fatal, and would wait on.
		if msg := sl.fatal.Load(); msg != nil || time.Now().After(deadline) {
			ns.Shutdown()
			if msg != nil {
				return nil, fmt.Errorf("embedded nats-server: %s", *msg)
			}
			return nil, errors.New("embedded nats-server: not ready after 10s")
		}
	}
	return &Server{ns: ns}, nil
}

// Loopback reports whether host (of a listen address) is a loopback address, or
// "localhost".
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listenAuth checks the credentials of the listener's clients. In-process clients
// come through a net.Pipe and are the daemon's own: they need none.
type listenAuth struct{ token, user, password string }

func (a *listenAuth) Check(c server.ClientAuthentication) bool {
	if addr := c.RemoteAddress(); addr != nil && addr.Network() == "pipe" {
		return true
	}
	o := c.GetOpts()
	if o == nil {
		return false
	}
	if a.token != "" {
		return equal(o.Token, a.token)
	}
	// Both compared, so the time taken tells nothing of which one was wrong.
	u, p := equal(o.Username, a.user), equal(o.Password, a.password)
	return u && p
}

func equal(got, want string) bool { return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1 }

// ParseListen checks a listen address "HOST:PORT" and splits it.
func ParseListen(listen string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("listen address %q: want HOST:PORT or %q: %w", listen, ListenOff, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("listen address %q: bad port %q", listen, p)
	}
	if h == "" {
		return "", 0, fmt.Errorf("listen address %q: want a host, such as 127.0.0.1", listen)
	}
	return h, n, nil
}

// ClientURL is the URL other processes connect to, or "" when the listener is off.
func (s *Server) ClientURL() string {
	if s.ns.Addr() == nil {
		return ""
	}
	return s.ns.ClientURL()
}

// NATS returns the embedded server, for in-process connections.
func (s *Server) NATS() *server.Server { return s.ns }

// Shutdown stops the server and waits until it has stopped.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// serverLogger routes the embedded nats-server's log into zerolog.
type serverLogger struct {
	l     zerolog.Logger
	fatal atomic.Pointer[string] // the first fatal message, which ends StartServer
}

func (s *serverLogger) Noticef(format string, v ...any) { s.l.Info().Msgf(format, v...) }
func (s *serverLogger) Warnf(format string, v ...any)   { s.l.Warn().Msgf(format, v...) }
func (s *serverLogger) Errorf(format string, v ...any)  { s.l.Error().Msgf(format, v...) }
func (s *serverLogger) Debugf(format string, v ...any)  { s.l.Debug().Msgf(format, v...) }

// Fatalf does not exit, as nats-server's own logger would: the daemon decides.
func (s *serverLogger) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	s.l.Error().Msg(msg)
	s.fatal.CompareAndSwap(nil, &msg)
}

func (s *serverLogger) Tracef(format string, v ...any) {
	// The server traces every protocol line; keep it below debug.
	s.l.Trace().Msg(strings.TrimSpace(fmt.Sprintf(format, v...)))
}
