package web

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxDelay bounds a page's delay: tournaments delay a broadcast by minutes (15 at
// most, as chess broadcasts do); a day is far beyond any, and within what the
// history keeps by default (/api/history looks back from the delay).
const MaxDelay = 24 * time.Hour

// CheckDelay says what is wrong with a page's delay, or nil.
func CheckDelay(d time.Duration) error {
	if d < 0 || d > MaxDelay {
		return fmt.Errorf("%v: want 0 (live) to %v, such as 15m", d, MaxDelay)
	}
	return nil
}

// Delays is how long the page holds a unit back before anyone may see it: the
// page's own delay, and on a league hub's page a club's own, by its name (the
// first token of a port key <club>.<port>). A nil *Delays is a live page. One
// Delays serves one page (its changes wake that page's delay stage).
type Delays struct {
	page  time.Duration
	clubs atomic.Pointer[map[string]time.Duration]
	// listed is a league hub's clubs (SetLeague), by name; nil: any club's port is
	// taken (a page told no list).
	listed atomic.Pointer[map[string]bool]
	// changed wakes the delay stages (the boards' and the games') when SetClubs
	// changed the clubs' delays, so a shortened delay lets out at once what is old
	// enough now.
	changed [2]chan struct{}
}

// NewDelays returns the delays of a page: page for every port, but the ports of a
// club named in clubs (on a league hub's page).
func NewDelays(page time.Duration, clubs map[string]time.Duration) *Delays {
	d := &Delays{page: page, changed: [2]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}}
	d.SetClubs(clubs)
	return d
}

// SetClubs replaces the clubs' own delays (the hub's [[club]] tables, read again
// on SIGHUP). It applies at once: a held unit is let out by its new delay, and
// the history's URLs are gated by it from the next request on. A unit already
// shown stays shown when a delay grows.
func (d *Delays) SetClubs(clubs map[string]time.Duration) {
	if d == nil {
		return
	}
	c := maps.Clone(clubs)
	d.clubs.Store(&c)
	for _, c := range d.changed {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// SetLeague sets a league hub's page's clubs, every [[club]] table's name, and the
// delays of those that have their own (as SetClubs). The page then shows, and
// answers an address of, a port of a listed club only: a state of any other, or
// an address with another spelling of a club's name (a_b for a-b, whose streams'
// names are one), is no port of this page.
func (d *Delays) SetLeague(names []string, delays map[string]time.Duration) {
	if d == nil {
		return
	}
	listed := make(map[string]bool, len(names))
	for _, n := range names {
		listed[n] = true
	}
	d.listed.Store(&listed)
	d.SetClubs(delays)
}

// Listed says whether club is one of the page's: a club of the league's list, or
// any club when the page has no list.
func (d *Delays) Listed(club string) bool {
	if d == nil {
		return true
	}
	l := d.listed.Load()
	return l == nil || (*l)[club]
}

// League says whether the page is a league hub's: it was told its clubs.
func (d *Delays) League() bool { return d != nil && d.listed.Load() != nil }

// Clubs are a league hub's page's clubs, sorted; none on a club's page.
func (d *Delays) Clubs() []string {
	if !d.League() {
		return nil
	}
	return slices.Sorted(maps.Keys(*d.listed.Load()))
}

// Page is the page's own delay.
func (d *Delays) Page() time.Duration {
	if d == nil {
		return 0
	}
	return d.page
}

// Club is a club's delay: its own, else the page's.
func (d *Delays) Club(club string) time.Duration {
	if d == nil {
		return 0
	}
	if v, ok := (*d.clubs.Load())[club]; ok {
		return v
	}
	return d.page
}

// Port is a port key's delay: a league hub's <club>.<port> has its club's.
func (d *Delays) Port(port string) time.Duration {
	if k := splitPortKey(port); k.club != "" {
		return d.Club(k.club)
	}
	return d.Page()
}

// differing is the clubs whose delay is not the page's, in seconds (/api/status).
func (d *Delays) differing() map[string]float64 {
	if d == nil {
		return nil
	}
	var out map[string]float64
	for club, v := range *d.clubs.Load() {
		if v != d.page {
			if out == nil {
				out = map[string]float64{}
			}
			out[club] = v.Seconds()
		}
	}
	return out
}

// WithDelays has the page hold every unit back by d (nil: live); call it before
// Run. The board bucket's values pass through the delay stage to the hub, and the
// history's URLs are gated by the same delays.
func (s *Server) WithDelays(d *Delays) {
	s.delays = d
	if d != nil {
		s.held = s.newDelayStage(s.show, d.changed[0])
		if s.decodeGame != nil {
			s.heldGames = s.newDelayStage(s.showGame, d.changed[1])
		}
	}
}

// newDelayStage is a delay stage that lets its values out to out: the boards', or
// the games'.
func (s *Server) newDelayStage(out func(ctx context.Context, port string, rev uint64, value []byte, del bool), changed chan struct{}) *delayStage {
	return &delayStage{s: s, out: out, changed: changed, ports: map[string]*heldPort{}, clubBytes: map[string]int{}, wake: make(chan struct{}, 1)}
}

// cutoff is the newest store time a port's unit may have to be shown now, and
// whether the port is delayed at all.
func (s *Server) cutoff(port string) (time.Time, bool) {
	d := s.delays.Port(port)
	return time.Now().Add(-d), d > 0
}

// Bounds of what the delay stage holds for a port: a unit every second for 15
// minutes is 900 values, so a port reaches these only when it floods. Beyond them
// the newest held value is replaced by the one that comes (coalesced): the values
// held before keep their order and their times, the port's latest is always shown
// at its own time, and only units in the middle of the flood are never shown.
const (
	maxHeld      = 4096
	maxHeldBytes = 8 << 20
	// A club's ports together, and the whole page's, hold at most these: 64 ports
	// of one club would otherwise hold half a gigabyte. A club's bound is four
	// ports' floods at once; the page's, eight clubs'.
	maxHeldClubBytes = 32 << 20
	maxHeldPageBytes = 256 << 20
)

// delayStage sits between the board bucket's watch (follow) and the hub: a
// value reaches the hub once its store time in the bucket (the server's clock, not
// the club's) plus its port's delay is past; until then the hub shows the port's
// previous value. A port's values are held in their order, raw (decoded when let
// out, so a held board costs its bytes). Values are let out under mu, so a value
// taken at once (nothing held for its port, old enough) cannot pass one the timer
// lets out; the hub never calls back here.
type delayStage struct {
	s *Server
	// out takes a value let out: a board to the hub (Server.show), or a game.
	out   func(ctx context.Context, port string, rev uint64, value []byte, del bool)
	mu    sync.Mutex
	ports map[string]*heldPort
	// clubBytes are the bytes held by each club's ports ("" on a club's own page),
	// total all of them.
	clubBytes map[string]int
	total     int
	wake      chan struct{} // a port's first held value
	changed   chan struct{} // the delays changed (Delays.changed)
	start     sync.Once
}

// heldPort is a port's held values, oldest first, and the newest revision taken
// (held or shown), so a watch started again, which replays the bucket's values,
// shows nothing twice and nothing older.
type heldPort struct {
	held  []heldValue
	bytes int
	last  uint64
}

type heldValue struct {
	rev    uint64
	stored time.Time
	value  []byte // nil for a delete
	del    bool
}

// board takes a value or a delete of the board bucket's watch: at once when its
// port is live (as without a delay: no timer, no copy), else held until old enough.
func (s *Server) board(ctx context.Context, e jetstream.KeyValueEntry) {
	del := e.Operation() != jetstream.KeyValuePut
	if s.held == nil {
		s.show(ctx, e.Key(), e.Revision(), e.Value(), del)
		return
	}
	s.held.take(ctx, heldValue{rev: e.Revision(), stored: e.Created(), value: e.Value(), del: del}, e.Key())
}

// show hands a value let out to the hub: decoded now, or a delete.
func (s *Server) show(ctx context.Context, port string, rev uint64, value []byte, del bool) {
	if del {
		s.hub.remove(ctx, port)
		return
	}
	b, err := decodeBoard(port, value)
	if err != nil {
		s.log.Warn().Err(err).Str("port", port).Uint64("revision", rev).Msg("board value skipped")
		return
	}
	b.Revision = rev
	s.hub.put(ctx, b)
}

func (d *delayStage) take(ctx context.Context, v heldValue, port string) {
	d.start.Do(func() { go d.run(ctx) })
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.ports[port]
	if p == nil {
		p = &heldPort{}
		d.ports[port] = p
	}
	// A watch started again replays the latest value of each port: taken already.
	// (A lower revision is a bucket made anew, whose values are new.)
	if v.rev == p.last {
		return
	}
	p.last = v.rev
	if len(p.held) == 0 && !time.Now().Before(v.stored.Add(d.s.delays.Port(port))) {
		d.out(ctx, port, v.rev, v.value, v.del)
		return
	}
	if n := len(p.held); n > 0 && (n >= maxHeld || p.bytes+len(v.value) > maxHeldBytes) {
		d.dropNewest(port, p)
	}
	d.makeRoom(port, len(v.value))
	p.held = append(p.held, v)
	d.count(port, p, len(v.value))
	if len(p.held) == 1 {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// clubOf is the club of a port key, "" on a club's own page.
func clubOf(port string) string { return splitPortKey(port).club }

// count adds n bytes held (or, negative, let out) to port p's, its club's and the
// page's.
func (d *delayStage) count(port string, p *heldPort, n int) {
	club := clubOf(port)
	p.bytes += n
	d.total += n
	if d.clubBytes[club] += n; d.clubBytes[club] <= 0 {
		delete(d.clubBytes, club)
	}
}

// dropNewest forgets port p's newest held value (coalesced into the one that
// comes): the values before it keep their order and times.
func (d *delayStage) dropNewest(port string, p *heldPort) {
	n := len(p.held)
	d.count(port, p, -len(p.held[n-1].value))
	p.held[n-1] = heldValue{}
	p.held = p.held[:n-1]
}

// makeRoom drops held values until n more bytes for port fit its club's bound and
// the page's: the newest of port's own first, else of its club's port that holds
// most; for the page's, of the club that holds most. A club that floods is cut at
// its own bound and, past the page's, before any club that holds less.
func (d *delayStage) makeRoom(port string, n int) {
	club := clubOf(port)
	for d.clubBytes[club]+n > maxHeldClubBytes {
		if !d.dropIn(port, club) {
			break
		}
	}
	for d.total+n > maxHeldPageBytes {
		most, by := club, d.clubBytes[club]
		for c, b := range d.clubBytes {
			if b > by {
				most, by = c, b
			}
		}
		if !d.dropIn(port, most) {
			break
		}
	}
}

// dropIn drops the newest held value of port, if it is of club and holds one, else
// of club's port that holds most; false: club holds nothing.
func (d *delayStage) dropIn(port, club string) bool {
	if p := d.ports[port]; p != nil && clubOf(port) == club && len(p.held) > 0 {
		d.dropNewest(port, p)
		return true
	}
	var most string
	var mp *heldPort
	for k, p := range d.ports {
		if len(p.held) > 0 && clubOf(k) == club && (mp == nil || p.bytes > mp.bytes) {
			most, mp = k, p
		}
	}
	if mp == nil {
		return false
	}
	d.dropNewest(most, mp)
	return true
}

// run lets the held values out as they come of age, until ctx ends.
func (d *delayStage) run(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		next := d.release(ctx)
		var at <-chan time.Time
		if !next.IsZero() {
			t.Reset(time.Until(next))
			at = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-d.changed:
		case <-at:
		}
	}
}

// release lets out every held value old enough, each port's in order, and returns
// when the next one comes of age (zero: none is held).
func (d *delayStage) release(ctx context.Context) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	var next time.Time
	now := time.Now()
	for port, p := range d.ports {
		delay := d.s.delays.Port(port)
		n := 0
		for _, v := range p.held {
			due := v.stored.Add(delay)
			if now.Before(due) {
				if next.IsZero() || due.Before(next) {
					next = due
				}
				break
			}
			d.out(ctx, port, v.rev, v.value, v.del)
			d.count(port, p, -len(v.value))
			n++
		}
		if n > 0 {
			clear(p.held[:n]) // the values' bytes go now, not when the slice grows again
			p.held = p.held[n:]
		}
	}
	return next
}

// streamCutoff is cutoff for the units under prefix: the page's own, or on a
// league hub's page a club's (<prefix>.<club>).
func (s *Server) streamCutoff(prefix string) (time.Time, bool) {
	d := s.delays.Page()
	if club, ok := strings.CutPrefix(prefix, s.subj.Prefix+"."); ok {
		d = s.delays.Club(club)
	}
	return time.Now().Add(-d), d > 0
}
