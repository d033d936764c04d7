package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/goclub/scoreboard/metrics"
)

// writeTimeout bounds each write of an event stream: a viewer that stops reading
// (a phone gone into a tunnel, a client that never reads) holds a goroutine and a
// connection only this long once its socket's buffers are full. The hub has dropped
// it by then anyway (clientBuffer), so the others never wait for it. The stream
// sets it before each write, in place of the server's response timeout.
const writeTimeout = 10 * time.Second

// ErrListenInUse is returned by Listen when the page's address is taken.
var ErrListenInUse = errors.New("address already in use")

// Listen opens the page's listener; a taken address is an error that says what to
// do. Announce logs it once the page is served.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("the page's address %s is taken (%w: is another scoreboard run or web, or another web server, there?); "+
				"serve the page on another port with --http-listen 127.0.0.1:8081, on any free port with --http-listen 127.0.0.1:0, or on none with --http-listen off",
				addr, ErrListenInUse)
		}
		return nil, fmt.Errorf("the page's listener %s: %w", addr, err)
	}
	return ln, nil
}

// ListenTLS puts TLS on the page's listener ln, with the certificate (PEM, with
// its chain) and key in certFile and keyFile: then nothing is served in clear.
func ListenTLS(ln net.Listener, certFile, keyFile string) (net.Listener, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("the page's certificate: %w (give a PEM certificate and its key)", err)
	}
	return tlsListener{tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})}, nil
}

// tlsListener marks a listener ListenTLS made, for Announce's scheme.
type tlsListener struct{ net.Listener }

// Announce logs, once, the address to open in a browser.
func Announce(ln net.Listener, log zerolog.Logger) {
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	ev := log.Info().Str("component", "web").Str("listen", ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		// Every interface: name the machine, which the club's TV can reach.
		if h, err := os.Hostname(); err == nil {
			host = h
		}
		ev = ev.Bool("beyond_loopback", true)
	} else if ip != nil && !ip.IsLoopback() {
		ev = ev.Bool("beyond_loopback", true)
	}
	scheme := "http://"
	if _, ok := ln.(tlsListener); ok {
		scheme = "https://"
	}
	ev.Str("url", scheme+net.JoinHostPort(host, port)+"/").Msg("serving the scoreboard page")
}

// ServePage runs a page server on ln until ctx ends, with met's /metrics beside
// it unless met is nil. newServer is called once the listener is there, so that a
// page that cannot start is an error of the serving, not of the listening.
func ServePage(ctx context.Context, ln net.Listener, newServer func() (*Server, error), met *metrics.Metrics, log zerolog.Logger) error {
	srv, err := newServer()
	if err != nil {
		return err
	}
	Announce(ln, log)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(gctx) })
	g.Go(func() error { return Serve(gctx, ln, met.Beside(srv.Handler())) })
	return g.Wait()
}

// timeouts are the page's server's: for a request's headers, for the writing of
// an answer (from its headers read; an event stream sets each write's own), and
// for a kept-alive connection between requests.
type timeouts struct{ header, response, idle time.Duration }

// pageTimeouts bound what a client that stops reading, or never asks again, holds.
// An answer is written within 30 s or its connection is closed: the largest,
// /api/history's 1,000 units (about 136 KB), takes a phone on a poor link of
// 10 KB/s 14 s, and a client that never reads would otherwise hold a goroutine and
// a connection for as long as it lives. An idle connection is closed after a
// minute: a page reloads its boards more often than that while someone watches,
// and 2,000 held by one address would otherwise stay for ever.
var pageTimeouts = timeouts{header: 10 * time.Second, response: 30 * time.Second, idle: time.Minute}

// Serve serves h on ln until ctx ends, then shuts down within a couple of seconds
// (the live feeds end when the server's hub stops).
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	return serve(ctx, ln, h, pageTimeouts)
}

// answering counts the answers being written, whatever the server: a test sees
// a client that never reads hold none for longer than the response timeout.
var answering atomic.Int64

func serve(ctx context.Context, ln net.Listener, h http.Handler, to timeouts) error {
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answering.Add(1)
		defer answering.Add(-1)
		h.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: counted, ReadHeaderTimeout: to.header, WriteTimeout: to.response, IdleTimeout: to.idle}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve the page: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-errc
	return nil
}
