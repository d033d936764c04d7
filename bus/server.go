package bus

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/logging"
)

// ListenOff turns the embedded server's TCP listener off: only in-process clients.
const ListenOff = "off"

// DefaultListen is where the embedded server listens by default: loopback only, so
// local tools can reach it and nothing else can.
const DefaultListen = "127.0.0.1:4222"

// serverReadyWait bounds the embedded server's start. It was 10 s, which a daemon
// starting with its history under CI's busy loops missed; a Pi booting from an SD
// card with a full store is slower still.
const serverReadyWait = 2 * time.Minute

// MaxPayload is the largest message the embedded server accepts: 2 MB, room for the
// largest unit any problem allows (capture: 1,650,065 bytes) with its headers, and
// no more, so that a flood of huge messages costs little. A whole contest input sent
// to a solve endpoint must fit it too; a larger one is solved in-process (scoreboard
// solve without --nats-url) or in parts.
const MaxPayload = 2 << 20

// MaxSubs bounds one connection's subscriptions, and MaxConns the connections: a tool
// (no credentials) may subscribe without end otherwise, ~400 bytes of the daemon's
// memory each (review-club F11: 300,000 of them cost 124 MB). Measured with 5 ports,
// the page and two tools: the daemon's busiest connection (its workers) holds 19, its
// ports' one a subscription per port, a tool 1 to 3; the bound leaves room for a
// league link's interest too (a leaf connection is bounded by it as well). Its
// connections: 6 of the daemon's own, its remote workers, tools.
const (
	MaxSubs  = 10_000
	MaxConns = 256
)

// Server is an embedded nats-server.
type Server struct {
	ns *server.Server
	// js is JetStream's configuration as the server started it, to start it again
	// after the server turned it off (a full disk); StoreDir is the one given.
	js *server.JetStreamConfig
	// log counts the store's write errors; handled is the count at the last restart.
	log     *serverLogger
	handled atomic.Uint64
	// guard deletes the consumers tools may not have (guard.go), or is nil.
	guard *nats.Conn
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
	// Token, or User and Password, are the worker credentials: clients of the TCP
	// listener that present them get the worker role. Clients without credentials
	// get the tool role, on a loopback listener only. In-process clients (the
	// daemon's own parts) need none and have every right.
	Token          string
	User, Password string
	// Organiser is the organiser's password (OrganiserFile): a loopback client of
	// the listener that logs in as RoleOrganiser with it may load pairings. Empty:
	// no organiser on the listener.
	Organiser string
	// Prefix is the subjects' prefix the roles' rights are for; DefaultPrefix when
	// empty.
	Prefix string
	// StoreDir, when set, turns JetStream on, with its file store in this directory
	// (the history). The caller owns the directory: one server at a time.
	StoreDir string
	// Hub, when set, joins a league hub as a leaf node with the club's JetStream
	// domain (hublink.go). It needs StoreDir.
	Hub *HubLink
	// SyncAlways syncs the store to disk on every write; else SyncInterval is how
	// often it is synced (0: nats-server's default, 2 minutes). The server's own
	// setting (sync_interval), for the whole store: what a power cut can lose.
	SyncAlways   bool
	SyncInterval time.Duration
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
		MaxPayload: MaxPayload,
		MaxSubs:    MaxSubs,
		MaxConn:    MaxConns,
	}
	switch {
	case o.Token != "" && (o.User != "" || o.Password != ""):
		return nil, errors.New("embedded nats-server: give either a token or a user and a password, not both")
	case (o.User == "") != (o.Password == ""):
		return nil, errors.New("embedded nats-server: a user and a password go together")
	case o.User == RoleOrganiser:
		return nil, fmt.Errorf("embedded nats-server: the worker's user may not be %q, the organiser's", RoleOrganiser)
	}
	auth := o.Token != "" || o.User != ""
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	la := &listenAuth{token: o.Token, user: o.User, password: o.Password, organiser: o.Organiser, tools: true}
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
		} else if err := tryListen(o.Listen); err != nil {
			// nats-server would log the bind error as fatal, then "Server is
			// ready" all the same: say it here, with what to do instead.
			return nil, err
		}
		// Beyond loopback a tool's rights (publish dumps, read every result) are
		// too much for anyone on the network: only credentials let in.
		la.tools = Loopback(host)
	}
	s := Subjects{Prefix: o.Prefix}
	la.worker = &server.User{Username: RoleWorker, Permissions: WorkerPermissions(s)}
	la.tool = &server.User{Username: RoleTool, Permissions: ToolPermissions(s)}
	la.organiserUser = &server.User{Username: RoleOrganiser, Permissions: OrganiserPermissions(s)}
	if o.StoreDir != "" {
		opts.JetStream = true
		opts.StoreDir = o.StoreDir
		opts.SyncAlways, opts.SyncInterval = o.SyncAlways, o.SyncInterval
	}
	if o.Hub != nil {
		if err := o.Hub.apply(opts, o.Prefix); err != nil {
			return nil, err
		}
	}
	opts.CustomClientAuthentication = la
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded nats-server: %w", err)
	}
	sl := &serverLogger{l: log.With().Str("component", "nats").Logger(), flood: logging.NewSampler(10, time.Second, 100)}
	debug := sl.l.GetLevel() <= zerolog.DebugLevel
	if o.Hub != nil {
		sl.link = &linkReport{l: log.With().Str("component", "league").Str("club", o.Hub.Club).Str("hub", RedactURL(o.Hub.URL)).Logger(), link: o.Hub}
		// A hub that answers without TLS is a debug line of the server's (it
		// takes it for a probe): the report needs it.
		debug = debug || o.Hub.WantsTLS()
	}
	ns.SetLoggerV2(sl, debug, sl.l.GetLevel() <= zerolog.TraceLevel, false)
	go ns.Start()
	start := time.Now()
	told := false
	for deadline := start.Add(serverReadyWait); !ns.ReadyForConnections(20 * time.Millisecond); {
		if !told && time.Since(start) > 10*time.Second {
			// JetStream reads its whole store back before the server is ready: on an
			// SD card, or a machine busy with other work, that takes a while.
			sl.l.Warn().Dur("waited_ms", time.Since(start)).Dur("bound_ms", serverReadyWait).Msg("embedded nats-server not ready yet: still waiting (JetStream recovers its store at start)")
			told = true
		}
		// The server reports a listener it cannot open as fatal, and would wait on.
		if msg := sl.fatal.Load(); msg != nil || time.Now().After(deadline) {
			ns.Shutdown()
			if msg != nil {
				if strings.Contains(*msg, "address already in use") {
					return nil, inUseError(o.Listen)
				}
				return nil, fmt.Errorf("embedded nats-server: %s", *msg)
			}
			return nil, fmt.Errorf("embedded nats-server: not ready after %s; the nats component's log lines above say what it was doing", serverReadyWait)
		}
	}
	srv := &Server{ns: ns, log: sl}
	if err := srv.withJetStream(o.StoreDir); err != nil {
		ns.Shutdown()
		return nil, err
	}
	return srv, nil
}

// withJetStream keeps JetStream's configuration, to start it again after a full
// disk, and starts the guard of the tools' consumers (guard.go); without JetStream,
// nothing.
func (s *Server) withJetStream(storeDir string) error {
	c := s.ns.JetStreamConfig()
	if c == nil {
		return nil
	}
	c.StoreDir = storeDir
	s.js = c
	var err error
	if s.guard, err = startConsumerGuard(s.ns, s.log.l); err != nil {
		return fmt.Errorf("embedded nats-server: the consumer guard: %w", err)
	}
	return nil
}

// StoreFailing reports whether the server was started with JetStream and its store
// has failed since the last RestartJetStream: nats-server turned JetStream off
// ("JetStream out of resources, will be DISABLED"), or a stream's file store hit a
// write error for want of space ("Critical write error: ... no space left on
// device"), after which that stream stores nothing until JetStream starts again.
func (s *Server) StoreFailing() bool {
	return s.js != nil && (!s.ns.JetStreamEnabled() || s.log.noSpace.Load() > s.handled.Load())
}

// RestartJetStream stops JetStream if it runs, and starts it again with its first
// configuration: its streams are recovered from the store, as at a start.
func (s *Server) RestartJetStream() error {
	if s.js == nil {
		return nil
	}
	n := s.log.noSpace.Load()
	if s.ns.JetStreamEnabled() {
		if err := s.ns.ShutdownJetStream(); err != nil {
			return fmt.Errorf("embedded nats-server: stop JetStream: %w", err)
		}
	}
	s.handled.Store(n)
	c := *s.js
	if err := s.ns.EnableJetStream(&c); err != nil {
		return fmt.Errorf("embedded nats-server: start JetStream again: %w", err)
	}
	return nil
}

// ErrListenInUse is returned when the embedded server's listen address is taken.
var ErrListenInUse = errors.New("address already in use")

// tryListen opens and closes the listen address, to tell a taken one before the
// server starts.
func tryListen(listen string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return inUseError(listen)
		}
		return fmt.Errorf("embedded nats-server: listen on %s: %w", listen, err)
	}
	return ln.Close()
}

func inUseError(listen string) error {
	return fmt.Errorf("embedded nats-server: %s is taken (%w: is another scoreboard run or a nats-server there?); "+
		"listen on any free port with --nats-listen 127.0.0.1:0, on none with --nats-listen off, "+
		"or join the server there with --nats-url nats://%s", listen, ErrListenInUse, listen)
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

// listenAuth gives each client its role, which the server then enforces.
// In-process clients come through a net.Pipe and are the daemon's own: every right,
// without credentials, but for the daemon's workers, which ask for the worker role
// (ConnOptions.Role): a worker answers requests on the reply subject a requester
// names, and the micro service's own $SRV handlers answer any, so with every right a
// tool could have them write the history. A listener's client with the worker credentials is a worker;
// one without any credentials is a tool, where tools are let in (loopback); one of
// loopback with user RoleOrganiser and the organiser's password is the organiser.
type listenAuth struct {
	token, user, password string
	organiser             string // the organiser's password, or none
	tools                 bool   // clients without credentials are let in, as tools
	worker, tool          *server.User
	organiserUser         *server.User
}

func (a *listenAuth) Check(c server.ClientAuthentication) bool {
	if addr := c.RemoteAddress(); addr != nil && addr.Network() == "pipe" {
		if o := c.GetOpts(); o != nil && o.Username == RoleWorker {
			c.RegisterUser(a.worker)
			return true
		}
		c.RegisterUser(&server.User{Username: RoleDaemon})
		return true
	}
	o := c.GetOpts()
	if o == nil {
		return false
	}
	if o.Username == RoleOrganiser {
		return a.checkOrganiser(c, o)
	}
	// No JWT is looked at: nats-server clears a CONNECT's JWT outside operator mode
	// before it asks, so it is never seen here, and a client that sends one is
	// taken as if it had not.
	if o.Token == "" && o.Username == "" && o.Password == "" && o.Nkey == "" {
		if !a.tools {
			return false
		}
		c.RegisterUser(a.tool)
		return true
	}
	var ok bool
	switch {
	case a.token != "":
		ok = equal(o.Token, a.token)
	case a.user != "":
		// Both compared, so the time taken tells nothing of which one was wrong.
		u, p := equal(o.Username, a.user), equal(o.Password, a.password)
		ok = u && p
	}
	if ok {
		c.RegisterUser(a.worker)
	}
	return ok
}

// checkOrganiser lets in the organiser: its password alone, from loopback (the
// file is on this machine, and the password goes in clear on the listener).
func (a *listenAuth) checkOrganiser(c server.ClientAuthentication, o *server.ClientOpts) bool {
	if a.organiser == "" || o.Token != "" || o.Nkey != "" || !loopbackClient(c.RemoteAddress()) {
		return false
	}
	if !equal(o.Password, a.organiser) {
		return false
	}
	c.RegisterUser(a.organiserUser)
	return true
}

// loopbackClient reports whether a TCP client's address is a loopback one.
func loopbackClient(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
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

// WaitStored waits until every JetStream stream of the server has stored what it has
// taken in, or ctx ends (false). A stream takes the messages it captures into a
// queue that a goroutine of its own stores, behind the publishers when they are
// fast; a server that shuts down drops what that queue still holds. Call it once
// the publishers have flushed (a round trip: the server has then taken in all they
// sent) and before Shutdown.
func (s *Server) WaitStored(ctx context.Context) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for s.StorePending() > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// StorePending is how many messages the server's streams have taken in and not
// stored yet: their ingest queues, pending and in progress.
func (s *Server) StorePending() int {
	var pending int
	for name, q := range *s.ns.Ipqueuesz(&server.IpqueueszOptions{Filter: "' messages"}) {
		if strings.Contains(name, "] stream '") {
			pending += q.Pending + q.InProgress
		}
	}
	return pending
}

// Shutdown stops the server and waits until it has stopped.
func (s *Server) Shutdown() {
	if s.guard != nil {
		s.guard.Close()
	}
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// serverLogger routes the embedded nats-server's log into zerolog.
type serverLogger struct {
	l     zerolog.Logger
	fatal atomic.Pointer[string] // the first fatal message, which ends StartServer
	// noSpace counts the errors of a store that could not write for want of space.
	noSpace atomic.Uint64
	// link reports the failures of the link to a league hub, or is nil.
	link *linkReport
	// flood samples the lines one client may have the server write as fast as it
	// connects or publishes (floodKind); nil logs each.
	flood *logging.Sampler
}

// Noticef logs the server's notices at debug: its start-up banner (23 lines, blank
// ones among them) would bury the daemon's own few lines at info, and the daemon logs
// where it listens itself. It drops them after a fatal error: the server goes on to
// say it is ready, which it is not, and StartServerWith fails. A slow consumer is a
// notice of the server's too, but it means a connection closed, or messages dropped
// on it: a warning, sampled as one client may have many (floodKind).
func (s *serverLogger) Noticef(format string, v ...any) {
	if s.fatal.Load() != nil {
		return
	}
	if kind := floodKind(format, v); kind == kindSlowConsumer {
		if s.flood == nil {
			s.log(s.l.Warn(), format, v)
		} else if e := s.flood.Event(&s.l, zerolog.WarnLevel, kind); e != nil {
			s.log(e, format, v)
		}
		return
	}
	s.log(s.l.Debug(), format, v)
}
func (s *serverLogger) Warnf(format string, v ...any) { s.log(s.l.Warn(), format, v) }
func (s *serverLogger) Errorf(format string, v ...any) {
	msg := logging.Sprintf(format, v...)
	if storeOutOfSpace(format, v) {
		s.noSpace.Add(1)
	}
	if s.link != nil && s.link.saw(format, strings.TrimSpace(msg)) {
		return
	}
	if kind := floodKind(format, v); kind != "" && s.flood != nil {
		if e := s.flood.Event(&s.l, zerolog.ErrorLevel, kind); e != nil {
			s.log(e, format, v)
		}
		return
	}
	s.log(s.l.Error(), format, v)
}

// kindSlowConsumer is the kind of the server's notices of a slow consumer.
const kindSlowConsumer = "slow consumer"

// floodKind names the kind of a server's error line that one client may have it
// write at the rate it connects or publishes, or is "": a failed login (about 4,500
// a second from one loopback client), a client's own -ERR (one a connection), the
// connection bound, a permission violation (a tool's $SRV request whose reply a
// worker may not publish on, each answer a line). It looks at the server's format, which ends with the server's own words;
// the client's text is in the arguments, or in the connection's name before them,
// where at worst it has its own lines sampled. A slow consumer's notice (a
// connection that does not read what it asked for) is one too, told by the
// server's two formats of it (v2.15.2's client.go), not "Slow Consumer Recovered".
func floodKind(format string, v []any) string {
	switch {
	case strings.HasSuffix(format, "Slow Consumer Detected: MaxPending of %d Exceeded"),
		strings.HasSuffix(format, "Slow Consumer %s: WriteDeadline of %v exceeded with %d chunks of %d total bytes."):
		return kindSlowConsumer
	case strings.HasSuffix(format, "%v - %s") && len(v) == 2 && v[0] == server.ErrAuthentication:
		return "authentication error"
	case strings.HasSuffix(format, " - Client Error %s"):
		return "client error"
	case strings.HasSuffix(format, server.ErrTooManyConnections.Error()):
		return "maximum connections"
	case strings.Contains(format, " - Publish Violation - "):
		return "publish violation"
	case strings.Contains(format, " - Subscription Violation"):
		return "subscription violation"
	}
	return ""
}

// storeOutOfSpace reports whether an error line of the server's is its store's own
// report of a full disk: the file store's write error (filestore.go setWriteErr:
// "Filestore [<stream>] Critical write error: %v", the OS's error its one argument)
// or JetStream's "out of space". It looks at the format, which is the server's,
// never at the formatted line: a client's text (a user name the server refuses, a
// subject it denies) comes in the arguments, or after the client's "<addr> - cid:<n>
// - " in front of the format, and must never pass for a full disk.
func storeOutOfSpace(format string, v []any) bool {
	if format == "JetStream out of space, will be DISABLED" && len(v) == 0 {
		return true
	}
	if !strings.HasPrefix(format, "Filestore [") || !strings.HasSuffix(format, "] Critical write error: %v") || len(v) != 1 {
		return false
	}
	err, ok := v[0].(error)
	return ok && (errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "no space left"))
}

func (s *serverLogger) Debugf(format string, v ...any) {
	// The server calls it at debug only, or with a hub link that wants TLS:
	// then only its TLS handshake errors are worth a look below debug.
	if s.link != nil && strings.Contains(format, "handshake error") && s.link.saw(format, strings.TrimSpace(logging.Sprintf(format, v...))) {
		return
	}
	if s.l.GetLevel() > zerolog.DebugLevel {
		return
	}
	s.log(s.l.Debug(), format, v)
}

// log writes one line of the server's, trimmed and clipped (clipServerLine); a
// blank one (the banner's spacing) is no line at all, so that every JSON line has a
// message.
func (s *serverLogger) log(ev *zerolog.Event, format string, v []any) {
	msg := clipServerLine(strings.TrimSpace(logging.Sprintf(format, v...)))
	if msg == "" {
		ev.Discard()
		return
	}
	ev.Msg(msg)
}

// clipServerLine cuts a line of the server's: it quotes what its clients chose (a
// user name it refused, a connection's name, a subject it denied), each up to the
// 4 KB of a protocol line, and a client sends as many as it likes.
func clipServerLine(msg string) string { return logging.ClipQuoted(msg) }

// Fatalf does not exit, as nats-server's own logger would: StartServerWith returns
// the error, and its caller logs it, so here it is only a debug line.
func (s *serverLogger) Fatalf(format string, v ...any) {
	msg := logging.Sprintf(format, v...)
	s.l.Debug().Msg(msg)
	s.fatal.CompareAndSwap(nil, &msg)
}

func (s *serverLogger) Tracef(format string, v ...any) {
	// The server traces every protocol line; keep it below debug.
	s.log(s.l.Trace(), format, v)
}
