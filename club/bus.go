package club

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
)

// clubBus is the daemon's bus: the embedded server on the state dir, or an
// existing server it joins.
type clubBus struct {
	url string // what other processes connect to
	// connect opens one of the daemon's connections: the workers and the ports
	// have one each, since one connection's single reader and writer would carry
	// every dump and every answer twice, and serialise the pipeline.
	connect func(name string) (*nats.Conn, error)
	// connectWorkers opens the workers' connection: on the embedded server with the
	// worker role (bus.ConnOptions.Role), not the daemon's every right.
	connectWorkers func(name string) (*nats.Conn, error)

	embedded *bus.Server       // nil when joining a server
	store    *history.StateDir // the embedded server's store; nil without one
	held     bool              // the store holds a history from before
	fitted   int64             // the history's size fitted to its disk, if less than asked

	hub       *bus.HubLink // the link to a league hub; nil without one
	hubLinked func() bool  // whether that link is up; nil without one
}

// openBus starts the embedded server, unless the settings join an existing one.
// ctx bounds the waits for the bus.
func (d *Daemon) openBus(ctx context.Context) (*clubBus, error) {
	c, log := &d.cfg.Settings, d.log
	b := &clubBus{hub: c.HubLink()}
	if c.NATS.URL != "" {
		b.url = c.NATS.URL
		b.hub = nil // the server joined has its own link, if any
		b.connect = func(name string) (*nats.Conn, error) {
			nc, err := bus.ConnectWait(ctx, c.ConnOptions(c.NATS.URL, name), log)
			if err == nil {
				d.onClose(nc.Close)
			}
			return nc, err
		}
		b.connectWorkers = b.connect
		return b, nil
	}
	// The history's store: locked for this process's life, so a second daemon on
	// it fails here, naming it.
	var err error
	if b.store, err = c.OpenStore(); err != nil {
		return nil, err
	}
	opts := bus.ServerOptions{
		Listen: c.NATS.Listen, Token: c.NATS.ListenToken, User: c.NATS.ListenUser, Password: c.NATS.ListenPassword, Prefix: c.NATS.Prefix,
	}
	if b.store != nil {
		d.onClose(func() { b.store.Close() })
		opts.Organiser = organiserPassword(b.store.Path, c.NATS.Listen, log)
		want, _ := history.ParseSize(c.History.MaxBytes)
		var ok bool
		if b.fitted, ok = history.FitStore(b.store, want, log); ok {
			opts.StoreDir = b.store.Path
			sync := c.HistoryConfig(b.fitted).Sync
			opts.SyncAlways, opts.SyncInterval = sync.Always, sync.Interval
			b.held = b.store.HasStream(c.Subjects().Stream())
		} else {
			// No room for any history: the daemon runs without one.
			c.History.Enabled = false
		}
	}
	opts.Hub = b.hub
	srv, err := history.StartServer(opts, b.store, b.held, log)
	if err != nil {
		return nil, err
	}
	d.onClose(srv.Shutdown)
	b.embedded, b.url = srv, srv.ClientURL()
	if b.hub != nil {
		b.hubLinked = srv.HubLinked
	}
	if b.store != nil && c.History.Enabled {
		d.stored = srv
	}
	connectAs := func(name, role string) (*nats.Conn, error) {
		nc, err := bus.ConnectWait(ctx, bus.ConnOptions{Server: srv, Name: name, Role: role}, log)
		if err == nil {
			d.conns = append(d.conns, nc)
			d.onClose(nc.Close)
		}
		return nc, err
	}
	b.connect = func(name string) (*nats.Conn, error) { return connectAs(name, "") }
	b.connectWorkers = func(name string) (*nats.Conn, error) { return connectAs(name, bus.RoleWorker) }
	return b, nil
}

// organiserPassword is the password of the state dir's organiser file, made at
// the first start (bus.EnsureOrganiserFile), for the listener's organiser. A file
// the daemon cannot take is said loudly and the daemon goes on: the ports matter
// more than the pairings, which no one may then load from outside.
func organiserPassword(dir, listen string, log zerolog.Logger) string {
	if listen == bus.ListenOff {
		return ""
	}
	pw, err := bus.EnsureOrganiserFile(dir)
	if err != nil {
		log.Error().Str("component", "pairings").Err(err).Msg("no organiser on the NATS listener: scoreboard pairings load is refused until the file is fixed (or deleted) and the daemon restarted")
		return ""
	}
	return pw
}
