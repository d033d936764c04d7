package bus_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/certtest"
)

// A server that wants TLS with a client certificate and an nkey: each credential
// missing is refused, all of them are served.
func TestConnectTLSAndNKey(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.NewCA(t, dir, "ca")
	srv := ca.Server("server", "127.0.0.1")
	client := ca.Server("client", "127.0.0.1")
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	pub, _ := user.PublicKey()
	seedFile := filepath.Join(dir, "user.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}

	tlsConfig, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: srv.Cert,
		KeyFile:  srv.Key,
		CaFile:   ca.File,
		Verify:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ns := startTestServer(t, &server.Options{
		TLSConfig: tlsConfig, TLSVerify: true, TLS: true,
		Nkeys: []*server.NkeyUser{{Nkey: pub}},
	})
	url := "tls://" + ns.Addr().String()
	full := bus.ConnOptions{
		URL:          url,
		TLSCA:        ca.File,
		TLSCert:      client.Cert,
		TLSKey:       client.Key,
		NKeySeedFile: seedFile,
	}
	nc, err := bus.Connect(full, bustest.Logger(t))
	if err != nil {
		t.Fatalf("with every credential: %v", err)
	}
	if rtt, err := nc.RTT(); err != nil {
		t.Errorf("RTT: %v, %v", rtt, err)
	}
	nc.Close()

	noNKey, noCert, noCA := full, full, full
	noNKey.NKeySeedFile = ""
	noCert.TLSCert, noCert.TLSKey = "", ""
	noCA.TLSCA = ""
	for name, o := range map[string]bus.ConnOptions{"no nkey": noNKey, "no client cert": noCert, "no CA": noCA} {
		if nc, err := bus.Connect(o, bustest.Logger(t)); err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	bad := full
	bad.NKeySeedFile = filepath.Join(dir, "missing.nk")
	if _, err := bus.Connect(bad, bustest.Logger(t)); err == nil || !strings.Contains(err.Error(), "missing.nk") {
		t.Errorf("a missing seed file: %v, want an error naming it", err)
	}
}
