package league

import (
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/pairing"
)

// auth gives each connection its rights. A club's leaf connection, with the club's
// nkey (its signature of the connection's nonce) or its name and token, may only
// answer the hub's sourcing of its own domain: take the requests on
// $JS.<club>.API, reply on $JSC.R.<club>, deliver on $LEAGUE.<club>; nothing else
// it publishes reaches the hub. The hub's own in-process connections have every
// right; a client of the (loopback) listener without credentials is a tool that
// may read the league and change nothing. Every refusal is logged once, naming
// the club claimed and the cause, never a secret.
type auth struct {
	clubs atomic.Pointer[map[string]Club]
	keys  atomic.Pointer[map[string]Club] // by public nkey
	// accounts are the clubs' accounts at the hub, by club: a club's leaf is bound
	// to its own (accounts.go).
	accounts atomic.Pointer[map[string]*server.Account]
	log      zerolog.Logger

	mu sync.Mutex // the clubs' swap and the connections let in, together
	// conns are each club's leaf connections let in (a club may have more than
	// one open: a reconnection before the hub saw the old one end).
	conns map[string]*clubConns
	// gone are the connections of clubs removed or changed, closed by the hub
	// until goneFor has passed: one let in just before the swap may not yet be
	// registered with the server when the swap closes the others.
	gone map[uint64]time.Time
}

// clubConns are a club's leaf connections (when each was let in), and the
// credentials they showed.
type clubConns struct {
	creds Club
	ids   map[uint64]time.Time
}

// goneFor is how long a removed club's connections are looked for after a reload,
// and a connection let in is remembered before the server has registered it.
const goneFor = 10 * time.Second

func newAuth(clubs []Club, log zerolog.Logger) *auth {
	a := &auth{log: log, conns: map[string]*clubConns{}, gone: map[uint64]time.Time{}}
	a.set(clubs)
	return a
}

// set makes clubs the ones let in, and says the connections to close: those of a
// club removed or whose key or token changed. A connection being let in as the
// clubs are swapped is either among them or refused (admit looks again under mu).
func (a *auth) set(clubs []Club) []uint64 {
	m := make(map[string]Club, len(clubs))
	k := map[string]Club{}
	for _, c := range clubs {
		m[c.Name] = c
		if c.NKey != "" {
			k[c.NKey] = c
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clubs.Store(&m)
	a.keys.Store(&k)
	var closing []uint64
	for club, cc := range a.conns {
		if c, ok := m[club]; ok && c.sameCredentials(cc.creds) {
			continue
		}
		for id := range cc.ids {
			closing = append(closing, id)
			a.gone[id] = time.Now()
		}
		delete(a.conns, club)
	}
	return closing
}

func (c Club) sameCredentials(o Club) bool {
	return c.Name == o.Name && c.Token == o.Token && c.NKey == o.NKey
}

// setAccounts makes m the clubs' accounts.
func (a *auth) setAccounts(m map[string]*server.Account) {
	c := make(map[string]*server.Account, len(m))
	for k, v := range m {
		c[k] = v
	}
	a.accounts.Store(&c)
}

// account is the club's account; nil: none (the club's leaf is refused).
func (a *auth) account(club string) *server.Account {
	m := a.accounts.Load()
	if m == nil {
		return nil
	}
	return (*m)[club]
}

// allAccounts are the clubs' accounts, by club.
func (a *auth) allAccounts() map[string]*server.Account {
	if m := a.accounts.Load(); m != nil {
		return *m
	}
	return nil
}

// admit records a club's connection let in, unless the club's credentials were
// changed since they were checked (a reload between): then it is refused.
func (a *auth) admit(club Club, id uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := (*a.clubs.Load())[club.Name]; !ok || !cur.sameCredentials(club) {
		return false
	}
	cc := a.conns[club.Name]
	if cc == nil {
		cc = &clubConns{creds: club, ids: map[uint64]time.Time{}}
		a.conns[club.Name] = cc
	}
	cc.ids[id] = time.Now()
	return true
}

// linked says whether one of the club's connections is open (open says which are),
// forgetting those that are not, once goneFor has passed since they were let in:
// the server registers a connection only after the check let it in, and a reload
// must still find it.
func (a *auth) linked(club string, open func(uint64) bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	cc := a.conns[club]
	if cc == nil {
		return false
	}
	up := false
	for id, at := range cc.ids {
		switch {
		case open(id):
			up = true
		case time.Since(at) > goneFor:
			delete(cc.ids, id)
		}
	}
	return up
}

// stillGone are the removed clubs' connections to close again (a closed one is
// not found), those older than goneFor forgotten.
func (a *auth) stillGone() []uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ids []uint64
	for id, at := range a.gone {
		if time.Since(at) > goneFor {
			delete(a.gone, id)
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// Refusal causes, as the hub logs them (docs/league.md, "Who may do what").
const (
	causeNoConnect     = "no_connect"           // no CONNECT options
	causeJWT           = "jwt"                  // a JWT: the league has no accounts of JWTs
	causeUnknownKey    = "unknown_key"          // an nkey that is no club's
	causeOtherClub     = "key_of_another_club"  // a name and another club's key
	causeKeyAndSecret  = "key_and_secret"       // a key and a password or token too
	causeBadSignature  = "bad_signature"        // not the key's signature of this connection's nonce
	causeSigWithoutKey = "sig_without_key"      // a signature and no key
	causeAuthToken     = "auth_token"           // a club's token goes as its password, with its name
	causeNoName        = "no_name"              // neither a key nor a name
	causeUnknownClub   = "unknown_club"         // a name that is no club's
	causeKeyClubToken  = "key_club_token"       // a club with a key, given a password
	causeWrongToken    = "wrong_token"          // a token club's name and not its token
	causeReloaded      = "reloaded"             // the club's credentials changed as it was let in
	causeNoAccount     = "no_account"           // the club's account at the hub is not set up (never seen)
	causeToolCreds     = "credentials_at_tools" // the tools' listener takes no credentials
	causeKind          = "kind"                 // neither a leaf nor a client
)

// maxClaimLog bounds the name claimed as the log shows it.
const maxClaimLog = 64

// notAToken is compared with a password whose club has no token, so the time
// taken tells nothing; it is never a match (checkToken refuses first).
const notAToken = "\x00no token"

// checkLeaf says which club a leaf connection's options show, or the cause of
// its refusal; nonce is the one the hub sent it. claimed is who it says it is:
// its name, else its key's club.
func (a *auth) checkLeaf(o *server.ClientOpts, nonce []byte) (club Club, claimed, cause string) {
	if o == nil {
		return Club{}, "", causeNoConnect
	}
	claimed = a.claimed(o)
	switch {
	case o.JWT != "":
		return Club{}, claimed, causeJWT
	case o.Nkey != "":
		return a.checkKey(o, nonce, claimed)
	case o.Sig != "":
		return Club{}, claimed, causeSigWithoutKey
	case o.Token != "":
		return Club{}, claimed, causeAuthToken
	case o.Username == "":
		return Club{}, claimed, causeNoName
	}
	return a.checkToken(o, claimed)
}

// claimed is the club a connection says it is, for the log: its name, else its
// key's club; bounded in length.
func (a *auth) claimed(o *server.ClientOpts) string {
	name := o.Username
	if name == "" {
		name = (*a.keys.Load())[o.Nkey].Name
	}
	if len(name) > maxClaimLog {
		name = name[:maxClaimLog]
	}
	return name
}

// checkKey: the club of the public key, if the signature is the key's of the
// connection's nonce, and no name of another club and no secret beside it.
func (a *auth) checkKey(o *server.ClientOpts, nonce []byte, claimed string) (Club, string, string) {
	club, ok := (*a.keys.Load())[o.Nkey]
	switch {
	case !ok:
		return Club{}, claimed, causeUnknownKey
	case o.Username != "" && o.Username != club.Name:
		return Club{}, claimed, causeOtherClub
	case o.Password != "" || o.Token != "":
		return Club{}, claimed, causeKeyAndSecret
	case len(nonce) == 0 || o.Sig == "":
		return Club{}, claimed, causeBadSignature
	}
	sig, err := base64.RawURLEncoding.DecodeString(o.Sig)
	if err != nil {
		if sig, err = base64.StdEncoding.DecodeString(o.Sig); err != nil {
			return Club{}, claimed, causeBadSignature
		}
	}
	pub, err := nkeys.FromPublicKey(o.Nkey)
	if err != nil || pub.Verify(nonce, sig) != nil {
		return Club{}, claimed, causeBadSignature
	}
	return club, claimed, ""
}

// checkToken: the club of the name, if it has a token and the password is it.
func (a *auth) checkToken(o *server.ClientOpts, claimed string) (Club, string, string) {
	club, ok := (*a.clubs.Load())[o.Username]
	want := club.Token
	if want == "" {
		want = notAToken
	}
	// Compared even for an unknown club or a club with a key, so the time taken
	// tells nothing; the result counts only for a club with a token.
	match := subtle.ConstantTimeCompare([]byte(o.Password), []byte(want)) == 1
	switch {
	case !ok:
		return Club{}, claimed, causeUnknownClub
	case club.Token == "":
		return Club{}, claimed, causeKeyClubToken
	case !match:
		return Club{}, claimed, causeWrongToken
	}
	return club, claimed, ""
}

// Check is the server's authentication of every connection.
func (a *auth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	switch c.Kind() {
	case server.LEAF:
		club, claimed, cause := a.checkLeaf(o, c.GetNonce())
		acc := a.account(club.Name)
		switch {
		case cause != "":
		case acc == nil:
			cause = causeNoAccount
		case !a.admit(club, c.GetID()):
			cause = causeReloaded
		}
		if cause != "" {
			a.refuse(c, "leaf", claimed, cause)
			return false
		}
		// In the club's own account: what the club's forged flow control makes the
		// hub's sourcing publish stays there (accounts.go).
		c.RegisterUser(&server.User{Username: club.Name, Permissions: ClubPermissions(club.Name), Account: acc})
		return true
	case server.CLIENT:
		if addr := c.RemoteAddress(); addr != nil && addr.Network() == "pipe" {
			// In process: the hub itself, in its account, or in a club's when it
			// names one (every right there too).
			if o != nil && o.Username != "" {
				for club, acc := range a.allAccounts() {
					if o.Username == clubAccount(club) {
						c.RegisterUser(&server.User{Username: o.Username, Account: acc})
						return true
					}
				}
			}
			c.RegisterUser(&server.User{Username: "hub"})
			return true
		}
		switch {
		case o == nil:
			a.refuse(c, "tools", "", causeNoConnect)
			return false
		case o.Username != "" || o.Password != "" || o.Token != "" || o.Nkey != "" || o.Sig != "" || o.JWT != "":
			a.refuse(c, "tools", a.claimed(o), causeToolCreds)
			return false
		}
		c.RegisterUser(&server.User{Username: "tool", Permissions: ToolPermissions()})
		return true
	}
	a.refuse(c, "other", "", causeKind)
	return false
}

// refuse logs a refusal: the listener, the club claimed, the cause, the address.
func (a *auth) refuse(c server.ClientAuthentication, listener, claimed, cause string) {
	ev := a.log.Warn().Str("listener", listener).Str("club", claimed).Str("cause", cause)
	if addr := c.RemoteAddress(); addr != nil {
		ev = ev.Str("remote", addr.String())
	}
	ev.Msg("league: connection refused")
}

// ClubPermissions are a club's rights on its leaf connection at the hub, as the
// club sees them: what it may publish into the hub, and what the hub may send it.
func ClubPermissions(club string) *server.Permissions {
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			deliverPrefix(club) + ".>", // what the hub sources from it
			"$JSC.R." + club + ".>",    // its answers to the hub's API requests
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{
			apiPrefix(club) + ".>", // the hub's requests to its domain
			"$JS.FC.>",             // the hub's flow control of its sourcing consumers
		}},
	}
}

// ToolPermissions are the rights of the hub's tools: an allow list of exactly what
// they use to read the league (history --club, watch --club and render --club with
// ordered pull consumers, message and direct gets; the nats CLI's stream info, stream
// view, kv get, ls and watch, whose kv readers are ordered push consumers with flow
// control), and nothing else: no league.> (the page's link states are the hub's word
// only), no $LEAGUE.> or $JSC.> (a club's deliveries and answers), no club's domain,
// no stream or bucket written, no durable consumer made by the legacy subject.
//
// nats-server does not check a push consumer's deliver subject against its creator's
// publish rights, and no API subject tells a push consumer from a pull one: a tool
// can still make a consumer deliver onto a subject it may not publish on. So a tool
// also receives only on its inbox (_INBOX.>; the hub's own connection uses another
// prefix, hubInboxPrefix): it never sees the hub's sourcing, whose deliver subjects
// ($LEAGUE.<club>.S.<8 random base-62 characters>) are then not known to it, nor
// the hub's replies and reads.
func ToolPermissions() *server.Permissions {
	api := "$JS.API."
	return &server.Permissions{
		Publish: &server.SubjectPermission{
			Allow: []string{
				api + "INFO", api + "STREAM.NAMES", api + "STREAM.LIST",
				api + "STREAM.INFO.*", api + "STREAM.MSG.GET.*",
				api + "DIRECT.GET.*", api + "DIRECT.GET.*.>",
				api + "CONSUMER.CREATE.*", api + "CONSUMER.CREATE.*.>",
				api + "CONSUMER.INFO.*.*", api + "CONSUMER.MSG.NEXT.*.*",
				api + "CONSUMER.DELETE.*.*", api + "CONSUMER.NAMES.*", api + "CONSUMER.LIST.*",
				"$JS.FC." + boardsStream + ".>", // the kv readers' flow control
				"$JS.FC.KV_" + PairingsBucket + ".>",
				// The organiser's pairings load: the hub checks the round and writes.
				pairing.LoadSubject(SubjectPrefix),
			},
			// Outside the allow list anyway; said again so that a broader allow list
			// can never let a tool tell a link state, deliver as a club, or answer,
			// nor reach a club's account (its intake's API and deliveries).
			Deny: []string{SubjectPrefix + ".>", "$LEAGUE.>", "$JSC.>", "_INBOX.>", "$JS.*.API.>", "$JSIN.>", "$LEAGUEIN.>"},
		},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
}

// hubInboxPrefix is the inbox of the hub's own connection: not _INBOX, where a tool
// may receive.
const hubInboxPrefix = "_HUB_INBOX"

// boardsStream is the league's bucket's stream, which the nats CLI's kv readers follow.
var boardsStream = "KV_" + bus.Subjects{Prefix: SubjectPrefix}.Boards()

// serverLogger routes the hub's nats-server log into zerolog, its formats, which
// may hold a client's name, through logging.Sprintf. The server's own
// line of a refused connection is dropped: auth has logged the refusal, with the
// club claimed and the cause, and one line a refusal is enough.
type serverLogger struct{ l zerolog.Logger }

func (s *serverLogger) Noticef(format string, v ...any) {
	s.l.Info().Msg(logging.Sprintf(format, v...))
}
func (s *serverLogger) Warnf(format string, v ...any) { s.l.Warn().Msg(logging.Sprintf(format, v...)) }
func (s *serverLogger) Errorf(format string, v ...any) {
	// The server's line is "<conn> - authentication error", the user after it
	// when one was given.
	if strings.HasSuffix(format, " - "+server.ErrAuthentication.Error()) ||
		len(v) > 0 && v[0] == any(server.ErrAuthentication) && strings.HasSuffix(format, " - %v - %s") {
		return
	}
	s.l.Error().Msg(logging.Sprintf(format, v...))
}
func (s *serverLogger) Fatalf(format string, v ...any) {
	s.l.Error().Msg(logging.Sprintf(format, v...))
}
func (s *serverLogger) Debugf(format string, v ...any) {
	s.l.Debug().Msg(logging.Sprintf(format, v...))
}
func (s *serverLogger) Tracef(format string, v ...any) {}
