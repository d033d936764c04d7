package bus_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/certtest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/worker"
)

// The embedded server listens on loopback by default, and refuses to listen beyond
// it without authentication, naming the options to set.
func TestSecurityListenLoopbackOnly(t *testing.T) {
	host, _, err := bus.ParseListen(bus.DefaultListen)
	if err != nil || !bus.Loopback(host) {
		t.Fatalf("default listener %q (%v): want a loopback address", bus.DefaultListen, err)
	}
	srv := bustest.Start(t, bustest.Options{})
	if h, _, _ := net.SplitHostPort(strings.TrimPrefix(srv.ClientURL(), "nats://")); h != "127.0.0.1" {
		t.Errorf("listening on %s, want 127.0.0.1", srv.ClientURL())
	}
	bustest.Start(t, bustest.Options{Listen: "localhost:0"})
	for _, listen := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.7:0", "scoreboard.club.lan:0"} {
		_, err := bus.StartServer(listen, bustest.Logger(t))
		if !errors.Is(err, bus.ErrListenNeedsAuth) || !strings.Contains(err.Error(), "--nats-listen-token") ||
			!strings.Contains(err.Error(), "--nats-listen-user") {
			t.Errorf("listen %s without auth: %v; want ErrListenNeedsAuth naming --nats-listen-token and --nats-listen-user", listen, err)
		}
	}
	for _, o := range []bus.ServerOptions{
		{Listen: "0.0.0.0:0", Token: "t", User: "u", Password: "p"},
		{Listen: "0.0.0.0:0", User: "u"},
		{Listen: "0.0.0.0:0", Password: "p"},
	} {
		if srv, err := bus.StartServerWith(o, bustest.Logger(t)); err == nil {
			srv.Shutdown()
			t.Errorf("%+v: accepted", o)
		}
	}
}

// With a token or a user and password, the listener may go beyond loopback: TCP
// clients without the credential, or with a wrong one, are refused; the right one is
// served; the daemon's in-process clients need none.
func TestSecurityListenAuth(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  bustest.Options
		right bus.ConnOptions
		wrong []bus.ConnOptions
	}{
		{
			name:  "token",
			opts:  bustest.Options{Listen: "0.0.0.0:0", Token: "s3cret-token"},
			right: bus.ConnOptions{Token: "s3cret-token"},
			wrong: []bus.ConnOptions{{}, {Token: "s3cret-tokem"}, {User: "club", Password: "s3cret-token"}},
		},
		{
			name:  "user-password",
			opts:  bustest.Options{Listen: "0.0.0.0:0", User: "club", Password: "pa55word"},
			right: bus.ConnOptions{User: "club", Password: "pa55word"},
			wrong: []bus.ConnOptions{{}, {User: "club", Password: "pa55wort"}, {User: "clue", Password: "pa55word"}, {Token: "pa55word"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := bustest.Start(t, c.opts)
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.ClientURL(), "nats://"))
			url := "nats://127.0.0.1:" + port

			inproc := srv.Daemon()
			bustest.StartWorkers(t, inproc, worker.Options{Problems: []string{"goscore"}}, bustest.Logger(t))
			for i, o := range c.wrong {
				o.URL = url
				nc, err := bus.Connect(o, bustest.Logger(t))
				if err == nil {
					nc.Close()
					t.Errorf("wrong credential %d (%+v): connected", i, o)
				} else if !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), "Authorization Violation") {
					t.Errorf("wrong credential %d: %v, want an authorization violation", i, err)
				}
			}
			// The right credential is the worker's: it serves the solve endpoint
			// beside the in-process workers, for a request from in-process.
			o := c.right
			o.URL = url
			nc := bustest.Connect(t, o)
			bustest.StartWorkers(t, nc, worker.Options{Problems: []string{"goscore"}}, bustest.Logger(t))
			in, want := samples.Pair(t, samples.Case{File: "goscore"})
			msg, err := inproc.Request(bus.Subjects{Prefix: bus.DefaultPrefix}.Solve("goscore"), in, 10*time.Second)
			if err != nil || string(msg.Data) != string(want) {
				t.Fatalf("solve beside a worker of the authenticated listener: %v, %+v", err, msg)
			}
		})
	}
}

// Against an external server: a wrong token, a wrong password and a wrong nkey are
// refused with the server's reason and a hint at the flags.
func TestSecurityExternalWrongCredentials(t *testing.T) {
	tok := proctest.StartNATS(t, proctest.NATSOptions{Token: "right-token"})
	pw := proctest.StartNATS(t, proctest.NATSOptions{User: "club", Password: "right-pass"})
	for name, o := range map[string]bus.ConnOptions{
		"wrong token":    {URL: tok.URL(), Token: "wrong-token"},
		"wrong password": {URL: pw.URL(), User: "club", Password: "wrong-pass"},
		"wrong user":     {URL: pw.URL(), User: "clubs", Password: "right-pass"},
	} {
		_, err := bus.Connect(o, bustest.Logger(t))
		if err == nil || !strings.Contains(err.Error(), "Authorization Violation") || !strings.Contains(err.Error(), "--nats-") {
			t.Errorf("%s: %v, want an authorization violation with a hint", name, err)
		}
		if err != nil && (strings.Contains(err.Error(), "wrong-") || strings.Contains(err.Error(), "right-")) {
			t.Errorf("%s: the error shows a secret: %v", name, err)
		}
	}
	for name, o := range map[string]bus.ConnOptions{
		"token":         {URL: tok.URL(), Token: "right-token"},
		"user/password": {URL: pw.URL(), User: "club", Password: "right-pass"},
	} {
		nc, err := bus.Connect(o, bustest.Logger(t))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		nc.Close()
	}

	// An nkey server: another key's seed is refused.
	right, _ := nkeys.CreateUser()
	pub, _ := right.PublicKey()
	ns := startTestServer(t, &server.Options{Nkeys: []*server.NkeyUser{{Nkey: pub}}})
	dir := t.TempDir()
	wrongSeed := writeSeed(t, dir, "wrong.nk", nil)
	rightSeed := writeSeed(t, dir, "right.nk", right)
	url := "nats://" + ns.Addr().String()
	if _, err := bus.Connect(bus.ConnOptions{URL: url, NKeySeedFile: wrongSeed}, bustest.Logger(t)); err == nil ||
		!strings.Contains(err.Error(), "Authorization Violation") {
		t.Errorf("wrong nkey: %v, want an authorization violation", err)
	}
	nc, err := bus.Connect(bus.ConnOptions{URL: url, NKeySeedFile: rightSeed}, bustest.Logger(t))
	if err != nil {
		t.Fatalf("right nkey: %v", err)
	}
	nc.Close()
}

// A TLS server whose certificate does not verify is refused: signed by a CA the
// client does not trust, or issued for another name.
func TestSecurityServerCertificateDoesNotVerify(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.NewCA(t, dir, "ca")
	srv := ca.Server("server", "127.0.0.1")
	other := certtest.NewCA(t, t.TempDir(), "ca") // a CA that signed nothing of this server's
	tlsConfig, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: srv.Cert,
		KeyFile:  srv.Key,
	})
	if err != nil {
		t.Fatal(err)
	}
	ns := startTestServer(t, &server.Options{TLSConfig: tlsConfig, TLS: true})
	_, port, _ := net.SplitHostPort(ns.Addr().String())
	for name, o := range map[string]bus.ConnOptions{
		"untrusted CA":   {URL: "tls://127.0.0.1:" + port, TLSCA: other.File},
		"system roots":   {URL: "tls://127.0.0.1:" + port},
		"wrong name":     {URL: "tls://localhost:" + port, TLSCA: ca.File},
		"nats:// to TLS": {URL: "nats://127.0.0.1:" + port, TLSCA: other.File},
	} {
		nc, err := bus.Connect(o, bustest.Logger(t))
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected to a server whose certificate does not verify", name)
			continue
		}
		if !strings.Contains(err.Error(), "certificate") && !strings.Contains(err.Error(), "x509") {
			t.Errorf("%s: %v, want a certificate error", name, err)
		}
	}
	nc, err := bus.Connect(bus.ConnOptions{URL: "tls://127.0.0.1:" + port, TLSCA: ca.File}, bustest.Logger(t))
	if err != nil {
		t.Fatalf("the right CA: %v", err)
	}
	nc.Close()
}

// startTestServer starts a nats-server in-process on a free loopback port with opts.
func startTestServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.Host, opts.Port, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	return ns
}

// writeSeed writes kp's seed (a new user key's when nil) to dir/name.
func writeSeed(t *testing.T, dir, name string, kp nkeys.KeyPair) string {
	t.Helper()
	if kp == nil {
		var err error
		if kp, err = nkeys.CreateUser(); err != nil {
			t.Fatal(err)
		}
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// URLs lose their user info before they are logged or printed, parsed or not.
func TestSecurityRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                        "nats://127.0.0.1:4222",
		"nats://bob:s3cret@host:4222":                  "nats://bob:xxxxx@host:4222",
		"nats://t0ken@host:4222":                       "nats://xxxxx@host:4222",
		"nats://a:s3cret@h1:4222,nats://b:s3cret@h2:1": "nats://a:xxxxx@h1:4222,nats://b:xxxxx@h2:1",
		"nats://bob:s3cret@host:99999x":                "nats://xxxxx@host:99999x",
		"nats://bob:s3cret@[::1":                       "nats://xxxxx@[::1",
		"bob:s3cret@host:4222 x":                       "xxxxx@host:4222 x",
	} {
		if got := bus.RedactURL(in); got != want || strings.Contains(got, "s3cret") || strings.Contains(got, "t0ken") {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
