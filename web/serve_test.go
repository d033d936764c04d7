package web_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/web"
)

// pageOpts is how a test's page is served; the zero value is a live club's page
// on a loopback port, logging nothing.
type pageOpts struct {
	prefix string      // the bus's prefix; bus.DefaultPrefix when empty
	delays *web.Delays // nil: live
	guard  *web.Guard  // nil: none (its Metrics, when set, serve /metrics beside)
	log    *zerolog.Logger
	ln     net.Listener // where; a new loopback port when nil
	// games is a pairings' bucket the page follows, its values a web.Game's JSON
	// (gameJSON); none when empty.
	games string
	// pairings: the page follows its prefix's pairings' bucket, as run's and the
	// hub's do (WithPairings).
	pairings bool
}

// gameJSON reads a test's pairings' bucket: a web.Game as JSON.
func gameJSON(_ string, v []byte) (*web.Game, error) {
	var g web.Game
	if err := json.Unmarshal(v, &g); err != nil {
		return nil, err
	}
	return &g, nil
}

// serveTestPage is the web tests' one way to serve a page: through nc, as run
// serves it, until the test ends or stop is called (once or more; the page's
// errors are the test's). It returns the page's base URL.
func serveTestPage(t testing.TB, nc *nats.Conn, o pageOpts) (base string, stop func()) {
	t.Helper()
	log := zerolog.Nop()
	if o.log != nil {
		log = *o.log
	}
	srv, err := web.New(nc, cmpOr(o.prefix, bus.DefaultPrefix), log)
	if err != nil {
		t.Fatal(err)
	}
	srv.WithDelays(o.delays)
	if o.games != "" {
		srv.WithGames(o.games, gameJSON)
	}
	if o.pairings {
		srv.WithPairings()
	}
	var h http.Handler
	if o.guard != nil {
		if err := srv.WithGuard(*o.guard); err != nil {
			t.Fatal(err)
		}
		h = o.guard.Metrics.Beside(srv.Handler())
	} else {
		h = srv.Handler()
	}
	ln := o.ln
	if ln == nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone, serveDone := make(chan error, 1), make(chan error, 1)
	go func() { runDone <- srv.Run(ctx) }()
	go func() { serveDone <- web.Serve(ctx, ln, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-runDone; err != nil {
				t.Errorf("web server: %v", err)
			}
			if err := <-serveDone; err != nil {
				t.Errorf("web serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return "http://" + ln.Addr().String(), stop
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
