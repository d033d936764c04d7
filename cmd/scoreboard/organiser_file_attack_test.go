package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/proctest"
)

// TestOrganiserFileLinksAndOwner (review F7): whoever places organiser.password
// in the state dir as a symlink, or as a file of another user, must not set the
// organiser's password. A real headless daemon is started on each such state dir:
// it says at its start what it refused (a symlink, naming where it points and that
// a dangling one's target does not exist; a file of another owner), and the
// password the attacker knows does not log in as the organiser.
func TestOrganiserFileLinksAndOwner(t *testing.T) {
	proctest.SkipShort(t, "daemon processes started on hostile organiser files")
	bin := proctest.Scoreboard(t)
	const known = "attacker-known-password-123456"
	attacker := filepath.Join(t.TempDir(), "attacker.pw")
	if err := os.WriteFile(attacker, []byte(known+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	type setup func(t *testing.T, file string)
	cases := []struct {
		what  string
		make  setup
		wants []string
	}{
		{"a symlink to a file the attacker wrote", func(t *testing.T, file string) {
			if err := os.Symlink(attacker, file); err != nil {
				t.Fatal(err)
			}
		}, []string{"symlink", attacker}},
		{"a dangling symlink", func(t *testing.T, file string) {
			if err := os.Symlink(filepath.Join(filepath.Dir(attacker), "not-yet-there"), file); err != nil {
				t.Fatal(err)
			}
		}, []string{"symlink", "not-yet-there", "does not exist"}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			what  string
			make  setup
			wants []string
		}{"a file of another user (nobody)", func(t *testing.T, file string) {
			if err := os.WriteFile(file, []byte(known+"\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(file, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, []string{"owned by uid 65534", "uid 0"}})
	} else {
		t.Log("not root: the file of another owner is not tried")
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.what, " ", "_"), func(t *testing.T) {
			state := t.TempDir()
			file := filepath.Join(state, bus.OrganiserFile)
			c.make(t, file)
			port := proctest.FreePort(t)
			run := proctest.Start(t, bin, "run", "--daemon-state-dir", state, "--nats-listen", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
				"--http-listen", "off", "--log-format", "json")
			run.WaitOutput("scoreboard running", 60*time.Second)
			var line string
			for l := range strings.SplitSeq(run.Output(), "\n") {
				if strings.Contains(l, "no organiser on the NATS listener") {
					line = l
				}
			}
			t.Logf("the daemon's line: %s", line)
			for _, w := range c.wants {
				if !strings.Contains(line, w) {
					t.Errorf("%s: the daemon's organiser line %q; want it to say %q", c.what, line, w)
				}
			}
			url := "nats://127.0.0.1:" + strconv.Itoa(port)
			if nc, err := nats.Connect(url, nats.UserInfo(bus.RoleOrganiser, known)); err == nil {
				nc.Close()
				t.Errorf("%s: the attacker's password logged in as the organiser", c.what)
			}
		})
	}
}

// TestOrganiserGroupMemberTold (review F5): a daemon makes its state dir 0700, so a
// member of the organiser file's group may not reach the file (0640) in it. Run as
// such a user (nobody, with the file's group), `pairings load` says which file and
// what works, root (sudo) or --credentials, and does not send the user to a group
// that cannot read it.
func TestOrganiserGroupMemberTold(t *testing.T) {
	proctest.SkipShort(t, "a daemon process and the organiser's command as another user")
	if os.Geteuid() != 0 {
		t.Skip("not root: another user is not tried")
	}
	bin := proctest.Scoreboard(t)
	state := filepath.Join(t.TempDir(), "made-by-the-daemon")
	port := proctest.FreePort(t)
	run := proctest.Start(t, bin, "run", "--daemon-state-dir", state, "--nats-listen", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		"--http-listen", "off", "--log-format", "json")
	run.WaitOutput("scoreboard running", 60*time.Second)
	dfi, err := os.Stat(state)
	if err != nil {
		t.Fatal(err)
	}
	ffi, err := os.Stat(filepath.Join(state, bus.OrganiserFile))
	if err != nil {
		t.Fatal(err)
	}
	gid := ffi.Sys().(*syscall.Stat_t).Gid
	t.Logf("state dir %v, file %v group %d", dfi.Mode().Perm(), ffi.Mode().Perm(), gid)
	csv, _ := filepath.Abs("../../pairing/testdata/round.csv")
	code, out := runAs(t, 65534, gid, bin, csv, "pairings", "load", "--daemon-state-dir", state,
		"--nats-url", "nats://127.0.0.1:"+strconv.Itoa(port))
	t.Logf("as nobody in group %d: exit %d: %s", gid, code, out)
	if code == 0 || !strings.Contains(out, bus.OrganiserFile) || !strings.Contains(out, "sudo") || !strings.Contains(out, "--credentials") {
		t.Errorf("exit %d: %s; want an error naming the file, sudo and --credentials", code, out)
	}
	if strings.Contains(out, "group") {
		t.Errorf("the error sends the user to the daemon's group, whose members cannot reach the file in a %v state dir: %s", dfi.Mode().Perm(), out)
	}
}
