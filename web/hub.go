package web

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/goclub/scoreboard/bus"
)

// Board is one port's latest unit, as /api/boards and the page's events carry it: the
// KV value's fields (the result, the unit and when it came), the port's state, and
// the picture.
type Board struct {
	Port    string          `json:"port"`
	Problem string          `json:"problem,omitempty"`
	Seq     uint64          `json:"seq"`
	Line    int             `json:"line,omitempty"`
	Answer  string          `json:"answer"`
	Error   string          `json:"error,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Unit    string          `json:"unit,omitempty"`
	Time    string          `json:"time,omitempty"`
	// Board is othello's position after the command, as Q prints it.
	Board []string `json:"board,omitempty"`
	// Revision is the KV revision the board came with; 0 for a port known only by
	// its state.
	Revision uint64 `json:"revision"`
	// SVG is the picture of the unit; empty when the unit has none (an error).
	SVG string `json:"svg,omitempty"`
	// State is the port's device state, when the daemon has told it.
	State *bus.PortState `json:"state,omitempty"`
}

// event is one message of the page's event stream.
type event struct {
	Type  string `json:"type"` // "board", or "remove" (the key was deleted)
	Board *Board `json:"board,omitempty"`
	Port  string `json:"port,omitempty"`
}

// hub owns the boards and the event streams' subscribers: one goroutine, fed with
// closures, so nothing else touches its maps.
type hub struct {
	do   chan func()
	done chan struct{} // closed when run has returned

	boards  map[string]*Board
	clients map[chan []byte]struct{}
}

// clientBuffer is how many events a slow page may lag before it is dropped; the
// page reconnects by itself and gets every board again.
const clientBuffer = 64

func newHub() *hub {
	return &hub{do: make(chan func()), done: make(chan struct{}), boards: map[string]*Board{}, clients: map[chan []byte]struct{}{}}
}

// run serves the hub until ctx ends; then every subscriber's channel is closed.
func (h *hub) run(ctx context.Context) {
	defer close(h.done)
	for {
		select {
		case f := <-h.do:
			f()
		case <-ctx.Done():
			for c := range h.clients {
				close(c)
			}
			h.clients = nil
			return
		}
	}
}

// call runs f in the hub's goroutine and waits for it, or gives up when ctx ends.
func (h *hub) call(ctx context.Context, f func()) bool {
	done := make(chan struct{})
	select {
	case h.do <- func() { f(); close(done) }:
	case <-ctx.Done():
		return false
	case <-h.done:
		return false
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

func (h *hub) broadcast(ev event) {
	data, err := json.Marshal(ev)
	if err != nil {
		return // only strings, numbers and raw JSON that came in as JSON
	}
	for c := range h.clients {
		select {
		case c <- data:
		default:
			delete(h.clients, c)
			close(c)
		}
	}
}

// put replaces a port's board, keeping the state the port had.
func (h *hub) put(ctx context.Context, b *Board) {
	h.call(ctx, func() {
		if old := h.boards[b.Port]; old != nil && b.State == nil {
			b.State = old.State
		}
		h.boards[b.Port] = b
		h.broadcast(event{Type: "board", Board: b})
	})
}

func (h *hub) remove(ctx context.Context, port string) {
	h.call(ctx, func() {
		if _, ok := h.boards[port]; ok {
			delete(h.boards, port)
			h.broadcast(event{Type: "remove", Port: port})
		}
	})
}

// state records a port's device state; a port seen only so far gets an empty tile.
func (h *hub) state(ctx context.Context, st bus.PortState) {
	h.call(ctx, func() {
		b := h.boards[st.Port]
		if b != nil && b.State != nil && *b.State == st {
			return // the periodic repeat of a state already known
		}
		nb := &Board{Port: st.Port}
		if b != nil {
			c := *b
			nb = &c
		}
		nb.State = &st
		h.boards[st.Port] = nb
		h.broadcast(event{Type: "board", Board: nb})
	})
}

// snapshot returns every board, by port name.
func (h *hub) snapshot(ctx context.Context) []*Board {
	var out []*Board
	h.call(ctx, func() {
		for _, b := range h.boards {
			out = append(out, b)
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
	h.call(ctx, func() { b = h.boards[port] })
	return b
}

// subscribe returns a channel of events, preceded by every board as it is now, so
// a page that reconnects misses nothing.
func (h *hub) subscribe(ctx context.Context) (chan []byte, bool) {
	var c chan []byte
	ok := h.call(ctx, func() {
		c = make(chan []byte, clientBuffer+len(h.boards))
		for _, b := range h.boards {
			if data, err := json.Marshal(event{Type: "board", Board: b}); err == nil {
				c <- data
			}
		}
		h.clients[c] = struct{}{}
	})
	return c, ok
}

func (h *hub) unsubscribe(c chan []byte) {
	// The hub may have stopped or dropped c already; either way it is forgotten.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	h.call(ctx, func() {
		if _, ok := h.clients[c]; ok {
			delete(h.clients, c)
			close(c)
		}
	})
}
