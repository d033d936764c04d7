package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/certtest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// tlsHub is a hub as a real process: its file, its ports.
type tlsHub struct {
	proc              *proctest.Process
	conf              string
	hubPort, leafPort int
	head              string // the file's [league] table
}

// startTLSHub starts a hub whose leaf listener has the certificate pair (none:
// no TLS), with the clubs' tables.
func startTLSHub(t *testing.T, bin, dir string, pair *certtest.Pair, clubs string) *tlsHub {
	t.Helper()
	h := &tlsHub{conf: filepath.Join(dir, "hub.toml"), hubPort: proctest.FreePort(t), leafPort: proctest.FreePort(t)}
	h.head = fmt.Sprintf("[league]\nlisten = \"127.0.0.1:%d\"\nleaf_listen = \"127.0.0.1:%d\"\nhttp = \"off\"\nstate_dir = %q\n",
		h.hubPort, h.leafPort, filepath.Join(dir, "state"))
	if pair != nil {
		h.head += fmt.Sprintf("leaf_tls_cert = %q\nleaf_tls_key = %q\n", pair.Cert, pair.Key)
	}
	h.write(t, clubs)
	h.proc = proctest.Start(t, bin, "hub", "--config", h.conf, "--log-format", "json")
	h.proc.WaitOutput("league hub running", 30*time.Second)
	return h
}

func (h *tlsHub) write(t *testing.T, clubs string) {
	t.Helper()
	if err := os.WriteFile(h.conf, []byte(h.head+clubs), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (h *tlsHub) leaf() string { return fmt.Sprintf("127.0.0.1:%d", h.leafPort) }

// hubKey runs scoreboard hub key NAME --out DIR/NAME.seed: the seed file's path
// and the [[club]] table printed.
func hubKey(t *testing.T, bin, dir, name string) (seedFile, table string) {
	t.Helper()
	seedFile = filepath.Join(dir, name+".seed")
	out, err := exec.Command(bin, "hub", "key", name, "--out", seedFile).Output()
	if err != nil {
		t.Fatalf("scoreboard hub key %s: %v", name, err)
	}
	fi, err := os.Stat(seedFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("scoreboard hub key %s: seed file %v, %v; want mode 0600", name, fi, err)
	}
	if _, err := exec.Command(bin, "hub", "key", name, "--out", seedFile).Output(); err == nil {
		t.Fatalf("scoreboard hub key %s wrote over the seed file there", name)
	}
	return seedFile, string(out)
}

// linkFailures are the club's lines that say its link failed.
func linkFailures(log string) []string {
	var lines []string
	for l := range strings.SplitSeq(log, "\n") {
		if strings.Contains(l, "league hub link failed") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestLeagueTLSFault: a hub with TLS on its leaf listener (a certificate of the
// test's CA for 127.0.0.1); clubs whose link cannot be TLS as it should each log
// one line that says why and what to change, whatever the number of attempts, and
// answer their ports meanwhile; a club that asks for TLS sends no credentials to
// a hub without it. The causes: a CA that did not sign the hub's certificate, a
// name the certificate is not for, an expired certificate, a hub without TLS.
func TestLeagueTLSFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	ca := certtest.NewCA(t, root, "league-ca")
	other := certtest.NewCA(t, root, "other-ca")
	good := ca.Server("hub", "127.0.0.1")
	expired := ca.Expired("expired", "127.0.0.1")
	clubs := ""
	for _, c := range []string{"east", "west", "old", "bare"} {
		clubs += fmt.Sprintf("[[club]]\nname = %q\ntoken = \"token-%s\"\n", c, c)
	}
	mk := func(name string) string { d := filepath.Join(root, name); os.MkdirAll(d, 0o700); return d }
	withTLS := startTLSHub(t, bin, mk("hub"), &good, clubs)
	oldHub := startTLSHub(t, bin, mk("oldhub"), &expired, clubs)
	plainHub := startTLSHub(t, bin, mk("plainhub"), nil, clubs)

	cases := []struct {
		club, cause, want string
		hub               *tlsHub
		host              string // the URL's host: the certificate is for 127.0.0.1
		ca                string
	}{
		{"east", "tls_unknown_ca", "did not sign the hub's certificate: set hub.tls_ca", withTLS, "127.0.0.1", other.File},
		{"west", "tls_wrong_name", "not for the name in the club's hub.url", withTLS, "localhost", ca.File},
		{"old", "tls_expired", "has expired", oldHub, "127.0.0.1", ca.File},
		{"bare", "tls_none", "the hub does not answer in TLS", plainHub, "127.0.0.1", ca.File},
	}
	proxies := map[string]*linkProxy{}
	started := map[string]*leagueClub{}
	for i, c := range cases {
		p := newLinkProxy(t, c.hub.leaf())
		p.recordAll()
		proxies[c.club] = p
		port := p.addr[strings.LastIndex(p.addr, ":")+1:]
		started[c.club] = startLeagueClub(t, bin, c.club, "tls://"+c.host+":"+port, filepath.Join(root, c.club), i*1000, "--hub-tls-ca", c.ca)
		started[c.club].feed(5)
	}
	// Four attempts of each club's at least: one line each all the same.
	const attempts = 4
	bustest.WaitWithin(t, 90*time.Second, fmt.Sprintf("%d attempts of each club's", attempts), func() (bool, string) {
		ok, counts := true, ""
		for _, c := range cases {
			n := proxies[c.club].accepted.Load()
			ok = ok && n >= attempts
			counts += fmt.Sprintf("%s %d; ", c.club, n)
		}
		return ok, counts
	})
	for _, c := range cases {
		club := started[c.club]
		club.answered(60 * time.Second)
		club.feed(3)
		club.answered(60 * time.Second)
		lines := linkFailures(club.errb.String())
		if len(lines) != 1 || !strings.Contains(lines[0], `"cause":"`+c.cause+`"`) || !strings.Contains(lines[0], c.want) {
			t.Errorf("club %s, %d attempts: %d lines of its link's failure, want 1 with cause %s saying %q:\n%s",
				c.club, proxies[c.club].accepted.Load(), len(lines), c.cause, c.want, strings.Join(lines, "\n"))
			continue
		}
		t.Logf("club %s, %d attempts, 1 line: %s", c.club, proxies[c.club].accepted.Load(), lines[0])
		if rec := eavesdrop(proxies[c.club]); strings.Contains(rec, "token-"+c.club) || strings.Contains(rec, "CONNECT") {
			t.Errorf("club %s: its attempts sent a CONNECT or its token (%d bytes recorded)", c.club, len(rec))
		}
	}
}

// TestLeagueKeyEavesdropperFault: clubs with a key (made by scoreboard hub key,
// the hub's file holding only the public one) and with a token join a hub over
// TLS, through proxies that record every byte both ways while they play: the
// recordings hold neither seed nor token nor a board's text. The same clubs in
// clear, to a hub without TLS: the recordings hold the token and the boards (the
// seed never crosses). Then north's key is changed in the hub's file and a SIGHUP
// closes north's link within 1 s, and the new key joins.
func TestLeagueKeyEavesdropperFault(t *testing.T) {
	bin := proctest.Scoreboard(t)
	root := t.TempDir()
	ca := certtest.NewCA(t, root, "league-ca")
	good := ca.Server("hub", "127.0.0.1", "localhost")
	keys := filepath.Join(root, "keys")
	os.MkdirAll(keys, 0o700)
	northSeed, northTable := hubKey(t, bin, keys, "north")
	seed, err := os.ReadFile(northSeed)
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSpace(string(seed))
	clubs := northTable + "[[club]]\nname = \"south\"\ntoken = \"token-south\"\n"
	// The table holds the public key alone: not the seed (any "SU" in it was a
	// test's own defect: a public key's base32 holds those two letters by chance, in
	// about one key of 20: 5.1 % of 200,000 random ones), and a valid user's public
	// key.
	_, rest, ok := strings.Cut(northTable, "nkey = \"")
	pubKey, _, _ := strings.Cut(rest, "\"")
	if !ok || strings.Contains(clubs, secret) || !nkeys.IsValidPublicUserKey(pubKey) {
		t.Fatalf("scoreboard hub key printed %q: want the public key (U...) only", northTable)
	}

	for _, tc := range []struct {
		name   string
		pair   *certtest.Pair
		scheme string
		tls    bool
	}{{"TLS", &good, "tls://localhost:", true}, {"clear", nil, "nats-leaf://127.0.0.1:", false}} {
		dir := filepath.Join(root, tc.name)
		os.MkdirAll(dir, 0o700)
		hub := startTLSHub(t, bin, dir, tc.pair, clubs)
		if conf, _ := os.ReadFile(hub.conf); strings.Contains(string(conf), secret) {
			t.Fatal("the hub's file holds north's seed")
		}
		recs := map[string]*linkProxy{}
		players := map[string]*leagueClub{}
		for i, name := range []string{"north", "south"} {
			p := newLinkProxy(t, hub.leaf())
			p.recordAll()
			recs[name] = p
			url := tc.scheme + p.addr[strings.LastIndex(p.addr, ":")+1:]
			var more []string
			if tc.tls {
				more = append(more, "--hub-tls-ca", ca.File)
			}
			token := "token-" + name
			if name == "north" {
				token = ""
				more = append(more, "--hub-seed-file", northSeed)
			}
			players[name] = startLeagueClubAs(t, bin, name, token, url, filepath.Join(dir, name), 100*i, more...)
			players[name].feed(10)
		}
		nc := busConnect(t, fmt.Sprintf("nats://127.0.0.1:%d", hub.hubPort))
		bustest.Wait(t, tc.name+": each club's 10 results in LEAGUE", func() (bool, string) {
			_, results := leagueUnits(t, nc)
			return len(results["north"]) == 10 && len(results["south"]) == 10, fmt.Sprintf("north %d, south %d", len(results["north"]), len(results["south"]))
		})
		board, _ := faulttest.GoscoreBoard(102) // south's third unit
		row := strings.Split(board, "\n")[1]
		all := eavesdrop(recs["north"]) + eavesdrop(recs["south"])
		found := map[string]int{
			"north's seed":     strings.Count(all, secret),
			"south's token":    strings.Count(all, "token-south"),
			"a board's row":    strings.Count(all, row),
			"CONNECT in clear": strings.Count(all, "CONNECT {"),
		}
		carried := recs["north"].bytes.Load() + recs["south"].bytes.Load()
		t.Logf("%s: %d bytes carried, %d read by the eavesdropper (S2 decompressed); found %v", tc.name, carried, len(all), found)
		switch {
		case found["north's seed"] > 0:
			t.Errorf("%s: the recording holds north's seed", tc.name)
		case tc.tls && found["south's token"]+found["a board's row"]+found["CONNECT in clear"] > 0:
			t.Errorf("%s: the recording holds secrets or boards: %v", tc.name, found)
		case !tc.tls && (found["south's token"] == 0 || found["a board's row"] == 0):
			t.Errorf("%s: the recording lacks the token or the board: %v; the eavesdropper sees nothing even in clear?", tc.name, found)
		}
		if !tc.tls {
			continue
		}
		// North's key changed in the hub's file: SIGHUP closes its link.
		newSeed, newTable := hubKey(t, bin, t.TempDir(), "north")
		hub.write(t, newTable+"[[club]]\nname = \"south\"\ntoken = \"token-south\"\n")
		signalled := time.Now()
		if err := hub.proc.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		hub.proc.WaitOutput("SIGHUP: clubs reloaded", 30*time.Second)
		var closed time.Time
		bustest.WaitWithin(t, 30*time.Second, "north's link closed at the proxy", func() (bool, string) {
			p := recs["north"]
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, e := range p.ended {
				if e.After(signalled) {
					closed = e
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d connections of north's ended, none after the SIGHUP", len(p.ended))
		})
		// From the signal sent to the end of the link at the proxy: the hub reads
		// its file, updates LEAGUE's sources, and closes the link.
		took := closed.Sub(signalled)
		t.Logf("north's old key's link closed %v after the SIGHUP", took.Round(time.Millisecond))
		if took > time.Second {
			t.Errorf("north's old key's link closed %v after the SIGHUP; want within 1 s", took)
		}
		// The new key joins, with north's history as it was.
		players["north"].stop()
		url := tc.scheme + recs["north"].addr[strings.LastIndex(recs["north"].addr, ":")+1:]
		north := startLeagueClubAs(t, bin, "north", "", url, filepath.Join(dir, "north"), 1000, "--hub-tls-ca", ca.File, "--hub-seed-file", newSeed)
		north.feed(5)
		bustest.Wait(t, "north's 15 results in LEAGUE with its new key", func() (bool, string) {
			_, results := leagueUnits(t, nc)
			return len(results["north"]) == 15, fmt.Sprintf("north %d", len(results["north"]))
		})
	}
}

// eavesdrop is what an eavesdropper on p reads of every connection, each way: the
// bytes, and from the S2 stream on (nats-server compresses a leaf connection
// once both ends agree, its CONNECT included: compress_mode s2_*), the bytes
// decompressed, as anyone can.
func eavesdrop(p *linkProxy) string {
	const s2Stream = "\xff\x06\x00\x00S2sTwO"
	p.mu.Lock()
	recs := slices.Clone(p.recs)
	p.mu.Unlock()
	var b strings.Builder
	for _, r := range recs {
		for _, way := range []string{r.up.String(), r.down.String()} {
			i := strings.Index(way, s2Stream)
			if i < 0 {
				b.WriteString(way)
				continue
			}
			b.WriteString(way[:i])
			// Up to the recording's end, or the first frame cut there.
			plain, _ := io.ReadAll(s2.NewReader(strings.NewReader(way[i:])))
			b.Write(plain)
		}
	}
	return b.String()
}
