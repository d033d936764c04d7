package league

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"
)

// fuzzConn is a connection as the check sees it: its CONNECT's options, the nonce
// the hub sent it, its kind, and the user the check registers.
type fuzzConn struct {
	opts  *server.ClientOpts
	nonce []byte
	kind  int
	user  *server.User
}

func (c *fuzzConn) GetOpts() *server.ClientOpts                 { return c.opts }
func (c *fuzzConn) GetTLSConnectionState() *tls.ConnectionState { return nil }
func (c *fuzzConn) RegisterUser(u *server.User)                 { c.user = u }
func (c *fuzzConn) RemoteAddress() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4242}
}
func (c *fuzzConn) GetNonce() []byte { return c.nonce }
func (c *fuzzConn) Kind() int        { return c.kind }
func (c *fuzzConn) GetID() uint64    { return 7 }

// FuzzAuthCheck: any user, password, token, key, signature and JWT, at the leaf
// listener or the tools', against north and south (keys) and east and west
// (tokens). The key and the signature are the fuzzer's bytes, or one of the
// clubs' or a stranger's public key, and a signature by one of those keys of the
// connection's nonce or of another. Property: the check never panics; it lets in
// at the leaf listener exactly a club's key with that key's signature of this
// nonce (the club's name as the only other field, if any), or a token club's name
// and token and nothing else, registering that club; at the tools' listener
// exactly a CONNECT without credentials; each refusal is one log line, without
// the clubs' tokens.
func FuzzAuthCheck(f *testing.F) {
	kps := make([]nkeys.KeyPair, 3) // north, south, a stranger
	pubs := make([]string, 3)
	for i := range kps {
		seed := bytes.Repeat([]byte{byte(i + 1)}, 32)
		kp, err := nkeys.FromRawSeed(nkeys.PrefixByteUser, seed)
		if err != nil {
			f.Fatal(err)
		}
		kps[i], pubs[i] = kp, must(kp.PublicKey())
	}
	clubs := []Club{{Name: "north", NKey: pubs[0]}, {Name: "south", NKey: pubs[1]}, {Name: "east", Token: "tok-east"}, {Name: "west", Token: "tok-west"}}
	accounts := map[string]*server.Account{}
	for _, c := range clubs {
		accounts[c.Name] = server.NewAccount(clubAccount(c.Name))
	}
	// keyOf: 0 the fuzzer's key, 1..3 north's, south's, the stranger's. sigBy: 0
	// the fuzzer's signature, 1..3 by north, south, the stranger of the nonce, 4..6
	// of another nonce.
	f.Add(true, "north", "\x00not a club", "", "", uint8(0), "", uint8(0), "", []byte("nonce"))
	f.Add(true, "", "", "", "", uint8(1), "", uint8(1), "", []byte("nonce"))
	f.Add(true, "north", "", "", "", uint8(1), "", uint8(1), "", []byte("nonce"))
	f.Add(true, "", "", "", "", uint8(1), "", uint8(2), "", []byte("nonce"))
	f.Add(true, "", "", "", "", uint8(1), "", uint8(4), "", []byte("nonce"))
	f.Add(true, "", "", "", "", uint8(1), "", uint8(1), "", []byte(nil))
	f.Add(true, "north", "", "", "", uint8(2), "", uint8(2), "", []byte("nonce"))
	f.Add(true, "east", "tok-east", "", "", uint8(0), "", uint8(0), "", []byte("nonce"))
	f.Add(true, "east", "tok-west", "", "", uint8(0), "", uint8(0), "", []byte("nonce"))
	f.Add(true, "East", "tok-east", "", "", uint8(0), "", uint8(0), "", []byte("nonce"))
	f.Add(true, "", "", "tok-east", "", uint8(0), "", uint8(0), "", []byte("nonce"))
	f.Add(true, "east", "", "", "", uint8(3), "", uint8(3), "", []byte("nonce"))
	f.Add(true, "north", pubs[0], "", "", uint8(0), "", uint8(0), "", []byte("nonce"))
	f.Add(true, "", "", "", "", uint8(1), "", uint8(1), "eyJ0eXAiOiJKV1QifQ.e30.x", []byte("nonce"))
	f.Add(true, "", "", "", "\x00", uint8(0), "\x00", uint8(0), "", []byte("nonce"))
	f.Add(false, "", "", "", "", uint8(0), "", uint8(0), "", []byte(nil))
	f.Add(false, "east", "tok-east", "", "", uint8(0), "", uint8(0), "", []byte(nil))
	f.Add(false, "", "", "", "", uint8(1), "", uint8(1), "", []byte(nil))
	f.Fuzz(func(t *testing.T, leaf bool, user, pass, token, nkey string, keyOf uint8, sig string, sigBy uint8, jwt string, nonce []byte) {
		if k := keyOf % 4; k > 0 {
			nkey = pubs[k-1]
		}
		signer, signedNonce := -1, false
		if s := sigBy % 7; s > 0 {
			signer, signedNonce = int(s-1)%3, s <= 3
			msg := nonce
			if !signedNonce {
				msg = append([]byte("other"), nonce...)
			}
			sig = base64.RawURLEncoding.EncodeToString(must(kps[signer].Sign(msg)))
		}
		var log bytes.Buffer
		a := newAuth(clubs, zerolog.New(&log))
		a.setAccounts(accounts)
		kind := server.CLIENT
		if leaf {
			kind = server.LEAF
		}
		c := &fuzzConn{opts: &server.ClientOpts{Username: user, Password: pass, Token: token, Nkey: nkey, Sig: sig, JWT: jwt}, nonce: nonce, kind: kind}
		in := a.Check(c)

		want := ""
		switch {
		case !leaf:
			if user+pass+token+nkey+sig+jwt == "" {
				want = "tool"
			}
		case jwt != "":
		case nkey != "":
			i := slices.Index(pubs[:2], nkey)
			if i >= 0 && signer == i && signedNonce && len(nonce) > 0 && pass == "" && token == "" && (user == "" || user == clubs[i].Name) {
				want = clubs[i].Name
			}
		case sig == "" && token == "" && (user == "east" && pass == "tok-east" || user == "west" && pass == "tok-west"):
			want = user
		}
		got := ""
		if in && c.user != nil {
			got = c.user.Username
		}
		if in && leaf && (c.user.Account == nil || c.user.Account != accounts[got]) {
			t.Fatalf("club %s let in bound to account %v, want its own", got, c.user.Account)
		}
		if in != (want != "") || got != want {
			t.Fatalf("leaf %v, user %q, pass %q, token %q, nkey %q, sig %q (signer %d, this nonce %v), jwt %q, nonce %q: in %v as %q; want %q",
				leaf, user, pass, token, nkey, sig, signer, signedNonce, jwt, nonce, in, got, want)
		}
		lines := strings.Count(log.String(), "\n")
		if in && lines != 0 || !in && lines != 1 {
			t.Fatalf("in %v: %d log lines, want %d: %s", in, lines, map[bool]int{true: 0, false: 1}[in], log.String())
		}
		for _, secret := range []string{"tok-east", "tok-west"} {
			if strings.Contains(log.String(), secret) && !strings.Contains(user+nkey, secret) {
				t.Fatalf("the refusal's line holds a club's token: %s", log.String())
			}
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
