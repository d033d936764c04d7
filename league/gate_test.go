package league_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/league"
)

// gateSampler reads every club's intake's room and what it holds, as the server
// has them, every 5 ms until stopped: the most intakes with their whole room at
// once, the most all intakes held at once, and the most an intake held at its
// small room. Every tenth sample it reads the clubs' streams at the hub too: what
// reached a club's stream while it had been waiting for a slot for gateWaited.
type gateSampler struct {
	samples, fullMax, heldMax, smallHeldMax, smallPressed, waitingMax atomic.Int64
	writtenWaiting, writesWaiting, waitedLooks                        atomic.Int64
	stop                                                              chan struct{}
	done                                                              sync.WaitGroup
	// waited is, for each club, in how many readings it was waiting for a slot:
	// the sampler's goroutine's until end.
	waited map[string]int
}

// gateWaited is how long a club has waited before nothing more may reach its
// stream: its room is closed at the gate's next look (250 ms), and what its intake
// took before then reaches its stream within milliseconds, a second or so on a
// loaded machine under -race.
const gateWaited = 2 * time.Second

func sampleGate(h *league.Hub, clubs []string) *gateSampler {
	s := &gateSampler{stop: make(chan struct{}), waited: map[string]int{}}
	waitingSince := map[string]time.Time{}
	last := map[string]uint64{}
	s.done.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-s.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if i%10 == 0 {
				waiting := league.GateWaitingClubs(h)
				bytes, err := league.StreamBytes(h, clubs)
				now := time.Now()
				for _, c := range clubs {
					if !slices.Contains(waiting, c) || err != nil {
						delete(waitingSince, c)
						continue
					}
					s.waited[c]++
					if _, ok := waitingSince[c]; !ok {
						waitingSince[c] = now
					} else if now.Sub(waitingSince[c]) >= gateWaited {
						s.waitedLooks.Add(1)
						if bytes[c] > last[c] {
							s.writtenWaiting.Add(int64(bytes[c] - last[c]))
							s.writesWaiting.Add(1)
						}
					}
				}
				if err == nil {
					last = bytes
				}
			}
			var full, held int64
			for _, c := range clubs {
				room, n := league.IntakeRoom(h, c)
				held += n
				switch room {
				case league.IntakeMaxBytes:
					full++
				case league.GateSmallRoom:
					if n > s.smallHeldMax.Load() {
						s.smallHeldMax.Store(n)
					}
					if n >= league.GateSmallRoom/2 {
						s.smallPressed.Add(1)
					}
				}
			}
			s.samples.Add(1)
			if w := int64(league.GateWaiting(h)); w > s.waitingMax.Load() {
				s.waitingMax.Store(w)
			}
			if full > s.fullMax.Load() {
				s.fullMax.Store(full)
			}
			if held > s.heldMax.Load() {
				s.heldMax.Store(held)
			}
		}
	})
	return s
}

func (s *gateSampler) end() string {
	close(s.stop)
	s.done.Wait()
	return fmt.Sprintf("%d samples: at most %d clubs waiting for a slot, %d intakes with their whole room at once; all intakes held at most %d KiB at once; an intake at its small room held at most %d KiB (pressing in %d samples); %d KiB reached the streams of clubs waiting for %v or more, in %d of %d readings",
		s.samples.Load(), s.waitingMax.Load(), s.fullMax.Load(), s.heldMax.Load()>>10, s.smallHeldMax.Load()>>10, s.smallPressed.Load(),
		s.writtenWaiting.Load()>>10, gateWaited, s.writesWaiting.Load(), s.waitedLooks.Load())
}

// startGatedHub starts a hub of clubs (each's token "t"+its name) whose server has
// maxMemory of JetStream memory, its links watched and its gate run; its log (at
// debug) is returned, and its gate's and kicks' lines are in the test's when it fails.
func startGatedHub(t *testing.T, maxMemory int64, names ...string) (*league.Hub, *proctest.Buffer) {
	clubs := make([]league.Club, len(names))
	for i, c := range names {
		clubs[i] = league.Club{Name: c, Token: "t" + c}
	}
	var buf proctest.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := league.Start(ctx, league.Options{
		Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", StoreDir: t.TempDir(), Clubs: clubs, MaxMemory: maxMemory,
	}, zerolog.New(&buf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	t.Cleanup(func() {
		if t.Failed() {
			var says []string
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, "slot") || strings.Contains(l, "stalled") || strings.Contains(l, "set up again") {
					says = append(says, l)
				}
			}
			t.Logf("the hub's gate and kicks:\n%s", strings.Join(says, "\n"))
		}
	})
	wctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go h.WatchLinks(wctx, 200*time.Millisecond)
	go h.RunGate(wctx)
	return h, &buf
}

// TestLeagueGateCatchUp: six clubs catch up at once under a budget with room for
// two (gate.go). At most two intakes have their whole room at any moment; the
// streams of the clubs waiting for a slot are not written; what all the intakes
// hold stays within that; every
// club's units reach its stream at the hub, once each, in order; and a unit larger
// than the small room gets through too (its club waits for a slot).
func TestLeagueGateCatchUp(t *testing.T) {
	t.Parallel()
	const nClubs, slots = 6, 2
	maxMemory := int64(slots) * 2 * (league.IntakeMaxBytes + 8<<20)
	if got := league.GateSlots(maxMemory); got != slots {
		t.Fatalf("the gate of a hub of %d MiB of JetStream memory has %d slots; want %d", maxMemory>>20, got, slots)
	}
	names := make([]string, nClubs)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
	}
	h, buf := startGatedHub(t, maxMemory, names...)
	for _, c := range names {
		if room, _ := league.IntakeRoom(h, c); room != league.GateSmallRoom {
			t.Fatalf("club %s's intake starts with a room of %d bytes; want the small room, %d", c, room, league.GateSmallRoom)
		}
	}
	s := sampleGate(h, names)
	// Each club's backlog, 4 MiB of 100 KiB units, published at once.
	const n, size = 40, 100 << 10
	var wg sync.WaitGroup
	for _, c := range names {
		_, nc := startClub(t, h.LeafURL(), c, "t"+c)
		wg.Go(func() {
			for i := 1; i <= n; i++ {
				if err := nc.Publish("scoreboard.dump.goscore.t1", sizedUnit(i, size, "x")); err != nil {
					t.Error(err)
					return
				}
			}
			nc.Flush()
			// Then one larger than the small room.
			if err := nc.Publish("scoreboard.dump.goscore.t1", sizedUnit(n+1, 3*league.GateSmallRoom, "y")); err != nil {
				t.Error(err)
			}
			nc.Flush()
		})
	}
	wg.Wait()
	bustest.WaitWithin(t, 2*time.Minute, "every club's backlog at the hub", func() (bool, string) {
		var short []string
		for _, c := range names {
			if got := countLeague(t, h.Conn(), c); got != n+1 {
				short = append(short, fmt.Sprintf("%s %d of %d", c, got, n+1))
			}
		}
		return len(short) == 0, strings.Join(short, "; ")
	})
	says := s.end()
	t.Log(says)
	for _, c := range names {
		if d := onceEach(t, h.Conn(), c, n+1); d != "" {
			t.Errorf("club %s: %s", c, d)
		}
	}
	if s.fullMax.Load() > slots {
		t.Errorf("more intakes than the budget's %d slots had their whole room at once: %s", slots, says)
	}
	if s.fullMax.Load() == 0 || s.waitingMax.Load() == 0 || s.waitedLooks.Load() == 0 {
		t.Errorf("no club was given a slot for its backlog, or none waited for one: %s", says)
	}
	// A club waiting for a slot has no room: its stream is not written, and lets its
	// write cache go (gate.go).
	if s.writtenWaiting.Load() > 0 {
		t.Errorf("the streams of clubs waiting for a slot were written: %s", says)
	}
	// An intake let down to its small room may hold what it took before, until its
	// stream takes it; one given no slot holds its small room and a unit at most.
	bound := int64(slots*league.IntakeMaxBytes + (nClubs-slots)*(league.GateSmallRoom+3*league.GateSmallRoom))
	if s.heldMax.Load() > bound {
		t.Errorf("the intakes held more than %d KiB at once: %s", bound>>10, says)
	}
	if !strings.Contains(buf.String(), "intake gate") {
		t.Errorf("the hub did not log its gate: %s", buf.String())
	}
}
