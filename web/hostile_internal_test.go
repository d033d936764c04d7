package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
)

// TestClientsThatNeverRead: clients that ask for /api/history's largest answer
// (1,000 units, about 6 MB, more than the sockets buffer) and never read it (a real TCP client with a 4 KB
// receive buffer), and many kept-alive connections that never ask again, hold
// nothing for long: another client gets its history at once, the answers to
// those that do not read are given up within the response timeout, and the idle
// connections are closed within the idle timeout.
func TestClientsThatNeverRead(t *testing.T) {
	// The response timeout counts from the request's headers, so it is longer than
	// a history read may take (10 s): the answer of the client that reads it is
	// written within it, while others wait their turn for theirs.
	to := timeouts{header: 10 * time.Second, response: 15 * time.Second, idle: 3 * time.Second}
	p := startHistoryPage(t, to, nil)
	p.units(t, "hall", 1, 1000, 6000)
	base := answering.Load()

	const hostile, idle = 4, 300
	for range hostile {
		c := smallReader(t, p.addr)
		if _, err := fmt.Fprint(c, "GET /api/history?port=hall&limit=1000 HTTP/1.1\r\nHost: page\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	// Kept alive: one answer read, then nothing more asked.
	var closed atomic.Int64
	var wg sync.WaitGroup
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	})
	for i := range idle {
		c, err := net.DialTimeout("tcp", p.addr, 10*time.Second)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if _, err := fmt.Fprint(c, "GET /api/status HTTP/1.1\r\nHost: page\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(2 * bustest.Long))
			_, err := br.ReadByte()
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				closed.Add(1) // the page closed it
			}
		})
	}

	// Another client gets its history while they hold on.
	asked := time.Now()
	// A busy answer (the reads' gate, while the others' reads run) is asked again,
	// as the page does.
	c := &http.Client{Timeout: bustest.Long}
	tries := 0
	bustest.WaitWithin(t, time.Minute, "another client's /api/history", func() (bool, string) {
		tries++
		resp, err := c.Get(p.base + "/api/history?port=hall&limit=10")
		if err != nil {
			return false, err.Error()
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		now, most, bound := HistoryReads()
		return resp.StatusCode == http.StatusOK, fmt.Sprintf("%d tries, the last %s %q (history reads: %d now, %d at most, bound %d)",
			tries, resp.Status, body, now, most, bound)
	})
	t.Logf("/api/history answered in %v (%d tries) while %d clients do not read; %d answers being written", time.Since(asked).Round(time.Millisecond), tries, hostile, answering.Load()-base)
	bustest.WaitWithin(t, time.Minute, "the answers to the clients that do not read given up", func() (bool, string) {
		n := answering.Load() - base
		return n == 0, fmt.Sprintf("%d answers still being written (%d clients do not read)", n, hostile)
	})
	bustest.WaitWithin(t, 30*time.Second, "the idle connections closed by the page", func() (bool, string) {
		n := closed.Load()
		return n == idle, fmt.Sprintf("%d of %d idle connections closed", n, idle)
	})
}
