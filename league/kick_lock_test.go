package league_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/league"
)

// flapLine is a club's line to the hub as the club's side of it behaves: a TCP
// proxy on loopback that the club cuts (every connection closed) and holds cut
// (connections refused) while it likes.
type flapLine struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
}

func newFlapLine(t *testing.T, target string) *flapLine {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &flapLine{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); l.setCut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go l.pipe(c)
		}
	}()
	return l
}

func (l *flapLine) url() string { return "nats-leaf://" + l.ln.Addr().String() }

func (l *flapLine) pipe(c net.Conn) {
	u, err := net.Dial("tcp", l.target)
	if err != nil {
		c.Close()
		return
	}
	l.mu.Lock()
	if l.cut {
		l.mu.Unlock()
		c.Close()
		u.Close()
		return
	}
	l.conns[c], l.conns[u] = true, true
	l.mu.Unlock()
	go func() { io.Copy(u, c); u.Close(); c.Close() }()
	io.Copy(c, u)
	c.Close()
	u.Close()
}

// setCut cuts the line (its connections closed, new ones refused) or lets it be.
func (l *flapLine) setCut(cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = cut
	if cut {
		for c := range l.conns {
			c.Close()
		}
		l.conns = map[net.Conn]bool{}
	}
}

// lockWaits counts the calls of an operation that takes the hub's clubs lock, and
// those that took more than slowCall.
type lockWaits struct {
	calls, slow, failed atomic.Int64
}

const slowCall = time.Second

func (w *lockWaits) time(f func() error) {
	start := time.Now()
	err := f()
	w.calls.Add(1)
	if time.Since(start) > slowCall {
		w.slow.Add(1)
	}
	if err != nil {
		w.failed.Add(1)
	}
}

func (w *lockWaits) String() string {
	return fmt.Sprintf("%d of %d over %v (%d failed)", w.slow.Load(), w.calls.Load(), slowCall, w.failed.Load())
}

// silentClub is a club's stock nats-server joined to the hub at leafURL as the
// club, with its history, that never answers the hub's asks of its history
// stream's info: its server sends them to a subscriber that keeps silent, and
// counts them (asks).
func silentClub(t *testing.T, leafURL, club, token string) (*nats.Conn, *atomic.Int64) {
	t.Helper()
	_, nc := clubLeafBefore(t, leafURL, club, token, t.TempDir(), func(ns *server.Server) {
		if err := ns.GlobalAccount().AddMapping("$JS."+club+".API.STREAM.INFO.SCOREBOARD", "silent.info"); err != nil {
			t.Fatal(err)
		}
	})
	var asks atomic.Int64
	if _, err := nc.Subscribe("silent.info", func(*nats.Msg) { asks.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	clubHistory(t, nc, 0)
	return nc, &asks
}

// TestLeagueKickSilentClubFlapping: club north, hostile, joins with its own token
// and nothing more, and never answers the hub's asks of its history stream (its
// server sends them to a subscriber that keeps silent), and flaps its link: each
// time it comes up the hub asks it (to learn which stream its source reads, or to
// set its source up again), and waits 2 s for an answer that never comes. The hub's
// clubs lock must not be held through that wait: meanwhile the clubs' links are
// read (Links: the page's list, the metrics) every 100 ms, each call in its own
// goroutine, the hub is reloaded (SetClubs, a club east added and removed in turn),
// north's intake is kicked as an idle one is, and club south links up and sends
// its units. None of those calls may wait more than 1 s; every unit of north and
// south is at the hub once.
func TestLeagueKickSilentClubFlapping(t *testing.T) {
	t.Parallel()
	const flaps = 4
	north, south := league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"}
	h, hlog := startLoggedHub(t, north, south)
	line := newFlapLine(t, strings.TrimPrefix(h.LeafURL(), "nats-leaf://"))
	line.setCut(true) // until north's silence is set up: its first link-up is asked too
	nc, asks := silentClub(t, line.url(), "north", "tn")
	line.setCut(false)

	ctx, cancel := context.WithTimeout(context.Background(), 3*bustest.Long)
	defer cancel()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var links, reloads, kicks lockWaits
	wg.Go(func() { // the page and the metrics
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			wg.Go(func() { links.time(func() error { h.Links(); return nil }) })
		}
	})
	wg.Go(func() { // SIGHUP
		east := league.Club{Name: "east", Token: "te"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			clubs := []league.Club{north, south}
			if i%2 == 0 {
				clubs = append(clubs, east)
			}
			reloads.time(func() error { return h.SetClubs(ctx, clubs) })
		}
	})

	downs := func() int { return strings.Count(hlog.String(), `"club":"north","link_up":false`) }
	var southNC *nats.Conn
	for flap := 1; flap <= flaps; flap++ {
		was := asks.Load()
		bustest.Wait(t, fmt.Sprintf("the hub asking north's stream, flap %d", flap), func() (bool, string) {
			return asks.Load() > was, fmt.Sprintf("%d asks; Links %v; reloads %v", asks.Load(), &links, &reloads)
		})
		publishUnits(t, nc, 4*flap-3, 4*flap)
		if flap == 1 {
			_, southNC = startClub(t, h.LeafURL(), "south", "ts")
		}
		publishUnits(t, southNC, 4*flap-3, 4*flap)
		if flap%2 == 0 { // as WatchLinks kicks an idle source: north asked again
			was = asks.Load()
			wg.Go(func() {
				kicks.time(func() error {
					if !league.KickIntake(ctx, h, "north") {
						return fmt.Errorf("north's intake's source not set up again")
					}
					return nil
				})
			})
			bustest.Wait(t, fmt.Sprintf("north's intake's kick asking north's stream, flap %d", flap), func() (bool, string) {
				return asks.Load() > was, fmt.Sprintf("%d asks; kicks %v", asks.Load(), &kicks)
			})
		}
		line.setCut(true)
		bustest.Wait(t, fmt.Sprintf("north's link seen down by the hub, flap %d", flap), func() (bool, string) {
			return downs() >= flap, fmt.Sprintf("%d downs logged", downs())
		})
		line.setCut(false)
	}
	close(stop)
	wg.Wait()
	n := 4 * flaps
	bustest.Wait(t, fmt.Sprintf("north's and south's %d units at the hub", n), func() (bool, string) {
		a, b := countLeague(t, h.Conn(), "north"), countLeague(t, h.Conn(), "south")
		return a == n && b == n, fmt.Sprintf("north %d, south %d", a, b)
	})
	for _, club := range []string{"north", "south"} {
		if says := onceEach(t, h.Conn(), club, n); says != "" {
			t.Errorf("%s's units at the hub: %s", club, says)
		}
	}
	setUp := strings.Count(hlog.String(), `"stream":"INTAKE_NORTH","message":"league: the club's link is up and its source was idle: set up again"`)
	t.Logf("%d flaps of north, %d asks unanswered, its intake's source set up again %d times; Links %v; reloads %v; the test's kicks of north's intake %v",
		flaps, asks.Load(), setUp, &links, &reloads, &kicks)
	if links.slow.Load()+reloads.slow.Load() > 0 || reloads.failed.Load()+kicks.failed.Load() > 0 {
		t.Fatalf("north silent and flapping (%d flaps, %d asks unanswered): Links %v; reloads %v; the test's kicks of north's intake %v",
			flaps, asks.Load(), &links, &reloads, &kicks)
	}
}

// TestLeagueKickClubRemovedWhileAsked: north's intake's source is taken off by a
// kick, which then asks north (silent) where its history stands, the clubs lock
// let go of; meanwhile the hub is reloaded without north and with it again. The
// reload leaves north's intake parked for the kick, which gives its source back
// (where it goes on from, and the club's stream it reads, are the kick's to set),
// after north is added again; north's units before and after are at the hub once
// each. A reload that gave the intake a source anew meanwhile would leave the kick
// nothing to give back (nats-server 2.15 keeps a source's position in the intake's
// store, so its units came once each even so).
func TestLeagueKickClubRemovedWhileAsked(t *testing.T) {
	t.Parallel()
	north, south := league.Club{Name: "north", Token: "tn"}, league.Club{Name: "south", Token: "ts"}
	h, hlog := startLoggedHub(t, north, south)
	nc, asks := silentClub(t, h.LeafURL(), "north", "tn")
	publishUnits(t, nc, 1, 5)
	bustest.Wait(t, "north's 5 units at the hub, its intake numbered as its history, north asked once", func() (bool, string) {
		n, st := countLeague(t, h.Conn(), "north"), intakeState(h, "north")
		return n == 5 && st.Msgs == 0 && st.LastSeq == 5 && asks.Load() >= 1, fmt.Sprintf("%d units; intake: %d units, last seq %d; %d asks", n, st.Msgs, st.LastSeq, asks.Load())
	})
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	was := asks.Load()
	kicked := make(chan bool, 1)
	go func() { kicked <- league.KickIntake(ctx, h, "north") }()
	bustest.Wait(t, "the kick asking north", func() (bool, string) {
		return asks.Load() > was, fmt.Sprintf("%d asks", asks.Load())
	})
	if err := h.SetClubs(ctx, []league.Club{south}); err != nil {
		t.Fatal(err)
	}
	if err := h.SetClubs(ctx, []league.Club{north, south}); err != nil {
		t.Fatal(err)
	}
	ok := <-kicked
	log := hlog.String()
	readded := strings.LastIndex(log, `"message":"league clubs set"`)
	given := strings.LastIndex(log, `"stream":"INTAKE_NORTH","message":"league: the club's link is up and its source was idle: set up again"`)
	bustest.Wait(t, "north's link up again", func() (bool, string) {
		up := h.Links()["north"]
		return up, fmt.Sprintf("link up %v", up)
	})
	publishUnits(t, nc, 6, 10)
	bustest.Wait(t, "north's 10 units at the hub", func() (bool, string) {
		n := countLeague(t, h.Conn(), "north")
		return n >= 10, fmt.Sprintf("%d units", n)
	})
	if says := onceEach(t, h.Conn(), "north", 10); says != "" {
		t.Errorf("north's units at the hub: %s", says)
	}
	if !ok {
		t.Fatalf("the kick of north's intake did not give its source back (the reload did, at %d of the hub's log)", readded)
	}
	if given < readded {
		t.Fatalf("north's intake's source given back at %d of the hub's log, north added again at %d: the reload came after the kick asked", given, readded)
	}
}

// TestLeagueKickSilentClubsHoldNoOne: 24 hostile clubs join at once and never
// answer the hub's asks of their history streams; the hub asks each as its link
// comes up, and again while its intake records none (learner), and waits 2 s for
// each answer. Asked one club after another inside the hub's looks, as they were,
// the 24 first asks took 23 waits of 2 s after the first: 46 s, through which no
// other club's source was looked at. Now the looks go 16 at a time (the first asks
// are the kicks of sources idle while the links were down): every silent club
// asked within 20 s of the first ask; the asks again, made while the intakes
// record nothing, run beside the looks: a round of looks ends with them under
// way; and an honest club,
// south, joining as they are asked again, has its stream's Created recorded
// within 15 s of its link coming up (its look not held), and its units once each.
func TestLeagueKickSilentClubsHoldNoOne(t *testing.T) {
	t.Parallel()
	const silent = 24
	clubs := []league.Club{{Name: "south", Token: "ts"}}
	for i := range silent {
		clubs = append(clubs, league.Club{Name: fmt.Sprintf("s%d", i), Token: fmt.Sprintf("t%d", i)})
	}
	h, _ := startLoggedHub(t, clubs...)
	line := newFlapLine(t, strings.TrimPrefix(h.LeafURL(), "nats-leaf://"))
	line.setCut(true) // until every silent club is set up: they link up together
	var mu sync.Mutex
	asked := map[string][]time.Time{}
	for _, c := range clubs[1:] {
		nc, _ := silentClub(t, line.url(), c.Name, c.Token)
		if _, err := nc.Subscribe("silent.info", func(*nats.Msg) {
			mu.Lock()
			defer mu.Unlock()
			asked[c.Name] = append(asked[c.Name], time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	line.setCut(false)
	// spread is how long after the first ask of any silent club each had been
	// asked n times (0 if not yet), and how many were.
	spread := func(n int) (time.Duration, int) {
		mu.Lock()
		defer mu.Unlock()
		var first, last time.Time
		done := 0
		for _, at := range asked {
			if first.IsZero() || at[0].Before(first) {
				first = at[0]
			}
			if len(at) >= n {
				done++
				if at[n-1].After(last) {
					last = at[n-1]
				}
			}
		}
		if done < silent {
			return 0, done
		}
		return last.Sub(first), done
	}
	bustest.Wait(t, "every silent club asked", func() (bool, string) {
		_, once := spread(1)
		return once == silent, fmt.Sprintf("%d of %d silent clubs asked", once, silent)
	})
	took, _ := spread(1)
	t.Logf("%d silent clubs, each asked within %v of the first ask", silent, took.Round(time.Millisecond))
	if took > 20*time.Second {
		t.Fatalf("%d silent clubs each asked only %v after the first ask: their 2 s waits held one another", silent, took.Round(time.Millisecond))
	}
	// A round of looks does not wait for the asks: they are made beside it.
	names := make([]string, 0, silent)
	for _, c := range clubs[1:] {
		names = append(names, c.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	// Once their sources are active again after those kicks: the round has none
	// to set up again, only asks to make.
	bustest.Wait(t, "every silent club's intake's source active", func() (bool, string) {
		idle := 0
		for _, name := range names {
			s, err := league.IntakeJS(h, name).Stream(ctx, league.IntakeStream(name))
			if err != nil || len(s.CachedInfo().Sources) != 1 {
				idle++
				continue
			}
			if a := s.CachedInfo().Sources[0].Active; a < 0 || a > time.Second {
				idle++
			}
		}
		return idle == 0, fmt.Sprintf("%d of %d idle", idle, silent)
	})
	kicked, asking := league.KickIdleSources(ctx, h, names)
	if asking == 0 {
		t.Fatalf("a round of looks at %d silent clubs whose intakes record nothing ended with none of their asks under way (each waits 2 s): it waited for them (sources set up again: %v)", silent, kicked)
	}
	t.Logf("a round of looks at %d silent clubs ended with %d asks of them under way; %d set up again", silent, asking, len(kicked))
	// South joins as the silent clubs are asked again (10 s after their first):
	// its ask waits for a slot among theirs.
	bustest.Wait(t, "a silent club asked again", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, at := range asked {
			if len(at) > 1 {
				return true, ""
			}
		}
		return false, "none asked twice"
	})
	_, south := startClub(t, h.LeafURL(), "south", "ts")
	bustest.Wait(t, "south's link up at the hub", func() (bool, string) {
		return h.Links()["south"], "down"
	})
	up := time.Now()
	bustest.Wait(t, "south's stream's Created recorded, beside the silent clubs", func() (bool, string) {
		r := recordedCreated(h, "south")
		_, err := time.Parse(time.RFC3339Nano, r)
		return err == nil, fmt.Sprintf("recorded %q", r)
	})
	recorded := time.Since(up)
	publishUnits(t, south, 1, 5)
	bustest.Wait(t, "south's 5 units at the hub", func() (bool, string) {
		n := countLeague(t, h.Conn(), "south")
		return n == 5, fmt.Sprintf("%d units", n)
	})
	if says := onceEach(t, h.Conn(), "south", 5); says != "" {
		t.Fatalf("south's units at the hub: %s", says)
	}
	mu.Lock()
	n := 0
	for _, at := range asked {
		n += len(at)
	}
	mu.Unlock()
	t.Logf("south's stream's Created recorded %v after its link came up; %d asks of the silent clubs in all", recorded.Round(time.Millisecond), n)
	if recorded > 15*time.Second {
		t.Fatalf("south's stream's Created recorded %v after its link came up, beside %d silent clubs (%d asks): its look was held", recorded.Round(time.Millisecond), silent, n)
	}
}
