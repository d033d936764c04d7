package league_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/league"
)

// TestLeagueGateHostileClubs: two clubs publish without end, twice what the gate
// takes for pressing, under a budget with room for two clubs catching up (gate.go),
// so that they hold both slots. An honest club back with a backlog still gets a slot when
// a hostile club's turn is over (gateTurn), and its backlog through, once each and
// in order; a club in play is never made to wait, and its units reach the hub
// while the hostile clubs press; neither hostile club keeps a slot much past its
// turn while another waits; and no waiting club's stream is written.
func TestLeagueGateHostileClubs(t *testing.T) {
	t.Parallel()
	const slots = 2
	maxMemory := int64(slots) * 2 * (league.IntakeMaxBytes + 8<<20)
	evil := []string{"evil1", "evil2"}
	names := append([]string{"honest", "play"}, evil...)
	h, buf := startGatedHub(t, maxMemory, names...)
	s := sampleGate(h, names)

	// The club in play, its link up and its first unit at the hub before the rest.
	_, playNC := startClub(t, h.LeafURL(), "play", "tplay")
	if err := playNC.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit 1 %d", time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the club in play's first unit at the hub", func() (bool, string) {
		n := countLeague(t, h.Conn(), "play")
		return n == 1, fmt.Sprintf("%d units", n)
	})

	// The hostile clubs: a 100 KiB unit every 100 ms each, 1 MB/s, twice what the
	// gate takes for pressing, until the end.
	stop := make(chan struct{})
	var floods sync.WaitGroup
	t.Cleanup(func() { close(stop); floods.Wait() })
	for _, c := range evil {
		_, nc := startClub(t, h.LeafURL(), c, "t"+c)
		floods.Go(func() {
			unit := []byte(strings.Repeat("z", 100<<10))
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if err := nc.Publish("scoreboard.dump.goscore.t1", unit); err != nil {
					return
				}
			}
		})
	}
	bustest.Wait(t, "both hostile clubs holding a slot", func() (bool, string) {
		got := strings.Count(buf.String(), `"club":"evil1","held"`) + strings.Count(buf.String(), `"club":"evil2","held"`)
		return got >= 2, fmt.Sprintf("%d slots given to them", got)
	})

	// The club in play: a small unit every 200 ms, its time in it.
	const played = 50
	var playing sync.WaitGroup
	playing.Go(func() {
		pace := time.NewTicker(200 * time.Millisecond)
		defer pace.Stop()
		for i := 2; i <= played; i++ {
			if err := playNC.Publish("scoreboard.dump.goscore.t1", fmt.Appendf(nil, "unit %d %d", i, time.Now().UnixNano())); err != nil {
				t.Error(err)
				return
			}
			<-pace.C
		}
	})
	// The honest club's backlog, 4 MiB of 100 KiB units, at once.
	const n, size = 40, 100 << 10
	_, honestNC := startClub(t, h.LeafURL(), "honest", "thonest")
	for i := 1; i <= n; i++ {
		if err := honestNC.Publish("scoreboard.dump.goscore.t1", sizedUnit(i, size, "x")); err != nil {
			t.Fatal(err)
		}
	}
	honestNC.Flush()
	playing.Wait()
	bustest.WaitWithin(t, 2*time.Minute, "the honest club's backlog and the club in play's units at the hub", func() (bool, string) {
		hn, pn := countLeague(t, h.Conn(), "honest"), countLeague(t, h.Conn(), "play")
		return hn == n && pn == played, fmt.Sprintf("honest %d of %d, play %d of %d", hn, n, pn, played)
	})
	says := s.end()
	t.Log(says)
	for _, c := range []string{"honest"} {
		if d := onceEach(t, h.Conn(), c, n); d != "" {
			t.Errorf("club %s: %s", c, d)
		}
	}
	if s.waited["honest"] == 0 {
		t.Errorf("the honest club never waited for a slot, the hostile ones holding both: %s", says)
	}
	if s.waited["play"] > 0 {
		t.Errorf("the club in play waited for a slot in %d readings: %s", s.waited["play"], says)
	}
	if s.writtenWaiting.Load() > 0 {
		t.Errorf("the streams of clubs waiting for a slot were written: %s", says)
	}
	// The club in play's units: each at the hub well within a hostile club's turn
	// (the first, before the hostile clubs, left out).
	lags := playLags(t, h, played)[1:]
	worst := time.Duration(0)
	for _, l := range lags {
		worst = max(worst, l)
	}
	if worst >= league.GateTurn/2 {
		t.Errorf("a unit of the club in play reached the hub %v after it was published (a hostile club's turn is %v): %v", worst, league.GateTurn, lags)
	}
	t.Logf("the club in play's %d units: at the hub %v at worst: %v", len(lags), worst, lags)
	// A hostile club's turn ends at gateTurn while another waits; the gate's look
	// comes every 250 ms, later on a loaded machine.
	var turns []string
	for line := range strings.Lines(buf.String()) {
		var l struct {
			Club    string  `json:"club"`
			Message string  `json:"message"`
			Idle    bool    `json:"idle"`
			HeldFor float64 `json:"held_for_ms"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Message != "league: intake slot given back" || !strings.HasPrefix(l.Club, "evil") {
			continue
		}
		turns = append(turns, fmt.Sprintf("%s %.0f ms", l.Club, l.HeldFor))
		if !l.Idle && time.Duration(l.HeldFor)*time.Millisecond > league.GateTurn+5*time.Second {
			t.Errorf("%s kept its slot %.0f ms, its turn %v, while another waited", l.Club, l.HeldFor, league.GateTurn)
		}
	}
	if len(turns) == 0 {
		t.Errorf("no hostile club gave its slot back, the honest club waiting: %s", says)
	}
	t.Logf("the hostile clubs' turns: %v", turns)
}

// playLags reads the club in play's units at the hub: how long after its
// publishing each was stored there (each unit carries its time).
func playLags(t *testing.T, h *league.Hub, n int) []time.Duration {
	t.Helper()
	js, _ := jetstream.New(h.Conn())
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	st, err := js.Stream(ctx, league.ClubStream("play"))
	if err != nil {
		t.Fatal(err)
	}
	var lags []time.Duration
	for seq := uint64(1); len(lags) < n; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("the club in play's stream at %d (%d read): %v", seq, len(lags), err)
		}
		var i int
		var at int64
		if _, err := fmt.Sscanf(string(m.Data), "unit %d %d", &i, &at); err != nil {
			t.Fatalf("the club in play's unit %.40q: %v", m.Data, err)
		}
		lags = append(lags, m.Time.Sub(time.Unix(0, at)).Round(time.Millisecond))
	}
	return lags
}

// TestLeagueGateRemovedClub: a club removed from the hub's clubs (SetClubs) while
// it waits for a slot leaves the line, and is given no slot after: its intake,
// parked and maybe holding units, takes no more turns from the clubs the hub has.
func TestLeagueGateRemovedClub(t *testing.T) {
	t.Parallel()
	const slots = 2
	maxMemory := int64(slots) * 2 * (league.IntakeMaxBytes + 8<<20)
	names := []string{"c0", "c1", "c2"}
	h, buf := startGatedHub(t, maxMemory, names...)
	const n, size = 40, 100 << 10
	for _, c := range names {
		_, nc := startClub(t, h.LeafURL(), c, "t"+c)
		for i := 1; i <= n; i++ {
			if err := nc.Publish("scoreboard.dump.goscore.t1", sizedUnit(i, size, "x")); err != nil {
				t.Fatal(err)
			}
		}
		nc.Flush()
	}
	var gone string
	bustest.Wait(t, "a club waiting for a slot", func() (bool, string) {
		if w := league.GateWaitingClubs(h); len(w) > 0 {
			gone = w[0]
			return true, ""
		}
		return false, "none waiting"
	})
	var kept []league.Club
	for _, c := range names {
		if c != gone {
			kept = append(kept, league.Club{Name: c, Token: "t" + c})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	if err := h.SetClubs(ctx, kept); err != nil {
		t.Fatal(err)
	}
	mark := len(buf.String())
	bustest.Wait(t, "the removed club out of the line", func() (bool, string) {
		w := league.GateWaitingClubs(h)
		return !slices.Contains(w, gone), fmt.Sprintf("waiting %v", w)
	})
	bustest.WaitWithin(t, 2*time.Minute, "the kept clubs' backlogs at the hub", func() (bool, string) {
		var short []string
		for _, c := range kept {
			if got := countLeague(t, h.Conn(), c.Name); got != n {
				short = append(short, fmt.Sprintf("%s %d of %d", c.Name, got, n))
			}
		}
		return len(short) == 0, strings.Join(short, "; ")
	})
	if after := buf.String()[mark:]; strings.Contains(after, `"club":"`+gone+`","held"`) {
		t.Errorf("club %s, removed while it waited, was given a slot after", gone)
	}
	t.Logf("removed %s while it waited; the kept clubs caught up", gone)
}
