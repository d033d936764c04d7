package league

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Clubs catching up at once, under a memory budget (BENCHMARKS.md, "Memory
// budget"). A club's units reach its stream at the hub through its intake, in
// memory; a club with a backlog (back after a cut of its link or of the hub) fills
// its intake, and its stream, written without a pause, holds its last block in a
// write cache. Measured in a heap profile at the peak of 50 clubs catching up at
// once: 8 MiB of write buffers a stream (two of nats-server's 4 MiB block buffers)
// and 3 MiB an intake, 94 % of the live heap; 200 clubs so took the hub to
// 2.0-2.6 GiB, four times a 512 MiB budget, until they had caught up.
//
// So, when the budget cannot hold every club catching up at once, the clubs take
// turns: at most gate.slots intakes have their whole room (intakeMaxBytes); a club
// waiting for a slot has none, so that its stream is not written and lets its write
// cache go; the others, the clubs in play, have gateSmallRoom, which holds their
// units in play (a few KiB each), not a backlog. A club whose intake is found
// pressing against its small room (holding half of it), or whose source is stalled
// with its intake empty (its next unit larger than the small room: kickIntake),
// waits for a slot, in turn. nats-server's source tries a unit its intake refused
// again from that unit on, 2 s later (sourceConsumerRetryThreshold): nothing is
// dropped, the backlog waits at the club, and so do its units in play, which come
// after it in the club's order anyway. With a small room for the clubs waiting too
// (7a0d98a to 116f105), each of them wrote its stream every 2 s, and the 200
// clubs' top-up in the realistic benchmark held 968 MB of block buffers (1,284 MiB
// RSS under a 512 MiB budget); with no room for them, the hub's peak was 473 MiB.
// Without a budget, or on an external server, or with room for every club, every
// intake has its whole room, as before.

// gateSmallRoom is the room of the intake of a club in play, neither waiting nor
// with a slot: many units of play, none of a backlog's megabytes.
const gateSmallRoom = 256 << 10

// gatePressing is what an intake holds for its club to be catching up: half of its
// small room (a club in play holds a unit or two of a few KiB for a moment).
const gatePressing = gateSmallRoom / 2

// gateClubCost is what a club catching up costs the hub (the profile above): its
// intake's room and its stream's two block buffers.
const gateClubCost = intakeMaxBytes + 2*(4<<20)

// gateLook is how often the gate looks at every intake: the accounts' usage and
// leaf bytes, in process, no API call. A look at 200 clubs takes 161-188 µs
// (BenchmarkGateLook), 0.06-0.08 % of a core at this pace.
const gateLook = 250 * time.Millisecond

// gateIdle is how long a club with a slot may press no more before it gives the
// slot back: longer than nats-server's retry of a refused source (2 s), so that a
// slot given is not taken back before the club's next try.
const gateIdle = 3 * time.Second

// gateTurn is how long a club keeps a slot while others wait.
const gateTurn = 15 * time.Second

// gate gives the clubs' intakes their rooms. Its state is RunGate's goroutine's,
// but for what want reads and kickIntake's goroutine adds to, under mu.
type gate struct {
	slots int // intakes with their whole room at once

	mu      sync.Mutex
	waiting []string // clubs waiting for a slot, in turn
	active  bool     // more clubs than slots: the small rooms are in force

	// Under mu too, as want reads them.
	open map[string]time.Time // club -> its slot's start
	had  map[string]time.Time // club -> when it last gave a slot back

	// The goroutine's own.
	busy map[string]time.Time // club -> when it last pressed
	recv map[string]int64     // each account's bytes in from its leaf, at the last look
}

// newGate is the gate of a hub whose server's JetStream memory is maxMemory (a
// quarter of memory.budget), nil without one: the clubs catching up have half of
// it.
func newGate(maxMemory int64) *gate {
	if maxMemory <= 0 {
		return nil
	}
	return &gate{slots: max(2, int(maxMemory/2/gateClubCost)), open: map[string]time.Time{}, had: map[string]time.Time{},
		busy: map[string]time.Time{}, recv: map[string]int64{}}
}

// room is the room an account made now starts with, when the hub has clubs in all.
func (g *gate) room(clubs int) int64 {
	if g == nil || clubs <= g.slots {
		return intakeMaxBytes
	}
	return gateSmallRoom
}

// want puts club in the waiting list, if the small rooms are in force and it has no
// slot, and says whether it did or it was there: its source stalled, its intake
// empty, is waiting for room, which setting the source up again would not give. A
// club that has a slot, or had one in the last two gateIdle, stalls for another
// reason: want says false, and the source is set up again.
func (g *gate) want(club string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.active {
		return false
	}
	if !slices.Contains(g.waiting, club) {
		if _, ok := g.open[club]; ok || time.Since(g.had[club]) < 2*gateIdle {
			return false
		}
		g.waiting = append(g.waiting, club)
	}
	return true
}

// waitingNow is how many clubs wait for a slot.
func (g *gate) waitingNow() int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}

// accountRoom is what an intake's account may hold: its room, and nothing else.
func accountRoom(room int64) map[string]server.JetStreamAccountLimits {
	return map[string]server.JetStreamAccountLimits{
		"": {MaxMemory: room, MaxStore: -1, MaxStreams: 1, MaxConsumers: -1},
	}
}

// RunGate gives the clubs' intakes their rooms until ctx ends (gate, above). A hub
// without a budget, or on an external server, has nothing to do.
func (h *Hub) RunGate(ctx context.Context) {
	g := h.gate
	if g == nil || h.ns == nil {
		return
	}
	tick := time.NewTicker(gateLook)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		g.look(time.Now(), h.gatedAccounts(), h)
	}
}

// gatedAccounts are the accounts of the clubs the hub has now: a club removed
// (SetClubs) keeps its account, its intake parked and maybe holding units, but
// takes no more turns.
func (h *Hub) gatedAccounts() map[string]*server.Account {
	h.mu.Lock()
	defer h.mu.Unlock()
	accounts := make(map[string]*server.Account, len(h.clubs))
	for _, c := range h.clubs {
		if a, ok := h.accounts[c.Name]; ok {
			accounts[c.Name] = a
		}
	}
	return accounts
}

// look is one look at every intake: who presses, who gives a slot back, who is
// given one, and each intake's room from that.
func (g *gate) look(now time.Time, accounts map[string]*server.Account, h *Hub) {
	clubs := make([]string, 0, len(accounts))
	for c := range accounts {
		clubs = append(clubs, c)
	}
	slices.Sort(clubs)
	active := len(clubs) > g.slots
	g.mu.Lock()
	was := g.active
	g.active = active
	if !active {
		g.waiting = g.waiting[:0]
		clear(g.open)
	}
	g.mu.Unlock()
	if active != was {
		ev := h.log.Info()
		if active {
			ev = ev.Str("what", "clubs catching up at once take turns for the intakes' room, so the hub keeps to its memory budget")
		} else {
			ev = ev.Str("what", "every club's intake has its whole room")
		}
		ev.Int("clubs", len(clubs)).Int("slots", g.slots).Msg("league: intake gate")
	}
	// The room each intake has and what it holds, from one reading of its account.
	rooms := make(map[string]int64, len(clubs))
	held := make(map[string]int64, len(clubs))
	for _, c := range clubs {
		rooms[c], held[c] = intakeUsage(accounts[c])
	}
	if !active {
		for _, c := range clubs {
			setRoom(h, c, accounts[c], rooms[c], intakeMaxBytes)
		}
		return
	}
	// A club presses when its intake holds half its small room, or its link
	// brought that much since the last look: an intake fills to its room and its
	// stream takes it within a few milliseconds, between two looks.
	in := g.received(h, clubs)
	for _, c := range clubs {
		if held[c] >= gatePressing || in[c] >= gatePressing {
			g.busy[c] = now
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// Slots given back: the club caught up, or its turn is over and others wait. A
	// club that has not pressed since its slot began keeps it for a turn: its
	// source's next try (2 s after the last, and its consumer made again across
	// the club's link) came 3 s late on a loaded machine, after the slot.
	// A club removed gives its slot back and leaves the line.
	for c, since := range g.open {
		_, known := accounts[c]
		pressed := g.busy[c].After(since)
		idle := pressed && now.Sub(g.busy[c]) >= gateIdle || !pressed && now.Sub(since) >= gateTurn
		over := now.Sub(since) >= gateTurn && len(g.waiting) > 0
		if !known || idle || over {
			delete(g.open, c)
			g.had[c] = now
			h.log.Debug().Str("club", c).Bool("idle", idle).Bool("pressed", pressed).Dur("held_for_ms", now.Sub(since)).Msg("league: intake slot given back")
			if known && over && !idle {
				g.waiting = append(g.waiting, c)
			}
		}
	}
	g.waiting = slices.DeleteFunc(g.waiting, func(c string) bool { _, known := accounts[c]; return !known })
	// Clubs pressing against their small room wait, in turn.
	for _, c := range clubs {
		if _, ok := g.open[c]; !ok && held[c] >= gatePressing && !slices.Contains(g.waiting, c) {
			g.waiting = append(g.waiting, c)
		}
	}
	for len(g.open) < g.slots && len(g.waiting) > 0 {
		c := g.waiting[0]
		g.waiting = g.waiting[1:]
		g.open[c] = now
		h.log.Debug().Str("club", c).Int64("held", held[c]).Int("waiting", len(g.waiting)).Msg("league: intake slot given")
	}
	for _, c := range clubs {
		room := int64(gateSmallRoom)
		if _, ok := g.open[c]; ok {
			room = intakeMaxBytes
		} else if slices.Contains(g.waiting, c) {
			room = 0
		}
		setRoom(h, c, accounts[c], rooms[c], room)
	}
}

// intakeUsage is the room of the intake in acc (its account's memory limit, the
// default tier's, as accountRoom sets it) and what it holds, as the server has them
// now.
func intakeUsage(acc *server.Account) (room, held int64) {
	u := acc.JetStreamUsage()
	return u.Limits.MaxMemory, int64(u.Memory)
}

// received is the bytes each club's link brought into its account since the last
// look (the intake's deliveries, most of it).
func (g *gate) received(h *Hub, clubs []string) map[string]int64 {
	names := make([]string, len(clubs))
	for i, c := range clubs {
		names[i] = clubAccount(c)
	}
	in := make(map[string]int64, len(clubs))
	st, err := h.ns.AccountStatz(&server.AccountStatzOptions{Accounts: names, IncludeUnused: true})
	if err != nil {
		return in
	}
	for _, a := range st.Accounts {
		c, ok := strings.CutPrefix(a.Account, "club-")
		if !ok || a.Received.Leafs == nil {
			continue
		}
		in[c] = a.Received.Leafs.Bytes - g.recv[c]
		g.recv[c] = a.Received.Leafs.Bytes
	}
	return in
}

// setRoom sets club's intake's room, if it is not that already (was). A room
// lowered below what the intake holds refuses its next unit until its stream has
// taken them; a room of 0 refuses every unit.
func setRoom(h *Hub, club string, acc *server.Account, was, room int64) {
	if was == room {
		return
	}
	if err := acc.UpdateJetStreamLimits(accountRoom(room)); err != nil {
		h.log.Warn().Err(err).Str("club", club).Int64("room", room).Msg("league: the club's intake's room could not be set; trying again")
	}
}
