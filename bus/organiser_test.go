package bus_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
)

// TestOrganiserFile: the daemon makes its organiser file once, mode 0640 under the
// service's umask 0077, and reads the same password at every start; a file others
// may read, a directory, a FIFO (which would hang a plain open), a huge file or
// one with no password in it are refused, each naming the file and what to do.
func TestOrganiserFile(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, bus.OrganiserFile)
	pw, err := bus.EnsureOrganiserFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("the organiser file: %v, mode %04o; want 0640", err, fi.Mode().Perm())
	}
	if again, err := bus.EnsureOrganiserFile(dir); err != nil || again != pw {
		t.Errorf("the second start: %q, %v; want the first's password", again, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.new-*")); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
	if other, err := bus.EnsureOrganiserFile(t.TempDir()); err != nil || other == pw {
		t.Errorf("another state dir's password: %q, %v; want a new one", other, err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.EnsureOrganiserFile(dir); err == nil || !strings.Contains(err.Error(), "chmod 640 "+path) {
		t.Errorf("a file others may read: %v; want refused, naming chmod 640", err)
	}

	cases := map[string]func(string) error{
		"a directory": func(p string) error { return os.Mkdir(p, 0o700) },
		"a FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"no password": func(p string) error { return os.WriteFile(p, []byte("hello world, not one\n"), 0o600) },
		"empty":       func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"huge":        func(p string) error { return os.WriteFile(p, []byte(strings.Repeat("a", 5000)), 0o600) },
	}
	for what, make := range cases {
		p := filepath.Join(t.TempDir(), bus.OrganiserFile)
		if err := make(p); err != nil {
			t.Fatal(err)
		}
		if _, err := bus.ReadOrganiserFile(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v; want refused, naming the file", what, err)
		}
	}
	missing := filepath.Join(t.TempDir(), bus.OrganiserFile)
	if _, err := bus.ReadOrganiserFile(missing); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "first start") {
		t.Errorf("no file: %v; want an error naming it and the daemon's first start", err)
	}
}

// FuzzParseOrganiserPassword: any file's contents are refused or give a password
// of 16 to 256 letters, digits, '-' and '_', which parses again to itself.
func FuzzParseOrganiserPassword(f *testing.F) {
	for _, s := range []string{"", "\n", "short", strings.Repeat("A", 43) + "\n", " abc-def_0123456789xyz \r\n",
		strings.Repeat("x", 257), "two words of password here", "pass\x00word0123456789", "pässwort0123456789ab"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pw, err := bus.ParseOrganiserPassword(data)
		if err != nil {
			return
		}
		if len(pw) < 16 || len(pw) > 256 {
			t.Fatalf("%q: a password of %d bytes", data, len(pw))
		}
		for _, c := range []byte(pw) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				t.Fatalf("%q: byte %q in the password", data, c)
			}
		}
		if again, err := bus.ParseOrganiserPassword([]byte(pw + "\n")); err != nil || again != pw {
			t.Fatalf("%q: parsed again: %q, %v", pw, again, err)
		}
	})
}

// checkOrganiserRole: the organiser (logged in with login) may request a pairings
// load and take the daemon's answer, and nothing else: no dump, result, solve
// request, nor a subscription under the prefix; a tool's load is refused.
func checkOrganiserRole(t *testing.T, daemon *nats.Conn, url string, login nats.Option) {
	t.Helper()
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	loads := recv(t, daemon, s.PairingsLoad())
	go func() {
		for m := range loads {
			_ = m.Respond([]byte("loaded " + string(m.Data)))
		}
	}()
	t.Cleanup(func() { daemon.Close() })
	tool, toolErrs := roleConn(t, url)
	if err := tool.PublishRequest(s.PairingsLoad(), nats.NewInbox(), []byte("tool")); err != nil {
		t.Fatal(err)
	}
	refused(t, toolErrs, "a tool's load", s.PairingsLoad())
	org, orgErrs := roleConn(t, url, login)
	if m, err := org.Request(s.PairingsLoad(), []byte("round"), 10*time.Second); err != nil || string(m.Data) != "loaded round" {
		t.Fatalf("the organiser's load: %v; want the daemon's answer", err)
	}
	for _, subj := range []string{s.Dump("goscore", "desk"), s.Result("goscore", "desk"), s.Solve("goscore"), "_INBOX.x"} {
		if err := org.Publish(subj, []byte("x")); err != nil {
			t.Fatal(err)
		}
		refused(t, orgErrs, "the organiser publishing on "+subj, subj)
	}
	if _, err := org.Subscribe(s.Prefix+".>", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	refused(t, orgErrs, "the organiser subscribing to "+s.Prefix+".>", s.Prefix+".>")
}

// TestRolesOrganiserEmbedded: the embedded server's organiser, with the password
// it was given, from loopback; every wrong login refused.
func TestRolesOrganiserEmbedded(t *testing.T) {
	pw := "organiser-" + bus.NewOrigin() + bus.NewOrigin()
	srv, err := bus.StartServerWith(bus.ServerOptions{Listen: "127.0.0.1:0", Token: "worker-token", Organiser: pw}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	for what, login := range map[string]nats.Option{
		"a wrong password":         nats.UserInfo(bus.RoleOrganiser, pw+"x"),
		"the worker's token":       nats.UserInfo(bus.RoleOrganiser, "worker-token"),
		"the password as a token":  nats.Token(pw),
		"the password as a worker": nats.UserInfo(bus.RoleWorker, pw),
	} {
		if nc, err := nats.Connect(srv.ClientURL(), login); err == nil {
			nc.Close()
			t.Errorf("%s: let in", what)
		}
	}
	daemon, _ := roleConn(t, "", nats.InProcessServer(srv.NATS()))
	checkOrganiserRole(t, daemon, srv.ClientURL(), nats.UserInfo(bus.RoleOrganiser, pw))

	// A server given no organiser lets none in, whatever the password.
	none, err := bus.StartServerWith(bus.ServerOptions{Listen: "127.0.0.1:0"}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(none.Shutdown)
	if nc, err := nats.Connect(none.ClientURL(), nats.UserInfo(bus.RoleOrganiser, "")); err == nil {
		nc.Close()
		t.Error("an organiser with no password let in where the server has none")
	}
	if _, err := bus.StartServerWith(bus.ServerOptions{Listen: "127.0.0.1:0", User: bus.RoleOrganiser, Password: "x"}, zerolog.Nop()); err == nil {
		t.Error("a worker user named organiser: started; want refused")
	}
}
