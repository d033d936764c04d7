package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/certtest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// creds are the credential fields a CONNECT can carry, leaf or client.
type creds struct {
	User  string `json:"user,omitempty"`
	Pass  string `json:"pass,omitempty"`
	Token string `json:"auth_token,omitempty"`
	Nkey  string `json:"nkey,omitempty"`
	Sig   string `json:"sig,omitempty"`
	JWT   string `json:"jwt,omitempty"`
}

// none: no credentials, as the server sees them (it discards a JWT outside
// operator mode).
func (c creds) none() bool { return c == creds{JWT: c.JWT} }

// authKeys are the matrix's key pairs: two clubs' (north, south) and a stranger's.
type authKeys struct{ north, south, stranger nkeys.KeyPair }

func newAuthKeys(t *testing.T) authKeys {
	t.Helper()
	var k authKeys
	for _, p := range []*nkeys.KeyPair{&k.north, &k.south, &k.stranger} {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		*p = kp
	}
	return k
}

func pub(kp nkeys.KeyPair) string { s, _ := kp.PublicKey(); return s }

func sign(kp nkeys.KeyPair, nonce []byte) string {
	sig, _ := kp.Sign(nonce)
	return base64.RawURLEncoding.EncodeToString(sig)
}

// authRow is one attempt of the matrix: who it claims to be (as the hub must log
// it), what it presents (built from the connection's nonce), and the cause the
// hub must log for its refusal; cause "" is a row that must get in at the leaf
// listener. At the tools' listener only a CONNECT without credentials gets in.
type authRow struct {
	name, claims, cause string
	present             func(nonce []byte) creds
}

// authMatrix is every combination the leaf listener must tell apart. The hub has
// north and south with keys, east and west with tokens, gone with a token
// (removed by SIGHUP before the last rows).
func authMatrix(k authKeys) []authRow {
	fixed := func(c creds) func([]byte) creds { return func([]byte) creds { return c } }
	north, south, stranger := pub(k.north), pub(k.south), pub(k.stranger)
	long := strings.Repeat("n", 1500) // two in a CONNECT stay under its 4 KB line
	return []authRow{
		// Who must get in.
		{"north's key", "north", "", func(n []byte) creds { return creds{Nkey: north, Sig: sign(k.north, n)} }},
		{"north's key, its name as user", "north", "", func(n []byte) creds { return creds{User: "north", Nkey: north, Sig: sign(k.north, n)} }},
		{"east's token", "east", "", fixed(creds{User: "east", Pass: "token-east"})},
		// A key club given a password: the code's stand-in, others, none.
		{"key club, the stand-in as password", "north", "key_club_token", fixed(creds{User: "north", Pass: "\x00not a club"})},
		{"key club, no password", "north", "key_club_token", fixed(creds{User: "north"})},
		{"key club, its public key as password", "north", "key_club_token", fixed(creds{User: "north", Pass: north})},
		{"key club, another club's token", "north", "key_club_token", fixed(creds{User: "north", Pass: "token-east"})},
		{"key club, a NUL password", "north", "key_club_token", fixed(creds{User: "north", Pass: "\x00"})},
		{"key club, a token as auth_token", "north", "auth_token", fixed(creds{User: "north", Token: "\x00not a club"})},
		// A token club given wrong tokens.
		{"token club, no password", "east", "wrong_token", fixed(creds{User: "east"})},
		{"token club, another club's token", "east", "wrong_token", fixed(creds{User: "east", Pass: "token-west"})},
		{"token club, its token in upper case", "east", "wrong_token", fixed(creds{User: "east", Pass: "TOKEN-EAST"})},
		{"token club, its token and a NUL", "east", "wrong_token", fixed(creds{User: "east", Pass: "token-east\x00"})},
		{"token club, the stand-in", "east", "wrong_token", fixed(creds{User: "east", Pass: "\x00not a club"})},
		{"token club, a very long token", "east", "wrong_token", fixed(creds{User: "east", Pass: long})},
		{"token club, its token as auth_token", "", "auth_token", fixed(creds{Token: "token-east"})},
		{"token club, name and auth_token", "east", "auth_token", fixed(creds{User: "east", Token: "token-east"})},
		{"token club, a key", "east", "unknown_key", func(n []byte) creds { return creds{User: "east", Nkey: stranger, Sig: sign(k.stranger, n)} }},
		{"token club, north's key", "east", "key_of_another_club", func(n []byte) creds { return creds{User: "east", Nkey: north, Sig: sign(k.north, n)} }},
		// Names that are no club's.
		{"a club's name in upper case", "East", "unknown_club", fixed(creds{User: "East", Pass: "token-east"})},
		{"a club's name and a NUL", "east\x00", "unknown_club", fixed(creds{User: "east\x00", Pass: "token-east"})},
		{"an unknown club, the stand-in", "nobody", "unknown_club", fixed(creds{User: "nobody", Pass: "\x00not a club"})},
		{"an unknown club, no password", "nobody", "unknown_club", fixed(creds{User: "nobody"})},
		{"a very long name", long[:64], "unknown_club", fixed(creds{User: long, Pass: "token-east"})},
		{"nothing at all", "", "no_name", fixed(creds{})},
		{"a password alone", "", "no_name", fixed(creds{Pass: "token-east"})},
		// Keys and signatures.
		{"north's key, south's signature", "north", "bad_signature", func(n []byte) creds { return creds{Nkey: north, Sig: sign(k.south, n)} }},
		{"north's key, a signature of another nonce", "north", "bad_signature", func(n []byte) creds { return creds{Nkey: north, Sig: sign(k.north, append([]byte("x"), n...))} }},
		{"north's key, a signature of no nonce", "north", "bad_signature", func([]byte) creds { return creds{Nkey: north, Sig: sign(k.north, nil)} }},
		{"north's key, no signature", "north", "bad_signature", fixed(creds{Nkey: north})},
		{"north's key, a NUL signature", "north", "bad_signature", fixed(creds{Nkey: north, Sig: "\x00"})},
		{"north's key, a very long signature", "north", "bad_signature", fixed(creds{Nkey: north, Sig: long})},
		{"north's key, its name in upper case", "North", "key_of_another_club", func(n []byte) creds { return creds{User: "North", Nkey: north, Sig: sign(k.north, n)} }},
		{"north's key and the stand-in", "north", "key_and_secret", func(n []byte) creds { return creds{Nkey: north, Sig: sign(k.north, n), Pass: "\x00not a club"} }},
		{"north's key and an auth_token", "north", "key_and_secret", func(n []byte) creds { return creds{Nkey: north, Sig: sign(k.north, n), Token: "x"} }},
		{"south's key, north's name", "north", "key_of_another_club", func(n []byte) creds { return creds{User: "north", Nkey: south, Sig: sign(k.south, n)} }},
		{"a stranger's key, signed", "", "unknown_key", func(n []byte) creds { return creds{Nkey: stranger, Sig: sign(k.stranger, n)} }},
		{"north's key in lower case", "", "unknown_key", func(n []byte) creds { return creds{Nkey: strings.ToLower(north), Sig: sign(k.north, n)} }},
		{"a NUL key", "", "unknown_key", fixed(creds{Nkey: "\x00", Sig: "\x00"})},
		{"a very long key", "", "unknown_key", fixed(creds{Nkey: long, Sig: long})},
		{"a signature without a key", "north", "sig_without_key", func(n []byte) creds { return creds{User: "north", Sig: sign(k.north, n)} }},
		// nats-server discards a JWT outside operator mode, before the check: a
		// JWT changes nothing.
		{"a JWT with north's key", "north", "", func(n []byte) creds {
			return creds{Nkey: north, Sig: sign(k.north, n), JWT: "eyJ0eXAiOiJKV1QifQ.e30.x"}
		}},
		{"a JWT alone", "", "no_name", fixed(creds{JWT: "eyJ0eXAiOiJKV1QifQ.e30.x"})},
	}
}

// leafAttempt speaks the leafnode protocol to the hub's leaf listener, as any
// program can: the INFO in clear (its nonce), TLS (none if roots is nil), a
// CONNECT with the fields present makes of the nonce, then PING. It says whether
// the hub let it in (a PONG came back), and gives the open connection when it did;
// an error is a listener that did not speak the protocol.
func leafAttempt(addr string, roots *x509.CertPool, present func([]byte) creds) (bool, net.Conn, string, error) {
	raw, nonce, err := readINFO(addr, true)
	if err != nil {
		return false, nil, "", fmt.Errorf("the leaf listener: %w", err)
	}
	conn := raw
	if roots != nil {
		conn = tls.Client(raw, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	}
	in, conn, said := connectAndPing(conn, present(nonce), map[string]any{"name": "impostor", "server_id": "NIMPOSTOR"})
	return in, conn, said, nil
}

// toolsAttempt is a client's CONNECT at the hub's tools' listener.
func toolsAttempt(addr string, present func([]byte) creds) (bool, net.Conn, string, error) {
	conn, nonce, err := readINFO(addr, false)
	if err != nil {
		return false, nil, "", fmt.Errorf("the tools' listener: %w", err)
	}
	in, conn, said := connectAndPing(conn, present(nonce), map[string]any{"lang": "go", "version": "1.0", "protocol": 1, "verbose": false})
	return in, conn, said, nil
}

// readINFO connects to addr and reads the server's INFO: its nonce (wanted, for a
// leaf listener).
func readINFO(addr string, wantNonce bool) (net.Conn, []byte, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	// One byte at a time: what follows the INFO is the TLS handshake's.
	var line []byte
	b := make([]byte, 1)
	for len(line) < 1<<16 && (len(line) == 0 || line[len(line)-1] != '\n') {
		if _, err := conn.Read(b); err != nil {
			conn.Close()
			return nil, nil, err
		}
		line = append(line, b[0])
	}
	var info struct {
		Nonce string `json:"nonce"`
	}
	if !bytes.HasPrefix(line, []byte("INFO ")) || json.Unmarshal(line[5:], &info) != nil || wantNonce && info.Nonce == "" {
		conn.Close()
		return nil, nil, fmt.Errorf("INFO %.200q: want an INFO with a nonce", line)
	}
	return conn, []byte(info.Nonce), nil
}

// connectAndPing sends CONNECT with c's fields and more, then PING, and reads
// until a PONG or an -ERR: in, the connection, and what the server said.
func connectAndPing(conn net.Conn, c creds, more map[string]any) (bool, net.Conn, string) {
	fields := map[string]any{}
	b, _ := json.Marshal(c)
	json.Unmarshal(b, &fields)
	for k, v := range more {
		fields[k] = v
	}
	b, _ = json.Marshal(fields)
	if _, err := conn.Write(append(append([]byte("CONNECT "), b...), "\r\nPING\r\n"...)); err != nil {
		conn.Close()
		return false, nil, "write: " + err.Error()
	}
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		switch {
		case err != nil:
			conn.Close()
			return false, nil, "closed: " + err.Error()
		case strings.HasPrefix(line, "PONG"):
			conn.SetDeadline(time.Time{})
			return true, conn, strings.TrimSpace(line)
		case strings.HasPrefix(line, "-ERR"):
			conn.Close()
			return false, nil, strings.TrimSpace(line)
		}
	}
}

// refusals are the hub's log lines of refused connections.
func refusals(out string) []map[string]any {
	var got []map[string]any
	for l := range strings.SplitSeq(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["message"] == "league: connection refused" {
			got = append(got, m)
		}
	}
	return got
}

// TestLeagueAuthMatrixFault: from outside, as an attacker would, against a real
// hub process (TLS on its leaf listener; north and south with keys, east and west
// with tokens, gone with a token): every row of the matrix is tried at the leaf
// listener (raw leafnode protocol, so that every field is the test's) and at the
// tools' listener (raw client CONNECT); only the right ones get in, and each
// refusal leaves exactly one log line at the hub naming the club claimed and the
// cause, none with a secret. Then gone is removed by SIGHUP: its two open links
// are closed and it gets in no more. A stock nats-server leaf with the URL
// (the stand-in as north's password) is refused.
func TestLeagueAuthMatrixFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	ca := certtest.NewCA(t, root, "league-ca")
	pair := ca.Server("hub", "127.0.0.1")
	roots := x509.NewCertPool()
	pem, _ := os.ReadFile(ca.File)
	roots.AppendCertsFromPEM(pem)
	k := newAuthKeys(t)
	clubs := fmt.Sprintf("[[club]]\nname = \"north\"\nnkey = %q\n[[club]]\nname = \"south\"\nnkey = %q\n", pub(k.north), pub(k.south))
	for _, c := range []string{"east", "west"} {
		clubs += fmt.Sprintf("[[club]]\nname = %q\ntoken = \"token-%s\"\n", c, c)
	}
	r := &authRun{t: t, roots: roots, hub: startTLSHub(t, bin, root, &pair, clubs+"[[club]]\nname = \"gone\"\ntoken = \"token-gone\"\n")}
	r.tools = fmt.Sprintf("127.0.0.1:%d", r.hub.hubPort)

	rows := authMatrix(k)
	for _, row := range rows {
		in, said := r.attempt(leafAttempt(r.hub.leaf(), roots, row.present))
		r.check("leaf", row, row.cause == "", in, said)
	}
	for _, row := range rows {
		// At the tools' listener, there is no nonce: a signature is of nothing.
		c := row.present(nil)
		in, said := r.attempt(toolsAttempt(r.tools, func([]byte) creds { return c }))
		r.check("tools", row, c.none(), in, said)
	}
	r.natsGoClients()
	r.goneRemoved(clubs)
	r.stockLeaf(filepath.Join(root, "stock.conf"), ca.File)

	// No secret in the hub's log.
	out := r.hub.proc.Output()
	for _, s := range []string{"token-east", "token-west", "token-gone", "not a club", "TOKEN-EAST"} {
		if strings.Contains(out, s) {
			t.Errorf("the hub's log holds %q", s)
		}
	}
	if strings.Contains(out, "authentication error") {
		t.Errorf("the hub's log has nats-server's own line of a refusal, beside its own: two lines a refusal")
	}
	t.Logf("matrix: %d rows, each at the leaf and the tools' listener, 4 nats.go clients, gone removed by SIGHUP (2 links), the stock leaf; %d refusal lines; %d failures",
		len(rows), len(refusals(out)), r.failures)
}

// authRun is the matrix's hub, and the refusal lines it has logged so far.
type authRun struct {
	t              *testing.T
	hub            *tlsHub
	roots          *x509.CertPool
	tools          string
	seen, failures int
}

// attempt closes a connection let in: in, and what the hub said.
func (r *authRun) attempt(in bool, conn net.Conn, said string, err error) (bool, string) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
	if conn != nil {
		conn.Close()
	}
	return in, said
}

// next waits for the hub's next refusal lines and gives them.
func (r *authRun) next(what string) []map[string]any {
	r.t.Helper()
	bustest.WaitWithin(r.t, 20*time.Second, what+": the hub's line", func() (bool, string) {
		n := len(refusals(r.hub.proc.Output()))
		return n > r.seen, fmt.Sprintf("%d refusal lines, %d before", n, r.seen)
	})
	all := refusals(r.hub.proc.Output())
	got := all[r.seen:]
	r.seen = len(all)
	return got
}

// check says whether an attempt went as its row says: in or not, and if not, one
// refusal line naming the club claimed and the cause.
func (r *authRun) check(where string, row authRow, wantIn, in bool, said string) {
	r.t.Helper()
	if in != wantIn {
		r.failures++
		r.t.Errorf("%s, %q (claims %q): in %v, want %v (the hub said %q)", where, row.name, row.claims, in, wantIn, said)
		return
	}
	if in {
		return
	}
	lines := r.next(where + " " + row.name)
	cause := row.cause
	if where == "tools" {
		cause = "credentials_at_tools"
	}
	if len(lines) != 1 || lines[0]["club"] != row.claims || lines[0]["cause"] != cause {
		r.failures++
		r.t.Errorf("%s, %q: %d refusal lines %v; want 1 naming club %q and cause %q", where, row.name, len(lines), lines, row.claims, cause)
	}
}

// natsGoClients: nats.go clients at the tools' listener; only one without
// credentials is a tool.
func (r *authRun) natsGoClients() {
	t := r.t
	for _, o := range []struct {
		name string
		opt  nats.Option
	}{
		{"user and east's token", nats.UserInfo("east", "token-east")},
		{"north and the stand-in", nats.UserInfo("north", "\x00not a club")},
		{"a token", nats.Token("token-east")},
	} {
		nc, err := nats.Connect("nats://"+r.tools, o.opt, nats.NoReconnect(), nats.Timeout(10*time.Second))
		if err == nil {
			nc.Close()
			r.failures++
			t.Errorf("tools, nats.go with %s: let in", o.name)
			continue
		}
		if lines := r.next("tools nats.go " + o.name); len(lines) != 1 || lines[0]["cause"] != "credentials_at_tools" {
			r.failures++
			t.Errorf("tools, nats.go with %s: refusal lines %v, want 1 of cause credentials_at_tools", o.name, lines)
		}
	}
	if nc, err := nats.Connect("nats://"+r.tools, nats.NoReconnect()); err != nil {
		t.Errorf("tools, nats.go without credentials: %v; a tool is let in", err)
	} else {
		nc.Close()
	}
}

// goneRemoved: gone, linked twice, removed by SIGHUP (the hub's file becomes
// clubs): both links closed, and it is let in no more.
func (r *authRun) goneRemoved(clubs string) {
	t := r.t
	goneRow := authRow{"gone's token", "gone", "unknown_club", func([]byte) creds { return creds{User: "gone", Pass: "token-gone"} }}
	var links []net.Conn
	for range 2 {
		in, conn, said, err := leafAttempt(r.hub.leaf(), r.roots, goneRow.present)
		if err != nil || !in {
			t.Fatalf("gone's token before the SIGHUP: refused (%s, %v)", said, err)
		}
		links = append(links, conn)
	}
	r.hub.write(t, clubs)
	if err := r.hub.proc.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	r.hub.proc.WaitOutput("SIGHUP: clubs reloaded", 30*time.Second)
	for i, c := range links {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 4096)
		var err error
		for err == nil {
			_, err = c.Read(buf) // the hub's PINGs, until it closes the link
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			r.failures++
			t.Errorf("gone's link %d of 2 still open 10 s after gone was removed by SIGHUP", i+1)
		}
		c.Close()
	}
	in, said := r.attempt(leafAttempt(r.hub.leaf(), r.roots, goneRow.present))
	r.check("leaf", goneRow, false, in, said)
}

// stockLeaf: the attack as it was made, a stock nats-server as a leaf
// with the stand-in as north's password in its URL: refused, no link up.
func (r *authRun) stockLeaf(conf, caFile string) {
	t := r.t
	mon := proctest.FreePort(t)
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("http_port: %d\nleafnodes { remotes: [ { url: %q, tls: { ca_file: %q } } ] }\n",
		mon, fmt.Sprintf("tls://north:%%00not%%20a%%20club@127.0.0.1:%d", r.hub.leafPort), caFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	before := r.seen
	stock := proctest.StartNATS(t, proctest.NATSOptions{Config: conf, Name: "impostor"})
	defer stock.Stop()
	bustest.WaitWithin(t, 60*time.Second, "the stock leaf's two attempts refused", func() (bool, string) {
		n := len(refusals(r.hub.proc.Output()))
		return n >= before+2, fmt.Sprintf("%d refusals since it started; the leaf's log: %s", n-before, lastLines(stock.Output(), 3))
	})
	var leafz struct {
		Leafs int `json:"leafnodes"`
	}
	getJSON(t, fmt.Sprintf("http://127.0.0.1:%d/leafz", mon), &leafz)
	for _, l := range refusals(r.hub.proc.Output())[before:] {
		if l["club"] != "north" || l["cause"] != "key_club_token" {
			t.Errorf("the stock leaf's refusal: %v; want club north, cause key_club_token", l)
		}
	}
	if leafz.Leafs != 0 {
		r.failures++
		t.Errorf("the stock nats-server with north's name and the stand-in as password: %d leaf links up; want 0", leafz.Leafs)
	}
}

// impostor tries every row of the matrix, at the leaf listener (in clear if roots
// is nil) and at the tools' listener, again and again until stop is closed.
type impostor struct {
	attempts, refused, wronglyIn int
	// timedOut: attempts the hub's server closed for not authenticating within its
	// auth timeout (-ERR 'Authentication Timeout') on a starved machine: the hub's
	// authenticator had not seen them, or not finished (then a refusal line).
	timedOut int
	errs     []error
	done     chan struct{}
}

func startImpostor(leaf, tools string, roots *x509.CertPool, rows []authRow, stop <-chan struct{}) *impostor {
	im := &impostor{done: make(chan struct{})}
	go func() {
		defer close(im.done)
		for {
			for _, row := range rows {
				select {
				case <-stop:
					return
				default:
				}
				c := row.present(nil)
				im.try(leafAttempt(leaf, roots, row.present))(row.cause == "")
				im.try(toolsAttempt(tools, func([]byte) creds { return c }))(c.none())
			}
		}
	}()
	return im
}

// try counts an attempt; the function it gives says whether it should have got in.
func (im *impostor) try(in bool, conn net.Conn, said string, err error) func(bool) {
	if conn != nil {
		conn.Close()
	}
	return func(want bool) {
		switch {
		case err != nil:
			im.errs = append(im.errs, err)
		case in && !want:
			im.wronglyIn++
		case !in && strings.Contains(said, "Authentication Timeout"):
			im.timedOut++
		case !in:
			im.refused++
		}
		im.attempts++
	}
}

// check waits for the impostor to stop (its stop closed) and says what it did: 0
// let in wrongly, every row tried at both listeners, one refusal line at the hub
// (output) for each refused attempt, and for one its server timed out one or none
// (the hub's authenticator may have refused it as the server's timer fired).
func (im *impostor) check(t *testing.T, output func() string, rows int) {
	t.Helper()
	<-im.done
	t.Logf("the impostor during the flood: %d attempts, %d refused, %d timed out, %d let in wrongly, %d errors %v", im.attempts, im.refused, im.timedOut, im.wronglyIn, len(im.errs), im.errs)
	if im.wronglyIn > 0 || len(im.errs) > 0 || im.attempts < 2*rows {
		t.Errorf("the impostor: %d attempts (want every row at both listeners at least), %d let in wrongly, errors %v", im.attempts, im.wronglyIn, im.errs)
	}
	bustest.WaitWithin(t, 30*time.Second, "one refusal line each of the impostor's refused attempts", func() (bool, string) {
		n := len(refusals(output()))
		return n >= im.refused && n <= im.refused+im.timedOut, fmt.Sprintf("%d lines, %d refused, %d timed out", n, im.refused, im.timedOut)
	})
}
