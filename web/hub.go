package web

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/render"
)

// Board is one port's latest unit, as /api/boards and the page's events carry it: the
// KV value's fields (the result and when it came), the port's state, and the
// addresses of its picture and game record. The unit itself stays in the hub: an
// event is what changed (a few hundred bytes), not the picture (~9 KB), which the
// page fetches once by an address that never changes, so a browser or a proxy can
// cache it.
type Board struct {
	Port    string `json:"port"`
	Problem string `json:"problem,omitempty"`
	Seq     uint64 `json:"seq"`
	Line    int64  `json:"line,omitempty"`
	Answer  string `json:"answer"`
	Error   string `json:"error,omitempty"`
	Time    string `json:"time,omitempty"`
	// Board is othello's position after the command, as Q prints it.
	Board []string `json:"board,omitempty"`
	// Revision is the KV revision the board came with; 0 for a port known only by
	// its state.
	Revision uint64 `json:"revision"`
	// Picture is /pictures/<port>/<revision>-<hash>.svg; empty when the unit has none (an
	// error, or a result published by hand, kept without its unit).
	Picture string `json:"picture,omitempty"`
	// SGF is /pictures/<port>/<revision>-<hash>.sgf, for the problems that have a game
	// record.
	SGF string `json:"sgf,omitempty"`
	// State is the port's device state, when the daemon has told it.
	State *bus.PortState `json:"state,omitempty"`
	// Game is who plays at the port's table in the round loaded (games.go).
	Game *Game `json:"game,omitempty"`

	// unit is the unit's text, drawn only when its picture is asked for.
	unit []byte
	// game is its game record's game info: the unit's players, club and date.
	game render.Game
}

// shown is a port as the hub holds it: its board, the board's event encoded once
// (for every viewer, and for each new viewer's first screen), and its latest
// pictures.
type shown struct {
	board *Board
	// event is the board's event as every viewer was sent it: with its game only
	// when the game differs from the port's previous event's (eventBoard).
	event []byte
	// full is the board's event with its game, or "game":null: a new stream's
	// first screen, which must not leave a tile the game of an earlier stream.
	// It is event itself when that says the game, else made from it when a
	// stream first asks (first), not for every result.
	full []byte
	// pictures are the port's last keptPictures units that have one, oldest first.
	pictures []*picture
	// stateOnly: the port is known by its state alone (no board yet), counted in
	// the hub's stateTiles.
	stateOnly bool
}

// Bounds of the ports known by their state alone (no board yet): a club's, and
// the whole page's. A state names a port the page has not seen otherwise, and
// each would be a tile for good: a club's daemon tells the states of the ports it
// reads (a few, 64 at most in the bounds above), the hub those it saw in a club's
// stream. Past a bound a new port's state is not shown until the port has a board.
const (
	maxClubStateTiles = 512
	maxStateTiles     = 4096
)

// keptPictures is how many of a port's latest units keep their picture's address
// answering: a page that reads an event just as the next unit comes still finds
// the picture it names.
const keptPictures = 4

// hub owns the boards and the event streams' subscribers: one goroutine, fed with
// closures, so nothing else touches its maps.
type hub struct {
	do   chan func()
	done chan struct{} // closed when run has returned

	ports map[string]*shown
	// games are the ports' games let out (games.go), shown on their tiles; a
	// delayed port's waits for its first board, as its state does.
	games map[string]*Game
	// clients are the event streams, each with what it follows (the zero filter:
	// every port).
	clients map[chan []byte]filter
	// batch is the events since the last flush, framed, for the streams of every
	// port (all of them: batched only while there is one); flushed each flushEvery
	// as one chunk that all those streams share. A league's 1,600 events a second
	// would otherwise be 1,600 sends to each of them, and as many writes.
	batch []byte
	all   int // streams of every port
	// dropped counts the streams dropped for lagging clientBuffer events behind.
	dropped atomic.Uint64
	// pics are the pictures kept, by club ("" on a club's own page), and
	// picBytes their cost in all: bounded per club and in all (pictures.go).
	pics     map[string]*clubPictures
	picBytes int
	// stateTiles are the ports known by their state alone, by club ("" on a club's
	// own page), stateTotal all of them.
	stateTiles map[string]int
	stateTotal int
	// pending are the latest states of delayed ports that have no tile yet, shown
	// with their first board; counted with the stateTiles.
	pending map[string]*bus.PortState
}

// clientBuffer is how many chunks a slow page may lag before it is dropped: events
// of its port, or for a page of every port the batches of flushEvery (6.4 s of
// them). The page reconnects by itself and gets every board again. The batches are
// shared: all the lagging pages together hold at most clientBuffer of them.
const clientBuffer = 64

func newHub() *hub {
	return &hub{do: make(chan func()), done: make(chan struct{}), ports: map[string]*shown{}, clients: map[chan []byte]filter{},
		games: map[string]*Game{},
		pics:  map[string]*clubPictures{}, stateTiles: map[string]int{},
		pending: map[string]*bus.PortState{}}
}

// run serves the hub until ctx ends; then every subscriber's channel is closed.
func (h *hub) run(ctx context.Context) {
	defer close(h.done)
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	var flushing <-chan time.Time // the timer's channel while a batch waits
	for {
		select {
		case f := <-h.do:
			f()
			if len(h.batch) > 0 && flushing == nil {
				flush.Reset(flushEvery)
				flushing = flush.C
			}
		case <-flushing:
			flushing = nil
			h.flushBatch()
		case <-ctx.Done():
			for c := range h.clients {
				close(c)
			}
			h.clients = nil
			return
		}
	}
}

// call runs f in the hub's goroutine and waits for it; it gives up, false, when
// ctx ends before the hub takes f. Once taken, f runs at once and is waited for
// whatever ctx says: given up then, what f wrote would be read while it writes it,
// and a stream it subscribed would be held by nobody, never dropped and outside
// the viewers' bounds. The hub's closures never block, so the wait is short.
func (h *hub) call(ctx context.Context, f func()) bool {
	done := make(chan struct{})
	select {
	case h.do <- func() { f(); close(done) }:
	case <-ctx.Done():
		return false
	case <-h.done:
		return false
	}
	<-done
	return true
}

// broadcast hands an encoded event of port to every stream that follows it (its
// games: before and after the event), and to the batch of the streams of every
// port.
func (h *hub) broadcast(port string, data []byte, games ...*Game) {
	for c, f := range h.clients {
		if f.matches(port, games...) {
			h.send(c, data)
		}
	}
	if h.all > 0 {
		h.batch = append(h.batch, data...)
	}
}

// flushBatch hands the batch to every stream of every port, as one chunk.
func (h *hub) flushBatch() {
	if len(h.batch) == 0 {
		return
	}
	chunk := h.batch
	h.batch = nil // the streams hold chunk: never written again
	for c, f := range h.clients {
		if f.every() {
			h.send(c, chunk)
		}
	}
}

// send hands a stream its data; a stream whose buffer is full is dropped, so no
// viewer holds up the others.
func (h *hub) send(c chan []byte, data []byte) {
	select {
	case c <- data:
	default:
		h.forget(c)
		h.dropped.Add(1)
	}
}

// forget closes a stream's channel and forgets it.
func (h *hub) forget(c chan []byte) {
	if h.clients[c].every() {
		h.all--
	}
	delete(h.clients, c)
	close(c)
}

// show makes b the port's board and tells every viewer, encoding it once; was
// is the game the port had, when b changes it. The event says b's game only when
// the port is new or its game differs from its last event's: every stream that
// follows the port was told that one, in its first screen or in the event that
// changed it (a stream of a player follows a port from the event whose game
// names the player: filter.matches).
func (h *hub) show(s *shown, b *Board, was ...*Game) {
	said := s.board != nil && sameGame(s.board.Game, b.Game)
	s.board = b
	if said {
		s.event, s.full = encode(event{Type: "board", Board: &eventBoard{Board: b}}), nil
	} else {
		s.event = encode(event{Type: "board", Board: &eventBoard{Board: b, Game: &b.Game}})
		s.full = s.event
	}
	h.broadcast(b.Port, s.event, append(was, b.Game)...)
}

// first is the port's event for a new stream's first screen: its board with its
// game, or "game":null.
func (s *shown) first() []byte {
	if s.full == nil {
		s.full = withGame(s.event, s.board.Game)
	}
	return s.full
}

// put replaces a port's board, keeping the state the port had. b's picture and
// game record are given addresses here, by its revision, and drawn only when asked.
func (h *hub) put(ctx context.Context, b *Board) {
	h.call(ctx, func() {
		s := h.ports[b.Port]
		if s == nil {
			s = &shown{}
			h.ports[b.Port] = s
		}
		h.uncountState(b.Port, s)
		if st, ok := h.pending[b.Port]; ok {
			// A delayed port's first board: the state it had waits no more.
			delete(h.pending, b.Port)
			h.uncount(clubOf(b.Port))
			if b.State == nil {
				b.State = st
			}
		}
		if s.board != nil && b.State == nil {
			b.State = s.board.State
		}
		b.Game = h.games[b.Port]
		if b.unit != nil && b.Error == "" && b.Revision != 0 {
			name := pictureName(b.Problem, b.unit, b.Revision)
			b.Picture = "/pictures/" + b.Port + "/" + name + ".svg"
			if render.HasSGF(b.Problem) {
				b.SGF = "/pictures/" + b.Port + "/" + name + ".sgf"
			}
			p := &picture{port: b.Port, problem: b.Problem, seq: b.Seq, revision: b.Revision, name: name, unit: b.unit, game: b.game}
			s.pictures = append(s.pictures, p)
			h.keep(p)
			if n := len(s.pictures) - keptPictures; n > 0 {
				for _, q := range s.pictures[:n] {
					h.unkeep(q)
				}
				s.pictures = slices.Delete(s.pictures, 0, n)
			}
			h.boundPictures(clubOf(b.Port))
		}
		h.show(s, b)
	})
}

func (h *hub) remove(ctx context.Context, port string) {
	h.call(ctx, func() {
		if s, ok := h.ports[port]; ok {
			h.uncountState(port, s)
			for _, q := range s.pictures {
				h.unkeep(q)
			}
			delete(h.ports, port)
			h.broadcast(port, encode(event{Type: "remove", Port: port}), h.games[port])
		}
	})
}

// state records a port's device state; a port seen only so far gets an empty tile,
// within the bounds of such tiles. A port of a delayed club (held) gets none: the
// tile would show at once that a table has just started, which the delay hides;
// its state waits for the port's first board, which the delay lets out (put).
// From then on its states are shown as they come: a link state is the club's
// link to the hub, not the table's play, and the table was shown already.
func (h *hub) state(ctx context.Context, st bus.PortState, held bool) {
	h.call(ctx, func() {
		s := h.ports[st.Port]
		if s == nil && held {
			if _, ok := h.pending[st.Port]; ok || h.count(clubOf(st.Port)) {
				h.pending[st.Port] = &st
			}
			return
		}
		if s == nil {
			if !h.count(clubOf(st.Port)) {
				return
			}
			s = &shown{stateOnly: true}
			h.ports[st.Port] = s
		}
		b := s.board
		if b != nil && b.State != nil && *b.State == st {
			return // the periodic repeat of a state already known
		}
		// A board is never changed once shown: its event is encoded, and a request
		// may be reading it.
		nb := &Board{Port: st.Port, Game: h.games[st.Port]}
		if b != nil {
			c := *b
			nb = &c
		}
		nb.State = &st
		h.show(s, nb)
	})
}

// count counts a port of club in the ports known by their state alone (a tile,
// or a delayed port's pending state); false: past a bound, not counted.
func (h *hub) count(club string) bool {
	if h.stateTiles[club] >= maxClubStateTiles || h.stateTotal >= maxStateTiles {
		return false
	}
	h.stateTiles[club]++
	h.stateTotal++
	return true
}

// uncount counts a port of club out of the ports known by their state alone.
func (h *hub) uncount(club string) {
	if h.stateTiles[club]--; h.stateTiles[club] <= 0 {
		delete(h.stateTiles, club)
	}
	h.stateTotal--
}

// uncountState counts port's tile out of the ports known by their state alone: it
// has a board now, or is gone.
func (h *hub) uncountState(port string, s *shown) {
	if !s.stateOnly {
		return
	}
	s.stateOnly = false
	h.uncount(clubOf(port))
}

// snapshot returns the boards f follows (every board for the zero filter), by
// port name.
func (h *hub) snapshot(ctx context.Context, f filter) []*Board {
	var out []*Board
	h.call(ctx, func() {
		for port, s := range h.ports {
			if f.every() || f.matches(port, s.board.Game) {
				out = append(out, s.board)
			}
		}
	})
	slices.SortFunc(out, func(a, b *Board) int {
		switch {
		case a.Port < b.Port:
			return -1
		case a.Port > b.Port:
			return 1
		}
		return 0
	})
	return out
}

func (h *hub) board(ctx context.Context, port string) *Board {
	var b *Board
	h.call(ctx, func() {
		if s := h.ports[port]; s != nil {
			b = s.board
		}
	})
	return b
}

// picture returns the picture of a port's unit of that name, if the hub still
// holds it.
func (h *hub) picture(ctx context.Context, port, name string) *picture {
	var p *picture
	h.call(ctx, func() {
		if s := h.ports[port]; s != nil {
			for _, q := range s.pictures {
				if q.name == name {
					p = q
				}
			}
		}
	})
	return p
}

// subscribe returns a channel of events, preceded by every board as it is now (or
// only port's, when port is not ""), so a page that reconnects misses nothing. The
// boards' events are the ones encoded when they came.
func (h *hub) subscribe(ctx context.Context, f filter) (chan []byte, bool) {
	var c chan []byte
	ok := h.call(ctx, func() {
		c = make(chan []byte, clientBuffer+1)
		if !f.every() {
			var first []byte
			for port, s := range h.ports {
				if f.matches(port, s.board.Game) {
					first = append(first, s.first()...)
				}
			}
			if first != nil {
				c <- first
			}
		} else {
			// The streams of every port first get what came before this one's
			// boards, which already show it.
			h.flushBatch()
			var first []byte
			for _, s := range h.ports {
				first = append(first, s.first()...)
			}
			if first != nil {
				c <- first
			}
			h.all++
		}
		h.clients[c] = f
	})
	return c, ok
}

func (h *hub) unsubscribe(c chan []byte) {
	// The hub may have stopped or dropped c already; either way it is forgotten.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	h.call(ctx, func() {
		if _, ok := h.clients[c]; ok {
			h.forget(c)
		}
	})
}
