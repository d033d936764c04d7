package league

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"

	"github.com/nats-io/nkeys"

	"github.com/goclub/scoreboard/bus"
)

// NewClubKey makes a club's key pair: the seed, which the club alone keeps (its
// hub.seed_file), and the club as the hub's file holds it, with the public key only.
func NewClubKey(name string) (seed []byte, club Club, err error) {
	club = Club{Name: name}
	switch {
	case !bus.ValidToken(name):
		return nil, club, fmt.Errorf("club name %q: want lowercase letters, digits, '-' and '_' (it is the club's --hub-club)", name)
	case name == Domain:
		return nil, club, fmt.Errorf("club name %q is the hub's own JetStream domain: give the club another name", name)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, club, err
	}
	defer kp.Wipe()
	s, err := kp.Seed()
	if err != nil {
		return nil, club, err
	}
	seed = slices.Clone(s) // Wipe zeroes the key pair's own

	club.NKey, err = kp.PublicKey()
	return seed, club, err
}

// WriteSeedFile writes a club's seed to path, mode 0600, and never over a file
// there: a club's key replaced by mistake locks the club out.
func WriteSeedFile(path string, seed []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s is there already: a club's key is not written over (remove the file first to replace the key)", path)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(append(seed, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	// The check the club makes when it reads the file, made here too.
	if _, err := bus.ReadSeedFile(path); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// Table is the club's [[club]] table, as the hub's file takes it.
func (c Club) Table() string {
	s := "[[club]]\nname = " + strconv.Quote(c.Name) + "\n"
	if c.NKey != "" {
		s += "nkey = " + strconv.Quote(c.NKey) + "\n"
	}
	if c.Token != "" {
		s += "token = " + strconv.Quote(c.Token) + "\n"
	}
	if c.Prefix != "" {
		s += "prefix = " + strconv.Quote(c.Prefix) + "\n"
	}
	return s
}
