package bus

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// HubLink is a club's link to a league hub: the embedded server joins the hub as a
// leaf node, with a JetStream domain of its own (the club's name), so that its
// history, its bucket and every request of its ports stay on this server whether the
// link is up or not. The hub reads the club's history stream across the domain; the
// link carries nothing the club's ports wait on.
type HubLink struct {
	// URL is the hub's leaf-node listener: nats-leaf://HOST:PORT (tls:// for TLS),
	// comma-separated for a hub cluster.
	URL string
	// Club is the club's name: its JetStream domain, and the user it presents at
	// the hub. A subject token (ValidToken).
	Club string
	// Token is the club's password at the hub; or SeedFile, a file (mode 0600)
	// holding the club's nkey seed ("SU..."), whose public key is the club's nkey
	// in the hub's [[club]] table: the club signs the hub's nonce, and the seed
	// never leaves the club.
	Token    string
	SeedFile string
	// TLSCA is a PEM file of the CAs that sign the hub's certificate; empty: the
	// system's roots. Set, or with a tls:// URL, the link is TLS or nothing: the
	// club never sends its credentials in clear.
	TLSCA string
	// TLSCert and TLSKey are the club's client certificate, PEM files, for a hub
	// that wants one (mutual TLS); they ask for TLS too.
	TLSCert, TLSKey string
}

// HubLinkReconnect is how long the embedded server waits between attempts to join
// the hub while the link is down.
const HubLinkReconnect = 2 * time.Second

// Check validates the link's settings.
func (h *HubLink) Check() error {
	switch {
	case !ValidToken(h.Club):
		return fmt.Errorf("hub link: club name %q: want lowercase letters, digits, '-' and '_' (it is the club's JetStream domain and its user at the hub)", h.Club)
	case h.Token != "" && h.SeedFile != "":
		return errors.New("hub link: give the hub's token or a seed file, not both")
	case h.Token == "" && h.SeedFile == "":
		return errors.New("hub link: the hub needs the club's credentials: a seed file (--hub-seed-file, hub.seed_file; scoreboard hub key at the hub makes it) or a token ($SCOREBOARD_HUB_TOKEN, hub.token)")
	}
	if h.SeedFile != "" {
		if _, err := ReadSeedFile(h.SeedFile); err != nil {
			return err
		}
	}
	if _, err := h.tlsConfig(); err != nil {
		return err
	}
	_, err := h.urls()
	return err
}

// WantsTLS says whether the club asks for TLS: a tls:// URL, or a CA for the
// hub's certificate.
func (h *HubLink) WantsTLS() bool {
	if h.TLSCA != "" || h.TLSCert != "" {
		return true
	}
	for _, s := range strings.Split(h.URL, ",") {
		if strings.HasPrefix(strings.TrimSpace(s), "tls://") {
			return true
		}
	}
	return false
}

// tlsConfig is the link's TLS: the hub's CA from TLSCA, else the system's roots;
// the club's certificate if it has one.
func (h *HubLink) tlsConfig() (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if (h.TLSCert == "") != (h.TLSKey == "") {
		return nil, errors.New("hub link: the club's certificate (hub.tls_cert) and its key (hub.tls_key) go together")
	}
	if h.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("hub link: the club's certificate (hub.tls_cert, hub.tls_key): %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if h.TLSCA == "" {
		return c, nil
	}
	pem, err := os.ReadFile(h.TLSCA)
	if err != nil {
		return nil, fmt.Errorf("hub link: the hub's CA (hub.tls_ca): %w", err)
	}
	c.RootCAs = x509.NewCertPool()
	if !c.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("hub link: the hub's CA (hub.tls_ca) %s: no PEM certificate in it", h.TLSCA)
	}
	return c, nil
}

// CheckTLS checks the link's TLS settings alone: the CA file, the club's certificate.
func (h *HubLink) CheckTLS() error {
	_, err := h.tlsConfig()
	return err
}

// seedFileMax bounds what is read of a seed file: a seed is 58 characters, and a
// file of more is not one scoreboard hub key wrote.
const seedFileMax = 4096

// ReadSeedFile reads a club's nkey seed from path, refusing a file that the group
// or others may read: whoever holds the seed is the club at the hub. Only a regular
// file is taken, opened without blocking: a FIFO would hold the daemon's start in
// open(2), silent and deaf to SIGTERM.
func ReadSeedFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("hub link: seed file (hub.seed_file): %w", err)
	}
	if err := seedFileKind(path, fi); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("hub link: seed file (hub.seed_file): %w", err)
	}
	defer f.Close()
	// The file opened is checked again: the path may have changed since the Stat.
	if fi, err = f.Stat(); err != nil {
		return "", fmt.Errorf("hub link: seed file (hub.seed_file): %w", err)
	}
	if err := seedFileKind(path, fi); err != nil {
		return "", err
	}
	if fi.Mode().Perm()&seedPrivate(path) != 0 {
		return "", fmt.Errorf("hub link: seed file %s has mode %04o: others than its owner may read the club's key; chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := io.ReadAll(io.LimitReader(f, seedFileMax+1))
	if err != nil {
		return "", fmt.Errorf("hub link: seed file (hub.seed_file): %w", err)
	}
	if len(data) > seedFileMax {
		return "", fmt.Errorf("hub link: seed file %s is larger than %d bytes: no seed file; scoreboard hub key NAME --out FILE at the hub makes one", path, seedFileMax)
	}
	seed := strings.TrimSpace(string(data))
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil || !strings.HasPrefix(seed, "SU") {
		return "", fmt.Errorf("hub link: seed file %s: no user nkey seed (SU...) in it; scoreboard hub key NAME --out FILE at the hub makes one", path)
	}
	kp.Wipe()
	return seed, nil
}

// seedPrivate is the mode bits a seed file at path may not have. Anywhere, its
// group may not read it. systemd (254 and later) gives a service its
// LoadCredential= copies at mode 0440, root's group, with an ACL for the service's
// user, in $CREDENTIALS_DIRECTORY, a directory no one else may enter: there, only
// others' bits count, and the directory's own are checked as well.
func seedPrivate(path string) os.FileMode {
	creds := os.Getenv("CREDENTIALS_DIRECTORY")
	if creds == "" || filepath.Dir(filepath.Clean(path)) != filepath.Clean(creds) {
		return 0o077
	}
	if di, err := os.Stat(creds); err != nil || !di.IsDir() || di.Mode().Perm()&0o007 != 0 {
		return 0o077
	}
	return 0o007
}

// seedFileKind refuses a seed file that is not a regular file, naming what it is.
func seedFileKind(path string, fi os.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return fmt.Errorf("hub link: seed file (hub.seed_file) %s is a directory, want the file scoreboard hub key wrote", path)
	default:
		return fmt.Errorf("hub link: seed file (hub.seed_file) %s is not a regular file (%s): give the file scoreboard hub key NAME --out FILE wrote, copied as a plain file of mode 0600", path, fileKind(fi.Mode()))
	}
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// CheckHubURL checks a hub's URL on its own: the schemes, a host and a port, no
// credentials in it.
func CheckHubURL(s string) error {
	_, err := (&HubLink{URL: s}).urls()
	return err
}

func (h *HubLink) urls() ([]*url.URL, error) {
	var us []*url.URL
	for _, s := range strings.Split(h.URL, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("hub link: URL %q: %w", s, err)
		}
		switch u.Scheme {
		case "nats-leaf", "nats", "tls":
		default:
			return nil, fmt.Errorf("hub link: URL %q: want nats-leaf://HOST:PORT (the hub's leaf-node listener), or tls://HOST:PORT", s)
		}
		if u.Host == "" || u.Port() == "" {
			return nil, fmt.Errorf("hub link: URL %q: want a host and a port, such as nats-leaf://hub.example.org:7422", s)
		}
		if u.User != nil {
			return nil, fmt.Errorf("hub link: URL %q: credentials do not go in the URL: give the club's seed file in hub.seed_file, or its token in $SCOREBOARD_HUB_TOKEN or hub.token", RedactURL(s))
		}
		if h.Token != "" {
			u.User = url.UserPassword(h.Club, h.Token)
		}
		us = append(us, u)
	}
	return us, nil
}

// ClubDenyImports are the subjects the club's server takes nothing on from the hub:
// its ports' subjects (dumps, results, inboxes of requests, states, solve), its
// local JetStream API and bucket, the system account's requests (the club's
// connections and stats), and every call of its domain's API that would write
// into, or take away from, its history, or move a consumer. What is left is what
// the hub's sourcing needs: creating (in the one form it uses) and deleting its own
// consumers, and stream info. A consumer's settings are in the request's body, out
// of the subjects' reach: GuardLink judges those.
func ClubDenyImports(prefix, club string) []string {
	api := "$JS." + club + ".API."
	deny := []string{
		prefix + ".>", "_INBOX.>", "$SRV.>", "$KV.>", "$O.>", "$JS.API.>", "$SYS.>",
		api + "STREAM.CREATE.>", api + "STREAM.UPDATE.>", api + "STREAM.DELETE.>",
		api + "STREAM.PURGE.>", api + "STREAM.MSG.DELETE.>", api + "STREAM.RESTORE.>",
		api + "STREAM.SNAPSHOT.>", api + "STREAM.PEER.>", api + "STREAM.LEADER.>",
		api + "STREAM.CANCEL_MOVE.>",
		api + "STREAM.MSG.GET.>", api + "DIRECT.>", api + "ACCOUNT.>", api + "META.>",
		api + "SERVER.>", api + "CONSUMER.DURABLE.>", api + "CONSUMER.PAUSE.>",
		api + "CONSUMER.LEADER.>", api + "CONSUMER.MSG.>", api + "CONSUMER.RESET.>",
		api + "CONSUMER.UNPIN.>", api + "CONSUMER.PEER.>",
	}
	return append(deny, consumerCreateDeny(api, prefix)...)
}

// consumerCreateDeny are the consumer-create subjects the hub's sourcing does not
// use. It creates with CONSUMER.CREATE.<stream>.<name>.<filter>, its filter the
// club's prefix and ">" (one source, one subject transform): so the forms without
// a name or a filter (whose body may say anything), and every filter of another
// number of tokens, are refused before they reach the server.
func consumerCreateDeny(api, prefix string) []string {
	create := api + "CONSUMER.CREATE.*"
	n := strings.Count(prefix, ".") + 1 // the prefix's tokens; the filter has one more
	deny := []string{create, create + ".*"}
	for k := 1; k <= n; k++ {
		deny = append(deny, create+".*"+strings.Repeat(".*", k))
	}
	more := create + ".*" + strings.Repeat(".*", n+2)
	return append(deny, more, more+".>")
}

// ClubDenyExports are the subjects the club sends nothing on to the hub, even if
// the hub shows interest: its ports' traffic and its local API. The hub gets the
// club's units only from the club's history stream, through its own sourcing.
func ClubDenyExports(prefix string) []string {
	return []string{prefix + ".>", "$SRV.>", "$KV.>", "$JS.API.>"}
}

// apply sets the leaf remote and the domain on opts. The server's name is the
// club's: two leaf nodes of one name at the hub replace each other ("Duplicate
// Remote LeafNode Connection").
func (h *HubLink) apply(opts *server.Options, prefix string) error {
	if err := h.Check(); err != nil {
		return err
	}
	if !opts.JetStream {
		return errors.New("hub link: the club needs its history (JetStream, a state dir) for the hub to read")
	}
	urls, err := h.urls()
	if err != nil {
		return err
	}
	opts.ServerName = "scoreboard-" + h.Club
	opts.JetStreamDomain = h.Club
	opts.LeafNode.ReconnectInterval = HubLinkReconnect
	remote := &server.RemoteLeafOpts{
		URLs:        urls,
		DenyImports: ClubDenyImports(prefix, h.Club),
		DenyExports: ClubDenyExports(prefix),
	}
	if h.SeedFile != "" {
		if remote.Nkey, err = ReadSeedFile(h.SeedFile); err != nil {
			return err
		}
	}
	if h.WantsTLS() {
		// TLS or nothing: the handshake comes before the CONNECT that carries the
		// credentials, and a hub that answers without TLS fails it.
		remote.TLS = true
		if remote.TLSConfig, err = h.tlsConfig(); err != nil {
			return err
		}
		remote.TLSTimeout = hubTLSTimeout.Seconds()
	}
	opts.LeafNode.Remotes = []*server.RemoteLeafOpts{remote}
	return nil
}

// hubTLSTimeout bounds the link's TLS handshake: a Pi on a home line to a hub
// across the internet.
const hubTLSTimeout = 5 * time.Second

// HubLinked reports whether the server's link to the hub is up (a leaf connection
// is open). Always false without a HubLink. The club polls it (its log, its
// /metrics): a link seen up makes the next failure's cause told at once.
func (s *Server) HubLinked() bool {
	up := s.ns.NumLeafNodes() > 0
	if up && s.log.link != nil {
		s.log.link.up()
	}
	return up
}
