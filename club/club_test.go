package club_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/club"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
)

// settings are run's settings from a config file's text, as config.Load reads them.
func settings(t *testing.T, text string) config.Config {
	t.Helper()
	none := func(string) (string, bool) { return "", false }
	c, err := config.Parse(nil, config.Lookup(config.RunKeys()...), "scoreboard.toml", []byte(text), none)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A club daemon on its stdin port: the sample's input in, its output buffered.
type port struct {
	d   *club.Daemon
	out *proctest.Buffer
}

func start(t *testing.T, text string, in io.Reader) port {
	t.Helper()
	c := settings(t, text)
	cfg := c.DaemonConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	out := &proctest.Buffer{}
	cfg.Stdin, cfg.Stdout = in, out
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := club.Start(ctx, club.Config{Settings: c, Ports: cfg, Version: "0.0.0-test", Log: bustest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Shutdown(context.Background()) })
	return port{d, out}
}

// Two club daemons on one bus, started through the type, as two rooms of a club
// share the club's nats-server: the first with the workers, the second with none
// of its own, so its port is answered by the first's workers. Each port answers
// its sample byte for byte, and the history (the stream both set up) holds a
// result for every unit of both.
func TestTwoDaemonsOnOneBus(t *testing.T) {
	goIn, goOut := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	othIn, othOut := samples.Pair(t, samples.Case{Problem: "othello", File: "othello"})
	url := natsServer(t)
	// The first room's input stays open until the second's has ended: the
	// first's workers serve both meanwhile.
	hallIn, hall := io.Pipe()
	go func() { _, _ = hall.Write(goIn) }()

	first := start(t, fmt.Sprintf(`
[nats]
url = %q
[http]
listen = "off"
[[port]]
name = "hall"
device = "-"
problem = "goscore"
`, url), hallIn)
	if got := first.d.ClientURL(); got != url {
		t.Fatalf("the daemon says its bus is %q, want %q", got, url)
	}
	second := start(t, fmt.Sprintf(`
[nats]
url = %q
[daemon]
workers = false
[http]
listen = "off"
[[port]]
name = "annex"
device = "-"
problem = "othello"
`, url), bytes.NewReader(othIn))

	// Each daemon ends by itself at the end of its stdin, every unit answered.
	for _, p := range []port{second, first} {
		select {
		case <-p.d.Done():
		case <-time.After(2 * time.Minute):
			t.Fatalf("a daemon did not end at the end of its input; it wrote %d bytes", len(p.out.String()))
		}
		hall.Close()
	}
	for _, w := range []struct {
		name string
		p    port
		want []byte
	}{
		{"hall (goscore)", first, goOut},
		{"annex (othello)", second, othOut},
	} {
		if got := w.p.out.String(); got != string(w.want) {
			t.Errorf("port %s answered\n%q\nwant\n%q", w.name, got, w.want)
		}
	}

	// Both ports are in the history, before either daemon stops.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, bus.Subjects{Prefix: "scoreboard"}.Stream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter("scoreboard.result.>"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{
		"scoreboard.result.goscore.hall":  uint64(len(samples.Units(t, "goscore", "goscore.in"))),
		"scoreboard.result.othello.annex": uint64(len(samples.Units(t, "othello", "othello.in"))),
	}
	for subject, n := range want {
		if got := info.State.Subjects[subject]; got != n {
			t.Errorf("the history holds %d results on %s, want %d (all: %v)", got, subject, n, info.State.Subjects)
		}
	}

	// The joined one first, then the one with the server; each stops cleanly.
	for _, p := range []port{second, first} {
		if err := p.d.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
}

// natsServer starts a plain nats-server with JetStream, as a club's own server
// is, and returns its URL.
func natsServer(t *testing.T) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(bustest.Long) {
		t.Fatal("nats-server: not ready for connections")
	}
	return ns.ClientURL()
}
