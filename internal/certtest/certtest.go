// Package certtest makes the certificates of a test: a CA, and certificates it
// signs for a name, for another name, or already expired, written as PEM files.
package certtest

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
	"testing"
	"time"
)

// CA is a test's certificate authority; File is its certificate, PEM.
type CA struct {
	t    *testing.T
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	File string
}

// NewCA makes a CA named name, writing its certificate into dir.
func NewCA(t *testing.T, dir, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{t: t, dir: dir, cert: cert, key: key, File: filepath.Join(dir, name+".crt")}
	writePEM(t, ca.File, "CERTIFICATE", der)
	return ca
}

// Pair is a certificate and its key, PEM files.
type Pair struct{ Cert, Key string }

// Server makes a server certificate for hosts (names, or IP addresses), valid
// from an hour ago for a day.
func (ca *CA) Server(file string, hosts ...string) Pair {
	return ca.ServerValid(file, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour), hosts...)
}

// Expired makes a server certificate for hosts that expired an hour ago.
func (ca *CA) Expired(file string, hosts ...string) Pair {
	return ca.ServerValid(file, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour), hosts...)
}

// ServerValid makes a server certificate for hosts, valid from notBefore to
// notAfter, written as file.crt and file.key in the CA's dir.
func (ca *CA) ServerValid(file string, notBefore, notAfter time.Time, hosts ...string) Pair {
	t := ca.t
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	p := Pair{Cert: filepath.Join(ca.dir, file+".crt"), Key: filepath.Join(ca.dir, file+".key")}
	writePEM(t, p.Cert, "CERTIFICATE", der)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, p.Key, "EC PRIVATE KEY", kder)
	return p
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t *testing.T) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
