package league_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/certtest"
	"github.com/goclub/scoreboard/league"
)

// newClubKey makes a club's key as scoreboard hub key does: the seed file, and the
// club as the hub's file holds it.
func newClubKey(t *testing.T, dir, name string) (string, league.Club) {
	t.Helper()
	seed, club, err := league.NewClubKey(name)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".seed")
	if err := league.WriteSeedFile(file, seed); err != nil {
		t.Fatal(err)
	}
	return file, club
}

// TestLeagueKeyTLSAndReload: over TLS (the hub's certificate from a CA of the
// test's, for 127.0.0.1), a club with a key and one with a token join and their
// units reach LEAGUE. SetClubs with north's key changed and south removed closes
// both links within 1 s of its call (the bound), counted on the hub.
func TestLeagueKeyTLSAndReload(t *testing.T) {
	// Its time is the leaf links' reconnect waits: it waits beside the others.
	t.Parallel()
	dir := t.TempDir()
	ca := certtest.NewCA(t, dir, "league-ca")
	cert := ca.Server("hub", "127.0.0.1", "localhost")
	seedFile, north := newClubKey(t, dir, "north")
	if fi, err := os.Stat(seedFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("seed file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	south := league.Club{Name: "south", Token: "ts"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := league.Start(ctx, league.Options{
		Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: t.TempDir(), Clubs: []league.Club{north, south},
		LeafTLSCert: cert.Cert, LeafTLSKey: cert.Key,
	}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown()
	// The hub says where its clubs connect, with the scheme they must use.
	url := h.LeafURL()
	if !strings.HasPrefix(url, "tls://") {
		t.Fatalf("a hub with a TLS leaf listener gives its leaf URL as %q, want tls://HOST:PORT", url)
	}
	clubs := map[string]*nats.Conn{}
	servers := map[string]*bus.Server{}
	for name, link := range map[string]*bus.HubLink{
		"north": {URL: url, Club: "north", SeedFile: seedFile, TLSCA: ca.File},
		"south": {URL: url, Club: "south", Token: "ts", TLSCA: ca.File},
	} {
		b := bustest.Start(t, bustest.Options{Off: true, JetStream: true, Hub: link})
		servers[name] = b.Server
		clubs[name] = setupHistory(t, b)
	}
	bustest.Wait(t, "both links up over TLS", func() (bool, string) {
		l := h.Links()
		return l["north"] && l["south"], fmt.Sprintf("links %v", l)
	})
	for i := 1; i <= 10; i++ {
		for _, nc := range clubs {
			if err := nc.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	bustest.Wait(t, "20 units in the clubs' streams", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north", "south")
		return n == 20, fmt.Sprintf("%d units", n)
	})

	_, north2 := newClubKey(t, t.TempDir(), "north")
	set := time.Now()
	if err := h.SetClubs(ctx, []league.Club{north2}); err != nil {
		t.Fatal(err)
	}
	closed, done := time.Duration(0), false
	// Counted every 10 ms up to a deadline well past the bound, so a slow machine
	// shows its figure rather than a timeout.
	for deadline := set.Add(10 * time.Second); !done && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		closed, done = time.Since(set), !h.Links()["north"] && h.LeafConns() == 0
	}
	t.Logf("the old key's and the removed club's links closed %v after SetClubs was called", closed.Round(time.Millisecond))
	if !done || closed > time.Second {
		t.Fatalf("links open %v after SetClubs was called (want closed within 1 s): links %v, leaf connections %d", closed, h.Links(), h.LeafConns())
	}
	// The old key is refused from then on: attempts every HubLinkReconnect.
	time.Sleep(3 * bus.HubLinkReconnect)
	if n := h.LeafConns(); n != 0 || servers["north"].HubLinked() {
		t.Fatalf("after 3 attempts of the clubs' with their old credentials: %d leaf connections at the hub, north linked %v", n, servers["north"].HubLinked())
	}
}

// setupHistory makes the club's history stream, on an in-process connection.
func setupHistory(t *testing.T, b *bustest.Bus) *nats.Conn {
	t.Helper()
	nc := b.Conn(bus.ConnOptions{Server: b.Server, Name: "club"})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := history.Setup(ctx, js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 1 << 26}); err != nil {
		t.Fatal(err)
	}
	bustest.CaptureHistory(t, nc, bus.DefaultPrefix) // the club's ports
	return nc
}

// TestLeagueMutualTLS: a hub that asks the clubs for a certificate of its clubs'
// CA lets in a club with one (and its token), and refuses one without. (Over TLS
// 1.3 the club without sees only its link closed; the hub's log says why.)
func TestLeagueMutualTLS(t *testing.T) {
	// Its time is the leaf links' reconnect waits: it waits beside the others.
	t.Parallel()
	dir := t.TempDir()
	ca := certtest.NewCA(t, dir, "league-ca")
	clubsCA := certtest.NewCA(t, dir, "clubs-ca")
	cert := ca.Server("hub", "127.0.0.1")
	north := clubsCA.Server("north", "north")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := league.Start(ctx, league.Options{
		Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: t.TempDir(),
		Clubs:       []league.Club{{Name: "north", Token: "tn"}, {Name: "south", Token: "ts"}},
		LeafTLSCert: cert.Cert, LeafTLSKey: cert.Key, LeafTLSClientCA: clubsCA.File,
	}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown()
	// The hub says where its clubs connect, with the scheme they must use.
	url := h.LeafURL()
	if !strings.HasPrefix(url, "tls://") {
		t.Fatalf("a hub with a TLS leaf listener gives its leaf URL as %q, want tls://HOST:PORT", url)
	}
	bustest.Start(t, bustest.Options{Off: true, JetStream: true,
		Hub: &bus.HubLink{URL: url, Club: "north", Token: "tn", TLSCA: ca.File, TLSCert: north.Cert, TLSKey: north.Key}})
	bustest.Start(t, bustest.Options{Off: true, JetStream: true,
		Hub: &bus.HubLink{URL: url, Club: "south", Token: "ts", TLSCA: ca.File}})
	bustest.Wait(t, "north linked", func() (bool, string) {
		l := h.Links()
		return l["north"], fmt.Sprintf("links %v", l)
	})
	// South's attempts meanwhile, and for two more of its periods: none let in.
	for end := time.Now().Add(2 * bus.HubLinkReconnect); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if h.Links()["south"] {
			t.Fatal("south, without a certificate, is linked")
		}
	}
}
