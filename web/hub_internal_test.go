package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/render"
	"github.com/goclub/scoreboard/result"
)

// hubServer serves a Server's handler with its hub running and no bus: the boards
// are put into the hub directly, as the bucket's watch does.
func hubServer(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	s := &Server{hub: newHub(), log: bustest.Logger(t)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.hub.run(ctx) }()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		cancel()
		<-done
		ts.Close()
	})
	return s, ts
}

// viewer reads an event stream's boards ("port seq", or "remove port") as they come.
type viewer struct {
	mu     sync.Mutex
	got    []string
	bytes  int
	most   int // the largest event's bytes
	closed bool
}

func watch(t *testing.T, url string) *viewer {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	v := &viewer{}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev event
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				panic(fmt.Sprintf("event %q: %v", data, err))
			}
			v.mu.Lock()
			v.bytes += len(data)
			v.most = max(v.most, len(data))
			if ev.Type == "remove" {
				v.got = append(v.got, "remove "+ev.Port)
			} else {
				v.got = append(v.got, fmt.Sprintf("%s %d", ev.Board.Port, ev.Board.Seq))
			}
			v.mu.Unlock()
		}
		v.mu.Lock()
		v.closed = true
		v.mu.Unlock()
	}()
	return v
}

func (v *viewer) events() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.got...)
}

// waitEvents waits until each viewer has n events.
func waitEvents(t *testing.T, n int, vs ...*viewer) {
	t.Helper()
	bustest.Wait(t, fmt.Sprintf("%d events at each of %d viewers", n, len(vs)), func() (bool, string) {
		var counts []int
		ok := true
		for _, v := range vs {
			c := len(v.events())
			counts = append(counts, c)
			ok = ok && c >= n
		}
		return ok, fmt.Sprintf("viewers have %v events", counts)
	})
}

// TestHubEncodesOnceDrawsOnce: each change is encoded once, whatever the number of
// viewers and of viewers who come later (their first screen is the encoded event
// too), and each picture is drawn once, when first asked for, however many ask.
// A viewer of one port (?port=) gets that port's events only, its board first.
func TestHubEncodesOnceDrawsOnce(t *testing.T) {
	s, ts := hubServer(t)
	ctx := context.Background()
	units := samples.Units(t, "goscore", "goscore.in")

	encoded, drawn := encodes.Load(), draws.Load()
	const viewers, changes = 20, 10
	var all []*viewer
	for range viewers {
		all = append(all, watch(t, ts.URL+"/api/events"))
	}
	one := watch(t, ts.URL+"/api/events?port=b")
	bustest.Wait(t, "every stream subscribed", func() (bool, string) {
		n := s.streams.Load()
		return n == viewers+1, fmt.Sprintf("%d of %d streams", n, viewers+1)
	})
	var want, wantB []string
	for i := range changes {
		port := []string{"a", "b"}[i%2]
		s.hub.put(ctx, &Board{Port: port, Problem: "goscore", Seq: uint64(i + 1), Answer: "5 3\n", Revision: uint64(i + 1), unit: units[i%len(units)]})
		want = append(want, fmt.Sprintf("%s %d", port, i+1))
		if port == "b" {
			wantB = append(wantB, fmt.Sprintf("%s %d", port, i+1))
		}
	}
	waitEvents(t, changes, all...)
	waitEvents(t, len(wantB), one)
	for i, v := range all {
		if got := v.events(); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("viewer %d got %v, want %v", i, got, want)
		}
	}
	if got := one.events(); strings.Join(got, ",") != strings.Join(wantB, ",") {
		t.Errorf("the viewer of port b got %v, want %v", got, wantB)
	}
	// Viewers who come now: each port's latest board first, from the same bytes.
	late := []*viewer{watch(t, ts.URL+"/api/events"), watch(t, ts.URL+"/api/events")}
	lateB := watch(t, ts.URL+"/api/events?port=b")
	waitEvents(t, 2, late...)
	waitEvents(t, 1, lateB)
	if got := lateB.events(); len(got) != 1 || got[0] != "b 10" {
		t.Errorf("a new viewer of port b got %v, want b's board (b 10) alone", got)
	}
	if n := encodes.Load() - encoded; n != changes {
		t.Errorf("%d changes, %d viewers (and %d more later): %d encodes, want %d", changes, viewers+1, len(late)+1, n, changes)
	}

	// 20 viewers ask for the latest picture of a at once: drawn once.
	b := s.hub.board(ctx, "a")
	var wg sync.WaitGroup
	codes := make(chan string, viewers)
	for range viewers {
		wg.Go(func() {
			resp, err := http.Get(ts.URL + b.Picture)
			if err != nil {
				codes <- err.Error()
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			codes <- fmt.Sprintf("%d %v", resp.StatusCode, strings.HasPrefix(string(body), "<svg"))
		})
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != "200 true" {
			t.Errorf("GET %s: %s", b.Picture, c)
		}
	}
	if n := draws.Load() - drawn; n != 1 {
		t.Errorf("%d viewers asked for one picture: drawn %d times, want once", viewers, n)
	}
	// Its earlier units (the last keptPictures) still answer; older ones are gone.
	for rev := uint64(1); rev <= changes; rev++ {
		port := []string{"a", "b"}[(rev-1)%2]
		name := pictureName("goscore", units[(rev-1)%uint64(len(units))], rev)
		resp, err := http.Get(fmt.Sprintf("%s/pictures/%s/%s.svg", ts.URL, port, name))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if held := rev > changes-2*keptPictures; (resp.StatusCode == 200) != held {
			t.Errorf("/pictures/%s/%s.svg: %d, want held %v (each port keeps its last %d)", port, name, resp.StatusCode, held, keptPictures)
		}
	}
}

// TestEventsOneKB: an event is what changed, not the picture: the events of every
// sample unit of every problem, on a hub's page's longest port names, fit in 1 KB
// each (a Go board's picture alone is ~9 KB; othello's event carries its 8 lines).
func TestEventsOneKB(t *testing.T) {
	s, ts := hubServer(t)
	v := watch(t, ts.URL+"/api/events")
	bustest.Wait(t, "the stream subscribed", func() (bool, string) { return s.streams.Load() == 1, "" })
	n := 0
	for _, problem := range engine.Names() {
		for _, u := range samples.Units(t, problem, problem+".in") {
			n++
			ans, err := render.Solve(problem, u)
			if err != nil {
				t.Fatal(err)
			}
			res, _ := json.Marshal(ans)
			kept := result.Kept{
				Record: result.Record{Problem: problem, Port: "p", Seq: uint64(n), Answer: string(ans.AppendText(nil)), Result: res},
				Unit:   string(u), Time: "2026-11-27T17:00:00.123456789Z",
			}
			if a, ok := ans.(engine.OthelloAnswer); ok {
				pos := a.Position()
				kept.Board = strings.Split(strings.TrimSuffix(string(pos.AppendBoard(nil)), "\n"), "\n")
			}
			value, _ := json.Marshal(kept)
			b, err := decodeBoard("club-with-a-long-name.port-with-a-long-name", value)
			if err != nil {
				t.Fatal(err)
			}
			b.Revision = 123456789 + uint64(n)
			s.hub.put(context.Background(), b)
		}
	}
	waitEvents(t, n, v)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.most > 1024 {
		t.Errorf("%d events, %d bytes on average, the largest %d: want at most 1 KB each", len(v.got), v.bytes/len(v.got), v.most)
	}
	t.Logf("%d events, %d bytes on average, the largest %d", len(v.got), v.bytes/len(v.got), v.most)
}
