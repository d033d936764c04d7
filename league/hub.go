package league

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
)

// Options configure the hub's server.
type Options struct {
	Listen     string // the hub's tools: HOST:PORT (loopback), port 0 for any
	LeafListen string // the clubs: HOST:PORT, port 0 for any
	StoreDir   string // the clubs' streams' store
	Clubs      []Club
	// LeafTLSCert and LeafTLSKey, PEM files, put TLS on the leaf listener: then
	// every club joins in TLS, none in clear.
	LeafTLSCert, LeafTLSKey string
	// LeafTLSClientCA, a PEM file of CAs, asks each club for a certificate one of
	// them signed (mutual TLS), on top of its key or token.
	LeafTLSClientCA string
	// State is StoreDir, locked (history.OpenStateDir): the clubs' streams are
	// fitted to its filesystem's room. nil: not fitted.
	State *history.StateDir
	// MaxMemory, if not 0, is the server's JetStream memory (memory.budget's
	// quarter), and bounds LEAGUE_BOARDS, the one stream held in memory: the server
	// would otherwise take 3/4 of Go's soft limit, and refuse the bucket's 256 MiB
	// under a small budget.
	MaxMemory int64
}

// Hub is the league's hub: an embedded nats-server with JetStream in the domain
// "league", a leaf-node listener for the clubs, and a stream per club.
type Hub struct {
	ns    *server.Server
	opts  *server.Options
	nc    *nats.Conn
	js    jetstream.JetStream
	auth  *auth
	log   zerolog.Logger
	mu    sync.Mutex // serialises SetClubs
	clubs []Club
	// replicas are the clubs' streams' and LEAGUE_BOARDS' copies: 1 on one server, 3 on a
	// hub cluster of three (Attach).
	replicas int
	// boardsBytes bounds LEAGUE_BOARDS (boardsMaxBytes, or less under Options.MaxMemory).
	boardsBytes int64

	portsMu sync.Mutex
	ports   map[string]map[string]bool // club -> its ports seen in LEAGUE_BOARDS

	// state is the hub's store, whose room the clubs' streams are fitted to; nil
	// on an external server. migrated: the LEAGUE of an earlier hub was parked.
	state    *history.StateDir
	migrated bool
	// junk counts what the boards keeper refused, per club and reason.
	junk junkCounts
	// clubsChanged tells the boards keeper the clubs changed (SetClubs).
	clubsChanged chan struct{}
	// updateFault, set by a test, fails a stream's update (an API timeout); read
	// by the looks at several clubs at once, some without mu.
	updateFault atomic.Pointer[func(jetstream.StreamConfig) error]
	// accounts are the clubs' accounts at the embedded server, by club (accounts.go).
	accounts map[string]*server.Account
	// gate gives the intakes their rooms under a budget (gate.go); nil: no budget.
	gate *gate
	// pairings are the game on each club's ports (LEAGUE_PAIRINGS).
	pairings hubPairings
	// intakeHolds are the clubs' intakes a kick holds while it
	// asks the club across its link, mu let go of (clubstream.go); under mu.
	intakeHolds map[string]*intakeHold
}

// Start starts the hub's server and sets up a stream per club, sourcing the club.
func Start(ctx context.Context, o Options, log zerolog.Logger) (*Hub, error) {
	if err := CheckClubs(o.Clubs); err != nil {
		return nil, err
	}
	if o.StoreDir == "" {
		return nil, errors.New("hub: a state dir is needed for the clubs' streams")
	}
	host, port, err := bus.ParseListen(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if !bus.Loopback(host) {
		return nil, fmt.Errorf("hub: client listener %q: the hub's tools have read rights without credentials, so it listens on loopback only (127.0.0.1:PORT)", o.Listen)
	}
	lhost, lport, err := bus.ParseListen(o.LeafListen)
	if err != nil {
		return nil, fmt.Errorf("hub: leaf listener: %w", err)
	}
	lg := log.With().Str("component", "league").Logger()
	a := newAuth(o.Clubs, lg)
	opts := &server.Options{
		ServerName:      "scoreboard-hub",
		Host:            host,
		Port:            orRandom(port),
		NoSigs:          true,
		MaxPayload:      bus.MaxPayload,
		JetStream:       true,
		JetStreamDomain: Domain,
		StoreDir:        o.StoreDir,
		// Replies to the sourcing's API requests then name the club's domain, so
		// a club may answer its own requests only ($JSC.R.<club>.>).
		FeatureFlags:               map[string]bool{server.FeatureFlagJsAPIReplyFormatV2: true},
		CustomClientAuthentication: a,
	}
	boards := int64(boardsMaxBytes)
	if o.MaxMemory > 0 {
		// Beside the bucket, each club's account's memory (its intake: accounts.go),
		// which JetStream reserves whole from the server's when the account is set
		// up. What the intakes hold is bound by their accounts, so this is a
		// reservation only, for as many clubs as intakeReserveClubs.
		opts.JetStreamMaxMemory = o.MaxMemory + intakeMaxBytes*intakeReserveClubs
		boards = min(boards, o.MaxMemory)
	}
	opts.LeafNode.Host, opts.LeafNode.Port = lhost, orRandom(lport)
	if opts.LeafNode.TLSConfig, err = leafTLS(o.LeafTLSCert, o.LeafTLSKey, o.LeafTLSClientCA); err != nil {
		return nil, err
	}
	opts.LeafNode.TLSTimeout = leafTLSTimeout.Seconds()
	// The clubs join by the URL they are given (a name, a proxy, a NAT): the hub
	// does not tell them its own addresses to try instead.
	opts.LeafNode.NoAdvertise = true
	// No compression on the links: a club sends some 16 KB a second of small text,
	// and S2's reader and writer hold about 2 MB of buffers a link at the hub
	// (measured: 40 of the 75 MB of heap of a hub of 20 clubs), the most of what a
	// club costs it (BENCHMARKS.md, "A league: 200 clubs").
	opts.LeafNode.Compression = server.CompressionOpts{Mode: server.CompressionOff}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("hub: nats-server: %w", err)
	}
	sl := &serverLogger{l: log.With().Str("component", "nats").Logger()}
	ns.SetLoggerV2(sl, sl.l.GetLevel() <= zerolog.DebugLevel, false, false)
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("hub: nats-server not ready after 10s (is %s or %s taken?)", o.Listen, o.LeafListen)
	}
	nc, err := hubConn(ns, "scoreboard hub")
	if err != nil {
		ns.Shutdown()
		return nil, fmt.Errorf("hub: connect: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		ns.Shutdown()
		return nil, err
	}
	h := &Hub{ns: ns, opts: opts, nc: nc, js: js, auth: a, log: lg, state: o.State, boardsBytes: boards, clubsChanged: make(chan struct{}, 1),
		accounts: map[string]*server.Account{}, gate: newGate(o.MaxMemory)}
	if err := h.SetClubs(ctx, o.Clubs); err != nil {
		h.Shutdown()
		return nil, err
	}
	return h, nil
}

// Attach runs the league on an existing NATS server or cluster that nc is
// connected to, with rights to manage its streams: a league that runs its own
// nats-server as the hub (configs/league-hub.conf), whose leaf listener and clubs'
// users are in that server's configuration. It sets up a stream per club.
// The links' states are not known to it (Links is empty).
// replicas is the clubs' streams' and the bucket's: 3 on a cluster of three, so that the league
// survives a node's loss.
func Attach(ctx context.Context, nc *nats.Conn, clubs []Club, replicas int, log zerolog.Logger) (*Hub, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	h := &Hub{nc: nc, js: js, replicas: replicas, boardsBytes: boardsMaxBytes, log: log.With().Str("component", "league").Logger(), clubsChanged: make(chan struct{}, 1)}
	if err := h.SetClubs(ctx, clubs); err != nil {
		return nil, err
	}
	return h, nil
}

// leafTLSTimeout bounds a club's TLS handshake: a Pi on a home line.
const leafTLSTimeout = 5 * time.Second

// CheckLeafTLS says what is wrong with the leaf listener's certificate settings
// (the pair cannot be read, or is not a pair; the clubs' CA): what Start would
// refuse, for scoreboard hub --check.
func CheckLeafTLS(certFile, keyFile, clientCA string) error {
	_, err := leafTLS(certFile, keyFile, clientCA)
	return err
}

// leafTLS is the leaf listener's TLS, or nil without a certificate; with
// clientCA, the clubs' certificates are asked for and checked against it.
func leafTLS(certFile, keyFile, clientCA string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		if clientCA != "" {
			return nil, errors.New("hub: leaf TLS: league.leaf_tls_client_ca needs the hub's own certificate, league.leaf_tls_cert and league.leaf_tls_key")
		}
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("hub: leaf TLS: league.leaf_tls_cert and league.leaf_tls_key go together")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("hub: leaf TLS (league.leaf_tls_cert, league.leaf_tls_key): %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA != "" {
		pem, err := os.ReadFile(clientCA)
		if err != nil {
			return nil, fmt.Errorf("hub: leaf TLS: the clubs' CA (league.leaf_tls_client_ca): %w", err)
		}
		c.ClientCAs = x509.NewCertPool()
		if !c.ClientCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("hub: leaf TLS: the clubs' CA (league.leaf_tls_client_ca) %s: no PEM certificate in it", clientCA)
		}
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c, nil
}

func orRandom(port int) int {
	if port == 0 {
		return server.RANDOM_PORT
	}
	return port
}

// SetClubs makes clubs the league: each has its stream, sourcing it (a club
// removed: its stream parked, kept), and their credentials are what the leaf
// listener takes from now on (a club removed or whose key or token changed is let
// in no more, and its links are closed). A club kept keeps its source, so its
// sourcing goes on from where it was. It is applied whole or not at all: the
// streams first, undone if one cannot be set up, then the credentials.
func (h *Hub) SetClubs(ctx context.Context, clubs []Club) error {
	if err := CheckClubs(clubs); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.linkAccounts(clubs); err != nil {
		return err
	}
	if err := h.setStreams(ctx, clubs); err != nil {
		return err
	}
	if h.auth != nil {
		h.closeLeafs(h.auth.set(clubs))
	}
	h.parkRemoved(ctx, clubs)
	h.clubs = slices.Clone(clubs)
	h.notifyClubs()
	h.log.Info().Strs("clubs", names(clubs)).Msg("league clubs set")
	return nil
}

// closeLeafs closes the leaf connections of clubs no longer let in; one not found
// is closed already, or not yet registered (closeGone finds it).
func (h *Hub) closeLeafs(ids []uint64) {
	if h.ns == nil {
		return // the server's own configuration says who is let in
	}
	for _, id := range ids {
		if h.ns.DisconnectClientByID(id) == nil {
			h.log.Info().Uint64("conn", id).Msg("league: the link of a club removed or whose credentials changed is closed")
		}
	}
}

// Links says which clubs' links are up: the leaf connection that authenticated
// with the club's credentials last is open.
func (h *Hub) Links() map[string]bool {
	up := map[string]bool{}
	if h.ns == nil {
		return up
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	open := func(id uint64) bool { return h.ns.GetLeafNode(id) != nil }
	for _, c := range h.clubs {
		up[c.Name] = h.auth.linked(c.Name, open)
	}
	return up
}

// LeafConns is how many leaf connections the hub's server has open, of clubs
// known or not.
func (h *Hub) LeafConns() int {
	if h.ns == nil {
		return 0
	}
	return h.ns.NumLeafNodes()
}

// LinkedClubs is how many clubs have their link up.
func (h *Hub) LinkedClubs() int {
	n := 0
	for _, up := range h.Links() {
		if up {
			n++
		}
	}
	return n
}

// Link states on the page: each of a club's ports shows its club's link.
const (
	LinkUp   = "linked"
	LinkDown = "link down"
)

// linkStatesEvery is how often the link states are published again, for pages
// started later.
const linkStatesEvery = 5 * time.Second

// sawPort records a club's port, whose tile then shows the club's link.
func (h *Hub) sawPort(club, port string) {
	h.portsMu.Lock()
	defer h.portsMu.Unlock()
	if h.ports == nil {
		h.ports = map[string]map[string]bool{}
	}
	if h.ports[club] == nil {
		h.ports[club] = map[string]bool{}
	}
	h.ports[club][port] = true
}

// publishLink tells the page a club's link state, on each of its ports' tiles
// (league.port.<club>.<port>, as a daemon tells its ports' device states).
func (h *Hub) publishLink(club string, up bool, since time.Time) {
	if h.ns == nil {
		return // an external server's links are not known here
	}
	h.portsMu.Lock()
	var ports []string
	for p := range h.ports[club] {
		ports = append(ports, p)
	}
	h.portsMu.Unlock()
	st := LinkDown
	if up {
		st = LinkUp
	}
	for _, p := range ports {
		key := club + "." + p
		data, _ := json.Marshal(bus.PortState{Port: key, State: st, Since: since})
		_ = h.nc.Publish(SubjectPrefix+".port."+key, data)
	}
}

// WatchLinks logs each change of a club's link, every period, and tells the page,
// until ctx ends.
func (h *Hub) WatchLinks(ctx context.Context, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	was := map[string]bool{}
	upSince := map[string]time.Time{}
	kicked := map[string]time.Time{}
	kickEvery := sourceKickAfter
	if h.ns == nil {
		kickEvery = externalKickEvery
	}
	since := map[string]time.Time{}
	// looked: when a club's source was last looked at since its link came up.
	looked := map[string]time.Time{}
	seqs := &seenSeqs{}
	learn := newLearner(h)
	defer learn.wait()
	var published, listed time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		links := h.Links()
		if h.ns != nil {
			h.closeLeafs(h.auth.stillGone())
		}
		if h.ns == nil {
			// An external server: the links are not known here, so every club's
			// source counts as on a link that is up.
			h.mu.Lock()
			for _, c := range h.clubs {
				links[c.Name] = true
			}
			h.mu.Unlock()
		}
		// A club's source is looked at linkSettle after its link comes up (after a
		// cut, or the hub's start, the server's own retry of the source may be a
		// minute away), then with every club's each sourceKickAfter.
		var fresh, idle []string
		every := time.Since(listed) >= sourceKickAfter
		for club, up := range links {
			if up && !was[club] {
				upSince[club] = time.Now()
			}
			switch {
			case !up:
			case looked[club].Before(upSince[club]) && time.Since(upSince[club]) >= linkSettle:
				fresh = append(fresh, club)
			case every && time.Since(upSince[club]) > sourceKickAfter && time.Since(kicked[club]) > kickEvery:
				idle = append(idle, club)
			}
			if _, ok := since[club]; !ok || up != was[club] {
				since[club] = time.Now()
			}
			if up != was[club] {
				h.publishLink(club, up, since[club])
				ev := h.log.Info()
				if !up {
					ev = h.log.Warn()
				}
				ev.Str("club", club).Bool("link_up", up).Msg("club link changed")
			}
			was[club] = up
		}
		// The sources are looked at together, in one listing of the streams: two
		// API calls a club each second were 400 a second at 200 clubs.
		if every && len(idle) > 0 || len(fresh) > 0 {
			if every {
				listed = time.Now()
			}
			for _, club := range fresh {
				looked[club] = time.Now()
			}
			for _, club := range h.kickIdleSources(ctx, fresh, idle, seqs, learn) {
				kicked[club] = time.Now()
			}
		}
		if h.ns != nil && time.Since(published) > linkStatesEvery {
			for club, up := range links {
				h.publishLink(club, up, since[club])
			}
			published = time.Now()
		}
	}
}

// Conn is the hub's own in-process connection (every right).
func (h *Hub) Conn() *nats.Conn { return h.nc }

// ClientURL is where the hub's tools connect.
func (h *Hub) ClientURL() string {
	if h.ns == nil {
		return h.nc.ConnectedUrlRedacted()
	}
	return h.ns.ClientURL()
}

// LeafURL is where the clubs connect, as a club's hub.url takes it:
// nats-leaf://HOST:PORT, or tls://HOST:PORT when the listener is TLS (a club that
// copied the first from the hub's log would fail its handshake).
func (h *Hub) LeafURL() string {
	if h.ns == nil {
		return ""
	}
	scheme := "nats-leaf"
	if h.opts.LeafNode.TLSConfig != nil {
		scheme = "tls"
	}
	// The server writes the port it took into its options.
	return scheme + "://" + net.JoinHostPort(leafHost(h.opts.LeafNode.Host), strconv.Itoa(h.opts.LeafNode.Port))
}

func leafHost(h string) string {
	if h == "" || h == "0.0.0.0" || h == "::" {
		return "127.0.0.1"
	}
	return h
}

// Shutdown stops the hub's server.
func (h *Hub) Shutdown() {
	h.nc.Close()
	if h.ns != nil {
		h.ns.Shutdown()
		h.ns.WaitForShutdown()
	}
}

// hubConn is a connection of the hub's own to its in-process server, as its
// main one: the hub's inbox prefix, reconnecting without end.
func hubConn(ns *server.Server, name string) (*nats.Conn, error) {
	return nats.Connect("", nats.InProcessServer(ns), nats.Name(name), nats.MaxReconnects(-1), nats.CustomInboxPrefix(hubInboxPrefix))
}
