package bus_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
)

// A server that wants TLS with a client certificate and an nkey: each credential
// missing is refused, all of them are served.
func TestConnectTLSAndNKey(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := newCert(t, dir, "ca", nil, nil)
	newCert(t, dir, "server", ca, caKey)
	newCert(t, dir, "client", ca, caKey)
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
		CertFile: filepath.Join(dir, "server.pem"),
		KeyFile:  filepath.Join(dir, "server-key.pem"),
		CaFile:   filepath.Join(dir, "ca.pem"),
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
		TLSCA:        filepath.Join(dir, "ca.pem"),
		TLSCert:      filepath.Join(dir, "client.pem"),
		TLSKey:       filepath.Join(dir, "client-key.pem"),
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

// newCert writes name.pem and name-key.pem into dir: a CA when parent is nil, else a
// certificate for 127.0.0.1 signed by parent.
func newCert(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(file, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(name+".pem", "CERTIFICATE", der)
	write(name+"-key.pem", "EC PRIVATE KEY", keyDER)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}
