// Package bustest is the one way a test starts an embedded bus: the server with its
// roles (bus/roles.go) on a random loopback port, a state directory under the
// test's t.TempDir(), and the clients of each role. An external nats-server (a
// cluster node, a league hub, a server to kill) is a real process:
// proctest.StartNATS. It also holds the one wait helper, Wait, which says what it
// counted when it gives up; the one safe buffer is proctest.Buffer. nats-server's
// own test/test.go is the model.
//
// Everything a test gets here is stopped or closed when the test ends.
package bustest

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/worker"
)

// Long is how long a test waits for what should take milliseconds: generous for a
// 2-core machine running -race under .ci/run's load stage (twice as many busy loops
// as cores), and still well short of `go test`'s 10 minutes, so that the test
// fails with its counts.
const Long = 2 * time.Minute

// WorkerToken is the worker credential of a bus started with Options.Workers.
const WorkerToken = "worker-t0ken"

// Options say which embedded bus to start. The zero value is a server listening on a
// random loopback port, without credentials (its TCP clients are tools) and without
// JetStream.
type Options struct {
	// Off turns the TCP listener off: in-process clients only.
	Off bool
	// Listen is where the server listens, "127.0.0.1:0" when empty.
	Listen string
	// Workers gives the listener the worker credential WorkerToken (unless Token
	// or User is set), so that Worker connects with the worker's role.
	Workers bool
	// Token, or User and Password, are the worker credentials.
	Token          string
	User, Password string
	// Prefix is the subjects' prefix; bus.DefaultPrefix when empty.
	Prefix string
	// JetStream turns the history store on, in a state directory under
	// t.TempDir() (Bus.StateDir), unless StoreDir names one.
	JetStream bool
	StoreDir  string
	// Hub joins a league hub as a leaf node (it needs JetStream).
	Hub          *bus.HubLink
	SyncAlways   bool
	SyncInterval time.Duration
	// Log is where the server and the clients log; when nil, into a buffer the
	// test logs if it fails (Bus.Logs).
	Log *zerolog.Logger
}

// Bus is an embedded server started for a test, with its state directory.
type Bus struct {
	*bus.Server
	// StateDir is the server's JetStream store, "" without JetStream.
	StateDir string
	// Prefix is the subjects' prefix of the roles' rights.
	Prefix string

	t    testing.TB
	o    Options
	so   bus.ServerOptions
	log  zerolog.Logger
	logs *proctest.Buffer
}

// Start starts an embedded bus as o says; it is shut down when the test ends.
func Start(t testing.TB, o Options) *Bus {
	t.Helper()
	b := &Bus{t: t, o: o, Prefix: o.Prefix}
	if b.Prefix == "" {
		b.Prefix = bus.DefaultPrefix
	}
	if o.Log != nil {
		b.log = *o.Log
	} else {
		b.logs = &proctest.Buffer{}
		b.log = zerolog.New(zerolog.ConsoleWriter{Out: b.logs, NoColor: true}).Level(zerolog.InfoLevel)
		// Not written to t directly: the connections' callbacks may log after the
		// test ended.
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("bus logs:\n%s", b.logs.String())
			}
		})
	}
	so := bus.ServerOptions{
		Listen: o.Listen, Token: o.Token, User: o.User, Password: o.Password, Prefix: o.Prefix,
		StoreDir: o.StoreDir, Hub: o.Hub, SyncAlways: o.SyncAlways, SyncInterval: o.SyncInterval,
	}
	switch {
	case o.Off:
		so.Listen = bus.ListenOff
	case so.Listen == "":
		so.Listen = "127.0.0.1:0"
	}
	if o.Workers && o.Token == "" && o.User == "" {
		so.Token = WorkerToken
		b.o.Token = WorkerToken
	}
	if o.JetStream && so.StoreDir == "" {
		so.StoreDir = t.TempDir()
	}
	b.StateDir = so.StoreDir
	b.so = so
	b.start()
	t.Cleanup(func() { b.Shutdown() })
	return b
}

func (b *Bus) start() {
	b.t.Helper()
	srv, err := bus.StartServerWith(b.so, b.log)
	if err != nil {
		b.t.Fatalf("start the embedded bus: %v", err)
	}
	b.Server = srv
	// Started again, it takes the same port.
	if url := srv.ClientURL(); url != "" {
		b.so.Listen = strings.TrimPrefix(url, "nats://")
	}
}

// Restart shuts the server down and starts it again on the same port with the same
// state directory, as a daemon restart does: TCP clients reconnect, in-process ones
// are gone (connect again with Daemon).
func (b *Bus) Restart() {
	b.t.Helper()
	b.Shutdown()
	b.start()
}

// StartAgain starts a server that was shut down (Shutdown) again on its port with its
// state directory, for a test that watches its clients while it is away.
func (b *Bus) StartAgain() {
	b.t.Helper()
	b.start()
}

// URL is the server's client URL, without credentials ("" with the listener off).
func (b *Bus) URL() string { return b.ClientURL() }

// Subjects are the bus's subjects.
func (b *Bus) Subjects() bus.Subjects { return bus.Subjects{Prefix: b.Prefix} }

// Logs is what the server and the clients logged so far (with Options.Log nil).
func (b *Bus) Logs() string {
	if b.logs == nil {
		return ""
	}
	return b.logs.String()
}

// Daemon connects in-process, as the daemon's own parts do: the daemon's role,
// every right.
func (b *Bus) Daemon() *nats.Conn {
	b.t.Helper()
	return b.Conn(bus.ConnOptions{Server: b.Server, Name: b.t.Name()})
}

// Worker connects through the listener with the worker credentials: the worker's
// role.
func (b *Bus) Worker() *nats.Conn {
	b.t.Helper()
	if b.o.Token == "" && b.o.User == "" {
		b.t.Fatal("bustest: a worker needs a bus started with credentials (Options.Workers)")
	}
	return b.Conn(bus.ConnOptions{URL: b.URL(), Token: b.o.Token, User: b.o.User, Password: b.o.Password, Name: b.t.Name() + "-worker"})
}

// Tool connects through the listener without credentials: the tool's role.
func (b *Bus) Tool() *nats.Conn {
	b.t.Helper()
	return b.Conn(bus.ConnOptions{URL: b.URL(), Name: b.t.Name() + "-tool"})
}

// Conn connects as o says, with bus.Connect (its reconnects, its logging); the
// connection is closed when the test ends.
func (b *Bus) Conn(o bus.ConnOptions) *nats.Conn {
	b.t.Helper()
	nc, err := bus.Connect(o, b.log)
	if err != nil {
		b.t.Fatalf("connect to the bus: %v", err)
	}
	b.t.Cleanup(nc.Close)
	return nc
}

// Workers starts the scoreboard's workers on an in-process connection of their
// own, as the daemon does; they are stopped when the test ends, and an error in
// their stop fails it.
func (b *Bus) Workers(o worker.Options) *worker.Workers {
	b.t.Helper()
	return StartWorkers(b.t, b.Daemon(), o, b.log)
}

// StartWorkers starts the scoreboard's workers on nc; they are stopped when the
// test ends, and an error in their stop fails it.
func StartWorkers(t testing.TB, nc *nats.Conn, o worker.Options, log zerolog.Logger) *worker.Workers {
	t.Helper()
	w, err := worker.Start(nc, o, log)
	if err != nil {
		t.Fatalf("start the workers: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Stop(); err != nil {
			t.Errorf("stop the workers: %v", err)
		}
	})
	return w
}

// Logger is a logger for what a test starts itself (a server of its own, workers on
// a connection it made): kept in a buffer that is logged if the test fails. It does
// not write to t directly: the connections' callbacks may log after the test ended.
func Logger(t testing.TB) zerolog.Logger {
	logs := &proctest.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	return zerolog.New(zerolog.ConsoleWriter{Out: logs, NoColor: true}).Level(zerolog.InfoLevel)
}

// Connect connects as o says, logging to Logger; closed when the test ends.
func Connect(t testing.TB, o bus.ConnOptions) *nats.Conn {
	t.Helper()
	nc, err := bus.Connect(o, Logger(t))
	if err != nil {
		t.Fatalf("connect to the bus: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}
