package bus

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
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
	// Token is the club's password at the hub; or CredsFile, a .creds file (user
	// JWT and nkey seed) for a hub in operator mode.
	Token     string
	CredsFile string
}

// HubLinkReconnect is how long the embedded server waits between attempts to join
// the hub while the link is down.
const HubLinkReconnect = 2 * time.Second

// Check validates the link's settings.
func (h *HubLink) Check() error {
	switch {
	case !ValidToken(h.Club):
		return fmt.Errorf("hub link: club name %q: want lowercase letters, digits, '-' and '_' (it is the club's JetStream domain and its user at the hub)", h.Club)
	case h.Token != "" && h.CredsFile != "":
		return errors.New("hub link: give the hub's token or a creds file, not both")
	case h.Token == "" && h.CredsFile == "":
		return errors.New("hub link: the hub needs the club's credentials: a token ($SCOREBOARD_HUB_TOKEN, hub.token) or a creds file (--hub-creds, hub.creds)")
	}
	_, err := h.urls()
	return err
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
			return nil, fmt.Errorf("hub link: URL %q: credentials do not go in the URL: give the token in $SCOREBOARD_HUB_TOKEN or hub.token", RedactURL(s))
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
// local JetStream API and bucket, and every call of its domain's API that would
// write into, or take away from, its history. What is left is what the hub's
// sourcing needs: creating and deleting its own consumers, and stream info.
func ClubDenyImports(prefix, club string) []string {
	api := "$JS." + club + ".API."
	return []string{
		prefix + ".>", "_INBOX.>", "$SRV.>", "$KV.>", "$O.>", "$JS.API.>",
		api + "STREAM.CREATE.>", api + "STREAM.UPDATE.>", api + "STREAM.DELETE.>",
		api + "STREAM.PURGE.>", api + "STREAM.MSG.DELETE.>", api + "STREAM.RESTORE.>",
		api + "STREAM.SNAPSHOT.>", api + "STREAM.PEER.>", api + "STREAM.LEADER.>",
		api + "STREAM.MSG.GET.>", api + "DIRECT.>", api + "ACCOUNT.>", api + "META.>",
		api + "SERVER.>", api + "CONSUMER.DURABLE.>", api + "CONSUMER.PAUSE.>",
		api + "CONSUMER.LEADER.>", api + "CONSUMER.MSG.>",
	}
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
	opts.LeafNode.Remotes = []*server.RemoteLeafOpts{{
		URLs:        urls,
		Credentials: h.CredsFile,
		DenyImports: ClubDenyImports(prefix, h.Club),
		DenyExports: ClubDenyExports(prefix),
	}}
	return nil
}

// HubLinked reports whether the server's link to the hub is up (a leaf connection
// is open). Always false without a HubLink.
func (s *Server) HubLinked() bool { return s.ns.NumLeafNodes() > 0 }
