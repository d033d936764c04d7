package main

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
)

// linkProxy is a club's line to the hub: a TCP proxy on loopback the test cuts
// (every connection closed, the port refusing) and restores.
type linkProxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	bytes  atomic.Int64 // carried, both ways
	// accepted counts the connections taken: the club's attempts.
	accepted atomic.Int64
	// record makes each connection's bytes recorded, each way (the
	// eavesdropper): recs, under mu.
	record bool
	recs   []*recording
	// ended are when the hub's side of each connection ended (under mu).
	ended []time.Time
}

func newLinkProxy(t *testing.T, target string) *linkProxy {
	p := &linkProxy{t: t, addr: fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t)), target: target, conns: map[net.Conn]bool{}}
	p.up()
	t.Cleanup(p.down)
	return p
}

func (p *linkProxy) up() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger a moment after a cut
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *linkProxy) pipe(c net.Conn) {
	p.accepted.Add(1)
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	var rec *recording
	p.mu.Lock()
	p.conns[c], p.conns[u] = true, true
	if p.record {
		rec = &recording{}
		p.recs = append(p.recs, rec)
	}
	p.mu.Unlock()
	var up, down *proctest.Buffer
	if rec != nil {
		up, down = &rec.up, &rec.down
	}
	go func() {
		io.Copy(countWriter{u, &p.bytes, up}, c)
		u.Close()
		c.Close()
	}()
	io.Copy(countWriter{c, &p.bytes, down}, u)
	p.mu.Lock()
	p.ended = append(p.ended, time.Now())
	p.mu.Unlock()
	c.Close()
	u.Close()
}

// recordAll makes the proxy record its connections from now on.
func (p *linkProxy) recordAll() {
	p.mu.Lock()
	p.record = true
	p.mu.Unlock()
}

// recording is what a connection through the proxy carried: up (to the hub) and
// down.
type recording struct{ up, down proctest.Buffer }

// countWriter counts what it writes into n, and records it into rec if set.
type countWriter struct {
	w   io.Writer
	n   *atomic.Int64
	rec *proctest.Buffer
}

func (c countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	if c.rec != nil {
		c.rec.Write(b[:n])
	}
	return n, err
}

func (p *linkProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}
