package demo

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Setup is what 'scoreboard demo' runs the daemon with: the boards, and a
// configuration file for them.
type Setup struct {
	Boards []*Board
	Conf   string // the daemon's config file, for run --config
	Next   string // what to try once it runs
	NATS   string // the daemon's NATS URL
	// StateDir is the daemon's state directory, where it keeps the organiser's
	// password (bus.OrganiserFile) that loads the demo's round.
	StateDir string
	rmDir    string // the throwaway state directory; "": the user's
}

// Options are the demo's listeners and its state directory.
type Options struct {
	StateDir string // "": a throwaway one, removed by Close
	HTTP     string // the page's listener
	NATS     string // the NATS listener
	// AnyHTTP and AnyNATS let a taken listener be any free port on its host: the
	// defaults, which a daemon already running on the machine takes.
	AnyHTTP, AnyNATS bool
}

// Prepare opens the boards and writes the daemon's configuration; Close undoes it.
func Prepare(o Options) (_ *Setup, err error) {
	s := &Setup{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if o.StateDir == "" {
		if s.rmDir, err = os.MkdirTemp("", "scoreboard-demo-"); err != nil {
			return nil, err
		}
		o.StateDir = s.rmDir
	}
	http, err := freeOr(o.HTTP, o.AnyHTTP)
	if err != nil {
		return nil, fmt.Errorf("--http-listen: %w", err)
	}
	nats, err := freeOr(o.NATS, o.AnyNATS)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen: %w", err)
	}
	if s.Boards, err = Boards(); err != nil {
		return nil, err
	}
	s.Conf = filepath.Join(o.StateDir, "demo.toml")
	if err := os.WriteFile(s.Conf, Config(s.Boards, nats, http, o.StateDir), 0o600); err != nil {
		return nil, err
	}
	s.NATS, s.StateDir = "nats://"+nats, o.StateDir
	s.Next = Next("http://"+http+"/", s.NATS, o.StateDir, s.rmDir != "")
	return s, nil
}

// Close closes the boards and removes a throwaway state directory.
func (s *Setup) Close() {
	Close(s.Boards)
	if s.rmDir != "" {
		os.RemoveAll(s.rmDir)
	}
}

// freeOr is addr when it can be listened on; when it is taken and fallback allows,
// a free port on its host.
func freeOr(addr string, fallback bool) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil && fallback {
		host, _, _ := net.SplitHostPort(addr)
		l, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
