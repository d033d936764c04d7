package config

import (
	"os"
	"slices"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/history"
)

// The settings as each package takes them: the one place a setting becomes a
// package's config, beside ConnOptions (conn.go). Each reads a Config that Load has
// checked, so the parses cannot fail here.

// DaemonConfig is the ports' part of c: daemon.Config, its ports cloned.
func (c *Config) DaemonConfig() daemon.Config {
	return daemon.Config{
		Prefix: c.NATS.Prefix, RequestTimeout: c.Daemon.RequestTimeout, Drain: c.Daemon.Drain,
		Ports: slices.Clone(c.Ports),
	}
}

// HistoryConfig is the history's part of c; fitted, when positive, is the size
// history.FitStore gave in place of history.max_bytes.
func (c *Config) HistoryConfig(fitted int64) history.Config {
	age, _ := history.ParseAge(c.History.MaxAge)
	size, _ := history.ParseSize(c.History.MaxBytes)
	if fitted > 0 {
		size = fitted
	}
	sync, _ := history.ParseSync(c.History.Sync)
	return history.Config{Prefix: c.NATS.Prefix, MaxAge: age, MaxBytes: size, Replicas: c.History.Replicas, Sync: sync}
}

// OpenStore locks the state directory (daemon.state_dir, else the default) for the
// embedded server's store; nil with the history off.
func (c *Config) OpenStore() (*history.StateDir, error) {
	if !c.History.Enabled {
		return nil, nil
	}
	dir := c.Daemon.StateDir
	if dir == "" {
		var err error
		if dir, err = history.DefaultStateDir(os.Getenv); err != nil {
			return nil, err
		}
	}
	return history.OpenStateDir(dir)
}

// HubLink is the club's link to a league hub that [hub] asks for, or nil.
func (c *Config) HubLink() *bus.HubLink {
	h := c.Hub
	if h.URL == "" {
		return nil
	}
	return &bus.HubLink{URL: h.URL, Club: h.Club, Token: h.Token, SeedFile: h.SeedFile, TLSCA: h.TLSCA, TLSCert: h.TLSCert, TLSKey: h.TLSKey}
}
