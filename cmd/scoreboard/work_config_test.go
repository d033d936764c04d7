package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/proctest"
)

// TestWorkConfig: 'scoreboard work --config' takes its server and credentials from
// run's config file (the token from the environment, as the unit's EnvironmentFile
// would give it), and serves.
func TestWorkConfig(t *testing.T) {
	s := proctest.StartNATS(t, proctest.NATSOptions{Token: "t0ken"})
	path := filepath.Join(t.TempDir(), "scoreboard.toml")
	conf := "[nats]\nurl = \"" + s.URL() + "\"\n\n[log]\nlevel = \"debug\"\nformat = \"json\"\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCOREBOARD_NATS_TOKEN", "t0ken")
	nc := busConnect(t, s.URL(), nats.Token("t0ken"))
	work := busStartWork(t, nc, "--config", path)
	busSolveRequests(t, nc, 3)
	if err := work.Stop(); err != nil {
		t.Errorf("work: %v\n%s", err, work.Output())
	}
}
