package bus

import (
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

// StartServer starts an embedded nats-server listening on listen ("HOST:PORT", port 0
// for a free one, or ListenOff for in-process clients only), logging into log with
// component=nats. It does not install signal handlers. It returns once the server
// accepts connections.
func StartServer(listen string, log zerolog.Logger) (*Server, error) {
	opts := &server.Options{
		ServerName: "scoreboard",
		NoSigs:     true,
		MaxPayload: maxPayload,
	}
	if listen == ListenOff {
		opts.DontListen = true
	} else {
		host, port, err := ParseListen(listen)
		if err != nil {
			return nil, err
		}
		opts.Host, opts.Port = host, port
		if port == 0 {
			opts.Port = server.RANDOM_PORT
		}
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
