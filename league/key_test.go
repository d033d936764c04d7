package league_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/league"
)

// TestClubKey: a club's key as scoreboard hub key makes it: the seed file mode
// 0600, never written over, read back by the club; the table holds the public key
// of that seed and nothing secret, and the hub's file takes it.
func TestClubKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "north.seed")
	seed, club, err := league.NewClubKey("north")
	if err != nil {
		t.Fatal(err)
	}
	if err := league.WriteSeedFile(file, seed); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("seed file: %v, %v; want mode 0600", fi, err)
	}
	if err := league.WriteSeedFile(file, seed); err == nil || !strings.Contains(err.Error(), "is there already") {
		t.Errorf("a second write over the seed file: %v", err)
	}
	read, err := bus.ReadSeedFile(file)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.FromSeed([]byte(read))
	if err != nil {
		t.Fatal(err)
	}
	if pub, _ := kp.PublicKey(); pub != club.NKey {
		t.Fatalf("the table's key %s is not the seed's %s", club.NKey, pub)
	}
	table := club.Table()
	if strings.Contains(table, read) || strings.Contains(table, "token") {
		t.Fatalf("the table holds a secret: %q", table)
	}
	cfg, err := league.ParseConfig("hub.toml", []byte(table))
	if err != nil || len(cfg.Clubs) != 1 || cfg.Clubs[0] != club {
		t.Fatalf("the hub's file of the table: %+v, %v", cfg, err)
	}
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.ReadSeedFile(file); err == nil || !strings.Contains(err.Error(), "chmod 600 "+file) {
		t.Errorf("a seed file the group may read: %v", err)
	}
	if _, _, err := league.NewClubKey("North"); err == nil {
		t.Error("a key for a club name that is no subject token")
	}
}
