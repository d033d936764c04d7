package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/serialio"
)

// Run serves the configured ports through nc, whose workers (in this process or
// others) answer the dumps. It returns when every port has ended (only "-" ends, at
// the end of stdin, once each unit read has its outcome), or, after ctx ends, once the
// units in flight are answered or cfg.Drain has passed. It returns an error only for
// a bad configuration or a connection that cannot subscribe. Without ports it
// returns at once.
func Run(ctx context.Context, nc *nats.Conn, cfg Config, log zerolog.Logger) error {
	cfg.Ports = append([]PortConfig(nil), cfg.Ports...)
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.setDefaults()
	var g errgroup.Group
	for _, pc := range cfg.Ports {
		g.Go(func() error { return runPort(ctx, nc, &cfg, pc, log) })
	}
	return g.Wait()
}

// runPort runs one port's three actors and returns when the display writer and the
// device writer are done.
func runPort(ctx context.Context, nc *nats.Conn, cfg *Config, pc PortConfig, log zerolog.Logger) error {
	p, _ := engine.Lookup(pc.Problem)
	log = log.With().Str("port", pc.Name).Str("problem", pc.Problem).Logger()
	cfg.Monitor.add(pc.Name)
	defer cfg.Monitor.end(pc.Name)
	met := cfg.Metrics.Port(pc.Name, pc.Problem)
	defer met.Up(false)
	items := make(chan item, 16)
	queue := make(chan []byte, cfg.WriteQueue)
	room := make(chan struct{}, 1)
	ln := &link{}
	defer func() {
		if port := ln.get(); port != nil {
			ln.drop(port)
		}
	}()

	// The reader: opens the device, reopens it when it comes back, numbers the units.
	// It stops at the end of stdin or when ctx ends; a stdin that cannot be
	// interrupted may keep it blocked in a read until the process exits, so it is not
	// waited for then.
	gone := make(chan struct{})
	r := &reader{
		cfg: pc, p: p, link: ln, items: items, gone: gone, mon: cfg.Monitor, met: met,
		open: openFunc(pc, cfg.Stdin, cfg.Stdout),
		back: serialio.Backoff{Min: cfg.ReopenMin, Max: cfg.ReopenMax},
		log:  log.With().Str("component", "reader").Str("device", pc.Device).Logger(),
	}
	readCtx, stopReader := context.WithCancel(ctx)
	defer stopReader()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		r.run(readCtx)
	}()
	stuck := make(chan struct{}) // closed when the reader's reads cannot be interrupted
	go func() {
		select {
		case <-readerDone:
		case <-readCtx.Done():
			if !ln.stopReading() {
				r.log.Debug().Msg("the port's reads cannot be interrupted; the reader stops at its next line")
				close(stuck)
			}
		}
	}()

	// The device writer: writes answers in the order it is given them.
	w := &deviceWriter{
		link: ln, timeout: cfg.WriteTimeout, queue: queue, room: room, stop: ctx.Done(),
		log: log.With().Str("component", "writer").Logger(),
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		w.run()
	}()

	// The display writer: dumps out, answers back in sequence order.
	d := newDisplay(cfg, pc, nc, log.With().Str("component", "display").Logger(), items, queue, room)
	d.stuck = stuck
	d.met = met
	err := d.run(ctx)
	close(gone)

	// The queue is closed: the device writer finishes what is queued, each write
	// bounded by its deadline.
	<-writerDone
	stopReader()
	select {
	case <-readerDone:
	case <-time.After(time.Second):
		r.log.Warn().Msg("the reader is blocked in a read that cannot be interrupted; leaving it")
	}
	// Units the reader handed over after the display writer left (only a reader that
	// could not be interrupted in time does) are logged and counted, never silent.
	for {
		select {
		case it, ok := <-items:
			if ok {
				unanswered(d.log, cfg.Monitor, it)
				continue
			}
		default:
		}
		break
	}
	if err != nil {
		return fmt.Errorf("port %s: %w", pc.Name, err)
	}
	return nil
}
