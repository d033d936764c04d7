package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
)

// historyPage is a club's bus with a history written by hand (no worker: the
// test chooses every unit and answer) and a page on it, read through its own
// connection, as run serves it.
type historyPage struct {
	b    *bustest.Bus
	js   jetstream.JetStream
	nc   *nats.Conn // the page's own connection: its messages in are the page's reads
	srv  *Server
	base string
	addr string
	subj bus.Subjects
}

// startHistoryPage starts the bus and the history, and the page on it with the
// server's timeouts to; setup, when not nil, sets the Server up before it serves.
func startHistoryPage(t *testing.T, to timeouts, setup func(*Server)) *historyPage {
	t.Helper()
	b := bustest.Start(t, bustest.Options{JetStream: true})
	p := &historyPage{b: b, subj: bus.Subjects{Prefix: bus.DefaultPrefix}}
	var err error
	if p.js, err = history.NewJetStream(b.Daemon()); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Setup(context.Background(), p.js, history.Config{Prefix: bus.DefaultPrefix, MaxAge: time.Hour, MaxBytes: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	p.nc = b.Tool()
	if p.srv, err = New(p.nc, bus.DefaultPrefix, bustest.Logger(t)); err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(p.srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.srv.Run(ctx) })
	wg.Go(func() { _ = serve(ctx, ln, p.srv.Handler(), to) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	p.addr = ln.Addr().String()
	p.base = "http://" + p.addr
	return p
}

// units publishes n units of port (its dumps and their results, each answer
// answerBytes long) into the history, from unit from on, and waits until the
// stream holds them.
func (p *historyPage) units(t *testing.T, port string, from, n, answerBytes int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := p.js.Stream(ctx, p.subj.Stream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := info.State.Msgs + uint64(2*n)
	answer := strings.Repeat("a", answerBytes)
	nc := p.b.Daemon()
	for seq := from; seq < from+n; seq++ {
		// On the Repair subjects, as the daemon's recorder stores a port's.
		m := nats.NewMsg(p.subj.Repair(p.subj.Dump("goscore", port)))
		unit, _ := faulttest.GoscoreBoard(seq)
		m.Data = []byte(unit)
		bus.DumpHeader{Port: port, Seq: uint64(seq), Line: int64(seq), Origin: "o1"}.Put(m.Header)
		r := nats.NewMsg(p.subj.Repair(p.subj.Result("goscore", port)))
		r.Data = []byte(`{"problem":"goscore","port":"` + port + `","seq":` + strconv.Itoa(seq) + `,"origin":"o1","answer":"` + answer + `"}`)
		r.Header.Set(bus.HeaderMsgID, bus.ResultID("o1", uint64(seq)))
		for _, msg := range []*nats.Msg{m, r} {
			if err := nc.PublishMsg(msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	bustest.Wait(t, fmt.Sprintf("%d units of %s in the history", n, port), func() (bool, string) {
		info, err := stream.Info(ctx)
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs >= want, fmt.Sprintf("%d of %d messages", info.State.Msgs, want)
	})
}

// smallReader dials the page with a receive buffer of 4 KB: a client that never
// reads fills it, and the page's socket, soon.
func smallReader(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// httpGet is a GET of url within a bound: its status and body.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: bustest.Long}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
