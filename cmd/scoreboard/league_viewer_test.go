package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// benchViewer is a page viewer, as a browser's tab is: it holds /api/events open
// and reads every event, counting them and their bytes without decoding them; a
// stream the page ends (it drops a viewer that lags clientBuffer events) is opened
// again after the page's "retry: 1000", as EventSource does. The measuring viewer
// (page set) decodes each board event into page: its delay from the result's
// publication.
type benchViewer struct {
	events, bytes, drops atomic.Int64
	named                atomic.Int64 // the events with players (gameMark)
	// known are the measuring viewer's board events whose port's players its
	// stream had said: an event says them only when they change (docs/page.md).
	known  atomic.Int64
	status atomic.Int32 // the first answer's status; 0 before it, -1 no answer
	// err is why a stream ended last, as text: an atomic.Value holds one
	// concrete type, and errors of two types were a panic after the results (a
	// viewer reconnecting while the hub stopped).
	err  atomic.Value
	page *pageDelays
}

// startBenchViewers connects n viewers to page's events, the first of them
// measuring into delays, and waits until each has its answer. They read, and
// reconnect, until the test ends.
func startBenchViewers(t *testing.T, page string, n int, delays *pageDelays) []*benchViewer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	vs := make([]*benchViewer, n)
	for i := range vs {
		v := &benchViewer{}
		if i == 0 {
			v.page = delays
		}
		vs[i] = v
		// The page bounds the streams of one address (league.max_viewers_per_address,
		// 50), as it should: 25 viewers an address of loopback's.
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i/25))}
		c := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: local}).DialContext}}
		go v.follow(ctx, c, page+"/api/events")
	}
	bustest.Wait(t, "the page's viewers answered", func() (bool, string) {
		answered := 0
		for _, v := range vs {
			switch s := v.status.Load(); {
			case s == http.StatusOK:
				answered++
			case s != 0:
				t.Fatalf("a viewer's /api/events: status %d, %v", s, v.err.Load())
			}
		}
		return answered == n, fmt.Sprintf("%d of %d viewers answered", answered, n)
	})
	return vs
}

func (v *benchViewer) follow(ctx context.Context, c *http.Client, url string) {
	for {
		v.stream(ctx, c, url)
		if ctx.Err() != nil {
			return
		}
		v.drops.Add(1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second): // the page's retry
		}
	}
}

// stream reads one event stream until it ends.
func (v *benchViewer) stream(ctx context.Context, c *http.Client, url string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		v.err.Store(err.Error())
		v.status.CompareAndSwap(0, -1)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		v.err.Store(resp.Status)
		v.status.CompareAndSwap(0, int32(resp.StatusCode))
		return
	}
	v.status.CompareAndSwap(0, int32(resp.StatusCode))
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	start := true              // at a line's start
	games := map[string]bool{} // the measuring viewer's: a port has players, as its stream said last
	for {
		b, err := r.ReadSlice('\n')
		v.bytes.Add(int64(len(b)))
		if start && bytes.HasPrefix(b, []byte("data: ")) {
			v.events.Add(1)
			if bytes.Contains(b, gameMark) {
				v.named.Add(1)
			}
			if v.page != nil && err == nil {
				var ev struct {
					Board *struct {
						pageEvent
						Game json.RawMessage `json:"game"`
					} `json:"board"`
				}
				if json.Unmarshal(b[len("data: "):], &ev) == nil && ev.Board != nil {
					v.page.event(ev.Board.pageEvent, time.Now())
					if ev.Board.Game != nil {
						games[ev.Board.Port] = string(ev.Board.Game) != "null"
					}
					if games[ev.Board.Port] {
						v.known.Add(1)
					}
				}
			}
		}
		start = err == nil
		if err != nil && err != bufio.ErrBufferFull {
			v.err.Store(err.Error())
			return
		}
	}
}

// benchSample is what the benchmark reads at each end of the measured time.
type benchSample struct {
	at                                  time.Time
	units, linkBytes                    int64
	cpu                                 []time.Duration // a hub process's each
	writeBytes, syscw                   int64           // the hub's processes' together
	store                               int64
	genCPU                              time.Duration // this process: the clubs, their proxies and the viewers
	viewerEvents, viewerBy, viewerDrops []int64
	viewerNamed                         []int64
	known                               int64 // the measuring viewer's (benchViewer.known)
}

func (h *benchHub) sample(t *testing.T, units *atomic.Int64, clubs []*benchClub, viewers []*benchViewer) benchSample {
	s := benchSample{at: time.Now(), units: units.Load(), genCPU: proctest.CPUTime(), store: benchDirBytes(h.stores...)}
	for _, c := range clubs {
		s.linkBytes += c.proxy.bytes.Load()
	}
	for _, p := range h.procs {
		cpu, _, _ := procStat(t, p.pid)
		s.cpu = append(s.cpu, cpu)
		wb, sc := benchProcIO(p.pid)
		s.writeBytes += wb
		s.syscw += sc
	}
	s.known = viewers[0].known.Load()
	for _, v := range viewers {
		s.viewerEvents = append(s.viewerEvents, v.events.Load())
		s.viewerBy = append(s.viewerBy, v.bytes.Load())
		s.viewerDrops = append(s.viewerDrops, v.drops.Load())
		s.viewerNamed = append(s.viewerNamed, v.named.Load())
	}
	return s
}
