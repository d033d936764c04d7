package web

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
)

// TestSlowViewerDropped: a viewer that stops reading (a raw TCP client with a
// small receive buffer that never reads) while many events are published has its
// stream ended, by the write timeout once the socket's buffers are full or by the
// hub once its buffer is full, whichever comes first; the other viewers get every
// event, in order, while it hangs there. Without a write deadline its handler would
// wait in Write for as long as the client lives.
func TestSlowViewerDropped(t *testing.T) {
	s, ts := hubServer(t)
	s.writeTimeout = time.Second
	ctx := context.Background()

	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	slow, err := d.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := fmt.Fprintf(slow, "GET /api/events HTTP/1.1\r\nHost: page\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	var others []*viewer
	for range 3 {
		others = append(others, watch(t, ts.URL+"/api/events"))
	}
	bustest.Wait(t, "4 streams", func() (bool, string) {
		n := s.streams.Load()
		return n == 4, fmt.Sprintf("%d streams", n)
	})

	// Events of about 900 bytes, in batches the readers keep up with, until the
	// stream of the one that does not read has ended (its socket buffers full, then
	// its write's deadline or its clientBuffer events), and a few batches more.
	answer := strings.Repeat("x", 700)
	const batch, most = 256, 100_000
	sent, after, endAt := 0, 0, 0
	for sent < most && after < 4 {
		for range batch {
			sent++
			s.hub.put(ctx, &Board{Port: "p", Problem: "goscore", Seq: uint64(sent), Answer: answer, Revision: uint64(sent)})
		}
		waitEvents(t, sent, others...)
		if s.streams.Load() == 3 {
			after++
			endAt = cmp.Or(endAt, sent)
		}
	}
	if n := s.streams.Load(); n != 3 {
		t.Fatalf("%d events sent: %d streams, want 3 (the readers; the one that does not read ended)", sent, n)
	}
	for i, v := range others {
		got := v.events()
		for j, e := range got {
			if e != fmt.Sprintf("p %d", j+1) {
				t.Fatalf("reader %d's event %d is %q, want p %d (%d events)", i, j, e, j+1, len(got))
			}
		}
		if len(got) != sent {
			t.Errorf("reader %d got %d of %d events", i, len(got), sent)
		}
	}
	t.Logf("%d events of about %d bytes; the slow viewer's stream ended within the first %d (%d dropped by the hub; else by its write's deadline)", sent, len(answer)+150, endAt, s.hub.dropped.Load())
}
