package bus_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/bus"
)

// TestSeedFileFromSystemdCredentials: systemd (254 and later) gives a service its
// LoadCredential= copies at mode 0440 with an ACL for the service's user, in a
// directory only that user may enter. The club's documented way to pass its seed
// (docs/league.md, "A club's key") must be taken there, and only there: the same
// mode anywhere else, or in a credentials directory others may enter, is refused.
func TestSeedFileFromSystemdCredentials(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	write := func(dir string, dirMode, mode os.FileMode) string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "hub.seed")
		if err := os.WriteFile(file, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(file, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, dirMode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return file
	}
	root := t.TempDir()
	creds := filepath.Join(root, "credentials", "scoreboard.service")
	inCreds := write(creds, 0o550, 0o440)
	elsewhere := write(filepath.Join(root, "etc"), 0o750, 0o440)
	open := write(filepath.Join(root, "open", "scoreboard.service"), 0o755, 0o440)

	t.Setenv("CREDENTIALS_DIRECTORY", creds)
	if got, err := bus.ReadSeedFile(inCreds); err != nil || got != string(seed) {
		t.Errorf("a 0440 seed in $CREDENTIALS_DIRECTORY (mode 0550): %v; want it taken", err)
	}
	if _, err := bus.ReadSeedFile(elsewhere); err == nil || !strings.Contains(err.Error(), "chmod 600 "+elsewhere) {
		t.Errorf("a 0440 seed outside $CREDENTIALS_DIRECTORY: %v; want refused naming chmod 600", err)
	}
	t.Setenv("CREDENTIALS_DIRECTORY", filepath.Dir(open))
	if _, err := bus.ReadSeedFile(open); err == nil || !strings.Contains(err.Error(), "chmod 600 "+open) {
		t.Errorf("a 0440 seed in a credentials directory others may enter (0755): %v; want refused", err)
	}
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	if _, err := bus.ReadSeedFile(inCreds); err == nil {
		t.Error("a 0440 seed with no $CREDENTIALS_DIRECTORY set: taken; want refused")
	}
	if err := os.Chmod(inCreds, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CREDENTIALS_DIRECTORY", creds)
	if _, err := bus.ReadSeedFile(inCreds); err == nil {
		t.Error("a 0444 seed in $CREDENTIALS_DIRECTORY: taken; want refused (others may read it)")
	}
}
